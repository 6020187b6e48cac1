package leanrpc

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// BenchmarkPut is the hot path: concurrent unary puts on one connection to a
// server that allocates nothing (echoServer), so allocs/op is the client's;
// with keepalive off and on (etcdctl's 2 s, which becomes 10 s).
func BenchmarkPut(b *testing.B) {
	addr := echoServer(b)
	for _, ka := range []time.Duration{0, 2 * time.Second} {
		b.Run(fmt.Sprintf("keepalive=%s", ka), func(b *testing.B) {
			o := opts()
			o.KeepaliveTime = ka
			c, err := Dial(context.Background(), []string{addr}, o)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			benchPut(b, c)
		})
	}
}

func benchPut(b *testing.B, c *Conn) {
	req := &pb.PutRequest{Key: []byte("/etcdperf/bench"), Value: []byte("value")}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(p *testing.PB) {
		var resp pb.PutResponse
		for p.Next() {
			resp.Reset()
			if err := c.Invoke(ctx, "/etcdserverpb.KV/Put", req, &resp); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// echoServer answers every request with an empty message and an OK status,
// from bytes encoded once: a gRPC server of no cost and no allocations.
func echoServer(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	_ = enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
	head := append([]byte(nil), hb.Bytes()...)
	hb.Reset()
	_ = enc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: "0"})
	trail := append([]byte(nil), hb.Bytes()...)
	// Later blocks repeat the fields from the dynamic table: encode them once more.
	hb.Reset()
	_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	_ = enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "application/grpc"})
	head2 := append([]byte(nil), hb.Bytes()...)
	hb.Reset()
	_ = enc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: "0"})
	trail2 := append([]byte(nil), hb.Bytes()...)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			b.Cleanup(func() { conn.Close() })
			go serveEcho(conn, [2][]byte{head, head2}, [2][]byte{trail, trail2})
		}
	}()
	return ln.Addr().String()
}

func serveEcho(conn net.Conn, head, trail [2][]byte) {
	br := bufio.NewReaderSize(conn, 32<<10)
	bw := bufio.NewWriterSize(conn, 32<<10)
	pre := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(br, pre); err != nil {
		return
	}
	fr := http2.NewFramer(bw, br)
	fr.SetReuseFrames()
	if fr.WriteSettings() != nil || bw.Flush() != nil {
		return
	}
	first, received := true, uint32(0)
	var msg [5]byte
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
			}
		case *http2.DataFrame:
			received += f.Header().Length
			if received > 1<<14 {
				_ = fr.WriteWindowUpdate(0, received)
				received = 0
			}
			if f.StreamEnded() {
				i := 1
				if first {
					i, first = 0, false
				}
				id := f.StreamID
				_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: head[i], EndHeaders: true})
				_ = fr.WriteData(id, false, msg[:])
				_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: trail[i], EndHeaders: true, EndStream: true})
			}
		}
		if br.Buffered() == 0 && bw.Flush() != nil {
			return
		}
	}
}

// BenchmarkWriteRequest is a put's HEADERS and DATA written into the write
// buffer, by hand as send does and by http2.Framer's WriteHeaders and
// WriteData, which copy each frame into a buffer of their own first: why send
// keeps its hand-written frames (see writeFrameHeader).
func BenchmarkWriteRequest(b *testing.B) {
	block := make([]byte, 12)    // a cached header block and a grpc-timeout
	msg := make([]byte, 5+8+256) // a framed PutRequest of make compare's size
	t := &transport{bw: bufio.NewWriterSize(io.Discard, bufSize)}
	t.wfr = http2.NewFramer(t.bw, nil)
	for _, tc := range []struct {
		name  string
		write func(id uint32)
	}{
		{"hand", func(id uint32) {
			t.writeFrameHeader(len(block), http2.FrameHeaders, http2.FlagHeadersEndHeaders, id)
			t.bw.Write(block)
			t.writeFrameHeader(len(msg), http2.FrameData, http2.FlagDataEndStream, id)
			t.bw.Write(msg)
		}},
		{"framer", func(id uint32) {
			_ = t.wfr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndHeaders: true})
			_ = t.wfr.WriteData(id, true, msg)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				tc.write(uint32(2*i + 1))
			}
		})
	}
}
