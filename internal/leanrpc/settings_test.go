package leanrpc

import (
	"context"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"golang.org/x/net/http2"
)

// TestMaxConcurrentStreams: no more calls are open than the server's
// SETTINGS_MAX_CONCURRENT_STREAMS; the others wait for a slot and then go.
func TestMaxConcurrentStreams(t *testing.T) {
	addr, peers := listenPeers(t, http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 2})
	c := dial(t, addr)
	p := <-peers
	const calls = 5
	errs := make(chan error, calls)
	for range calls {
		go func() {
			errs <- c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{}, &pb.PutResponse{})
		}()
	}
	var open []uint32
	for answered := 0; answered < calls; {
		for len(open) < 2 && answered+len(open) < calls {
			id, _, _, err := p.request()
			if err != nil {
				t.Fatal(err)
			}
			open = append(open, id)
		}
		// Two are open: a third must not come (a slow client sends none
		// either, so this cannot fail for the wrong reason).
		_ = p.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if id, _, _, err := p.request(); err == nil {
			t.Fatalf("stream %d opened with streams %v open, over the limit of 2", id, open)
		}
		_ = p.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		p.reply(open[0], nil)
		open = open[1:]
		answered++
	}
	for range calls {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestMidStreamSettings: SETTINGS that arrive while a request waits for its
// window apply to it at once (a larger initial window opens the stream's,
// a larger frame size makes larger frames), are acknowledged, and a header
// table size of 0 makes the next request's header block start with a table
// size update to 0.
func TestMidStreamSettings(t *testing.T) {
	addr, peers := listenPeers(t, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1000})
	c := dial(t, addr)
	p := <-peers
	done := make(chan error, 1)
	value := make([]byte, 50_000)
	go func() {
		done <- c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{Value: value}, &pb.PutResponse{})
	}()
	f, err := p.next(http2.FrameData)
	if err != nil {
		t.Fatal(err)
	}
	got := len(f.(*http2.DataFrame).Data())
	if got != 1000 {
		t.Fatalf("first DATA frame %d bytes, want the window's 1000", got)
	}
	id := f.Header().StreamID
	// The stream's window grows by 99,000 and the connection's is opened: the
	// rest goes without another update, in frames up to 32 KiB.
	if err := p.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 100_000},
		http2.Setting{ID: http2.SettingMaxFrameSize, Val: 32 << 10},
		http2.Setting{ID: http2.SettingHeaderTableSize, Val: 0}); err != nil {
		t.Fatal(err)
	}
	if err := p.fr.WriteWindowUpdate(0, 1<<20); err != nil {
		t.Fatal(err)
	}
	acked, largest := false, 0
	for {
		f, err := p.fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && sf.IsAck() {
			acked = true
		}
		if df, ok := f.(*http2.DataFrame); ok {
			got += len(df.Data())
			largest = max(largest, len(df.Data()))
			if df.StreamEnded() {
				break
			}
		}
	}
	if want := 5 + (&pb.PutRequest{Value: value}).Size(); got != want || largest <= 16384 || largest > 32<<10 {
		t.Errorf("the request came in %d bytes, frames up to %d; want %d bytes in frames over 16 KiB and up to 32 KiB", got, largest, want)
	}
	p.reply(id, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !acked {
		if _, err := p.next(http2.FrameSettings); err != nil {
			t.Errorf("no SETTINGS ack: %v", err)
		}
	}
	go func() {
		done <- c.Invoke(context.Background(), "/etcdserverpb.KV/Put", &pb.PutRequest{}, &pb.PutResponse{})
	}()
	f, err = p.next(http2.FrameHeaders)
	if err != nil {
		t.Fatal(err)
	}
	if b := f.(*http2.HeadersFrame).HeaderBlockFragment(); len(b) == 0 || b[0] != 0x20 {
		t.Errorf("the header block after SETTINGS_HEADER_TABLE_SIZE 0 starts % x, want a table size update to 0 (20)", b[:min(len(b), 4)])
	}
	p.dec.SetMaxDynamicTableSize(0)
	if _, err := p.dec.Write(f.(*http2.HeadersFrame).HeaderBlockFragment()); err != nil {
		t.Errorf("decoding the next header block: %v", err)
	}
	if _, err := p.next(http2.FrameData); err != nil {
		t.Fatal(err)
	}
	p.reply(f.Header().StreamID, nil)
	if err := <-done; err != nil {
		t.Error(err)
	}
}
