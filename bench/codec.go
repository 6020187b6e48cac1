package bench

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // the fallback codec, registered by its init
	"google.golang.org/grpc/mem"
)

// gogoMessage is what etcd's gogo-generated API messages implement: a size and
// a marshal into a buffer of that size, and an unmarshal that merges into the
// message without resetting it.
type gogoMessage interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
	Unmarshal([]byte) error
}

// gogoCodec encodes etcd's messages with their own generated code. gRPC's proto
// codec reaches gogo messages through protobuf-go's legacy wrapper, which costs
// reflection and an allocation per call; this calls the generated methods
// directly, marshals into pooled buffers and unmarshals without a copy. The
// wire format is the same protobuf; anything else goes to gRPC's codec.
type gogoCodec struct{ fallback encoding.CodecV2 }

func newGogoCodec() gogoCodec { return gogoCodec{fallback: encoding.GetCodecV2("proto")} }

// Name is "proto": the server sees the usual content type.
func (gogoCodec) Name() string { return "proto" }

func (c gogoCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(gogoMessage)
	if !ok {
		return c.fallback.Marshal(v)
	}
	n := m.Size()
	pool := mem.DefaultBufferPool()
	buf := pool.Get(n)
	if _, err := m.MarshalToSizedBuffer((*buf)[:n]); err != nil {
		pool.Put(buf)
		return nil, fmt.Errorf("marshal %T: %w", v, err)
	}
	// gRPC frees the buffer (back to the pool) once it is written.
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

// Unmarshal merges data into v: the caller resets a reused message first.
// Generated code copies every bytes and string field, so v keeps no reference
// to gRPC's buffers.
func (c gogoCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(gogoMessage)
	if !ok {
		return c.fallback.Unmarshal(data, v)
	}
	if len(data) == 1 {
		return m.Unmarshal(data[0].ReadOnlyData())
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return m.Unmarshal(buf.ReadOnlyData())
}
