package bundle

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"

	"github.com/etcdperf/etcdperf/results"
)

// FuzzRead feeds Read arbitrary bytes, seeded with a real bundle: it must fail
// cleanly, never panic.
func FuzzRead(f *testing.F) {
	path := filepath.Join(f.TempDir(), "b.tar.gz")
	b := &Bundle{Manifest: Manifest{Kind: KindLive, CreatedAt: time.Unix(0, 0).UTC()},
		Data: Data{Members: []MemberStatus{{Name: "m0", Error: "status: refused"}}},
		Run:  &results.Run{Version: results.Version, Command: "bundle", Valid: true}}
	if err := Write(path, b); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{0x1f, 0x8b})
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Read(bytes.NewReader(data))
	})
}

// FuzzPrefixOf checks that a prefix never shows a hashed key's segments.
func FuzzPrefixOf(f *testing.F) {
	for _, k := range []string{"/registry/pods/a", "a", "", "//", "/a//b/c"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		p := prefixOf(key, true)
		for _, r := range p {
			if r != '/' && !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
				t.Fatalf("prefixOf(%q) = %q shows more than hashes", key, p)
			}
		}
	})
}

// FuzzReadWAL feeds ReadWAL a segment of arbitrary bytes, seeded with a real
// segment written by etcd's wal package: it must stop at what it cannot read,
// never panic.
func FuzzReadWAL(f *testing.F) {
	dir := f.TempDir()
	w, err := wal.Create(zap.NewNop(), filepath.Join(dir, "wal"), []byte("meta"))
	if err != nil {
		f.Fatal(err)
	}
	put, _ := (&pb.InternalRaftRequest{Put: &pb.PutRequest{Key: []byte("k"), Value: []byte("v")}}).Marshal()
	ents := []raftpb.Entry{{Term: 1, Index: 1, Type: raftpb.EntryConfChange}, {Term: 2, Index: 2}, {Term: 2, Index: 3, Data: put}}
	if err := w.Save(raftpb.HardState{Term: 2, Commit: 3}, ents); err != nil {
		f.Fatal(err)
	}
	w.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	seg, err := os.ReadFile(names[0])
	if err != nil {
		f.Fatal(err)
	}
	// The preallocated segment is 64 MiB of mostly zeros: the records lead it.
	f.Add(seg[:4096])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, "0000000000000000-0000000000000000.wal"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		if w, err := ReadWAL(d); err == nil && w.LastIndex < w.FirstIndex {
			t.Fatalf("last index %d before first %d", w.LastIndex, w.FirstIndex)
		}
	})
}

// FuzzEntryKind classifies arbitrary entry data without panicking.
func FuzzEntryKind(f *testing.F) {
	put, _ := (&pb.InternalRaftRequest{Put: &pb.PutRequest{Key: []byte("k")}}).Marshal()
	f.Add(int32(0), put)
	f.Add(int32(1), []byte{})
	f.Add(int32(0), []byte{0xff, 0x01})
	f.Fuzz(func(t *testing.T, typ int32, data []byte) {
		if EntryKind(raftpb.EntryType(typ), data) == "" {
			t.Fatal("no kind")
		}
	})
}

// FuzzParseSnapName reads any file name without panicking, and accepts only
// names it can write back.
func FuzzParseSnapName(f *testing.F) {
	for _, s := range []string{"0000000000000002-0000000000000010.snap", "0000000000000010.snap.db", "db", "x.snap.broken"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		s, ok := ParseSnapName(name)
		if !ok {
			return
		}
		want := fmt.Sprintf("%016x-%016x.snap", s.Term, s.Index)
		if s.DB {
			want = fmt.Sprintf("%016x.snap.db", s.Index)
		}
		if !strings.EqualFold(want, name) {
			t.Fatalf("ParseSnapName(%q) = %+v", name, s)
		}
	})
}
