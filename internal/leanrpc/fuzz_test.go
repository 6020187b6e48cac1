package leanrpc

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// serverBytes is what a server writes after its SETTINGS, frame by frame.
func serverBytes(write func(fr *http2.Framer, block func(...string) []byte)) []byte {
	var out, hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	block := func(fields ...string) []byte {
		hbuf.Reset()
		for i := 0; i+1 < len(fields); i += 2 {
			_ = enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
		}
		return append([]byte(nil), hbuf.Bytes()...)
	}
	write(http2.NewFramer(&out, nil), block)
	return out.Bytes()
}

// FuzzResponse feeds a connection arbitrary server frames after the
// handshake, while a call waits on stream 1: the call must end (with a
// result or an error) and nothing may panic.
func FuzzResponse(f *testing.F) {
	resp, _ := (&pb.PutResponse{Header: &pb.ResponseHeader{Revision: 9}}).Marshal()
	body := append([]byte{0, 0, 0, 0, byte(len(resp))}, resp...)
	f.Add(serverBytes(func(fr *http2.Framer, block func(...string) []byte) {
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":status", "200", "content-type", "application/grpc"), EndHeaders: true})
		_ = fr.WriteData(1, false, body)
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block("grpc-status", "0"), EndHeaders: true, EndStream: true})
	}))
	f.Add(serverBytes(func(fr *http2.Framer, block func(...string) []byte) {
		b := block(":status", "200", "grpc-status", "3", "grpc-message", "bad%20key%zz")
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:2], EndStream: true})
		_ = fr.WriteContinuation(1, true, b[2:])
	}))
	f.Add(serverBytes(func(fr *http2.Framer, block func(...string) []byte) {
		_ = fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}, http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 0})
		_ = fr.WritePing(false, [8]byte{})
		_ = fr.WriteWindowUpdate(1, 10)
		_ = fr.WriteRSTStream(1, http2.ErrCodeRefusedStream)
		_ = fr.WriteGoAway(0, http2.ErrCodeEnhanceYourCalm, []byte("calm"))
	}))
	f.Fuzz(func(t *testing.T, frames []byte) {
		cli, srv := net.Pipe()
		defer cli.Close()
		go func() {
			defer srv.Close()
			pre := make([]byte, len(http2.ClientPreface))
			if _, err := io.ReadFull(srv, pre); err != nil {
				return
			}
			// net.Pipe has no buffer: read the client's frames while writing.
			fr := http2.NewFramer(srv, srv)
			requested := make(chan struct{})
			go func() {
				for {
					f, err := fr.ReadFrame()
					if err != nil {
						return
					}
					if f.Header().Type == http2.FrameData && f.Header().Flags.Has(http2.FlagDataEndStream) {
						close(requested)
						_, _ = io.Copy(io.Discard, srv)
						return
					}
				}
			}()
			if fr.WriteSettings() != nil {
				return
			}
			select {
			case <-requested:
			case <-time.After(5 * time.Second):
				return
			}
			_, _ = srv.Write(frames)
		}()
		o := opts()
		o.MaxRecvMsgSize = 1 << 16
		tr, err := newTransport(cli, "pipe", "http", &o)
		if err != nil {
			return
		}
		tr.start()
		defer tr.close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = tr.invoke(ctx, "/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("k")}, &pb.PutResponse{})
		if ctx.Err() != nil {
			t.Fatal("the call did not end with the connection")
		}
	})
}

// FuzzDecodeMessage: decoding never panics, and leaves a message without
// escapes as it is.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{"", "plain", "%41%zz%", "100%", "%E2%9C%93 ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := decodeMessage(s)
		if !strings.Contains(s, "%") && got != s {
			t.Errorf("decodeMessage(%q) = %q, want it unchanged", s, got)
		}
		if len(got) > len(s) {
			t.Errorf("decodeMessage(%q) = %q, longer than its input", s, got)
		}
	})
}
