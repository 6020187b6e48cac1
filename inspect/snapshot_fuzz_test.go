package inspect

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.etcd.io/etcd/server/v3/storage/schema"
)

// tinyDB writes a small etcd-shaped bbolt file: a key bucket with a key written
// twice and a deleted key, and a meta bucket with a compaction revision.
func tinyDB(tb testing.TB) []byte {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "tiny.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		tb.Fatal(err)
	}
	revKey := func(main int64, tombstone bool) []byte {
		b := mvcc.RevToBytes(mvcc.Revision{Main: main}, mvcc.NewRevBytes())
		if tombstone {
			b = append(b, 't')
		}
		return b
	}
	err = db.Update(func(tx *bolt.Tx) error {
		kb, err := tx.CreateBucket(schema.Key.Name())
		if err != nil {
			return err
		}
		meta, err := tx.CreateBucket(schema.Meta.Name())
		if err != nil {
			return err
		}
		for _, e := range []struct {
			rev  int64
			tomb bool
			kv   mvccpb.KeyValue
		}{
			{2, false, mvccpb.KeyValue{Key: []byte("/a/x"), Value: []byte("one"), CreateRevision: 2, ModRevision: 2, Version: 1}},
			{3, false, mvccpb.KeyValue{Key: []byte("/a/x"), Value: []byte("three"), CreateRevision: 2, ModRevision: 3, Version: 2}},
			{4, false, mvccpb.KeyValue{Key: []byte("/b"), Value: []byte("v"), CreateRevision: 4, ModRevision: 4, Version: 1}},
			{5, true, mvccpb.KeyValue{Key: []byte("/b")}},
		} {
			v, err := e.kv.Marshal()
			if err != nil {
				return err
			}
			if err := kb.Put(revKey(e.rev, e.tomb), v); err != nil {
				return err
			}
		}
		return meta.Put(schema.FinishedCompactKeyName, revKey(1, false))
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestInspectTinySnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	if err := os.WriteFile(path, tinyDB(t), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := ReadSnapshot(path, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if r.Total != (Totals{Keys: 1, KeyBytes: 4, ValueBytes: 5}) || r.Revision != 5 {
		t.Errorf("total %+v at revision %d, want the one live key /a/x at 5", r.Total, r.Revision)
	}
	if h := r.History; h.CompactRevision != 1 || h.OldRevisions != 1 || h.DeletedKeys != 1 || h.RevisionsSinceCompaction != 4 {
		t.Errorf("history %+v", h)
	}
}

// FuzzInspectSnapshot feeds damaged files to the snapshot reader: every input must
// end in a report or an ErrBadSnapshot error, never a crash.
func FuzzInspectSnapshot(f *testing.F) {
	good := tinyDB(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte("not a database"))
	f.Add([]byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "in.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := ReadSnapshot(path, testOptions())
		if err != nil && !errors.Is(err, ErrBadSnapshot) {
			t.Fatalf("error without ErrBadSnapshot: %v", err)
		}
		if err == nil && (r.Total.Keys < 0 || r.DB.SizeBytes <= 0) {
			t.Fatalf("nonsense report: %+v", r)
		}
	})
}

func FuzzInspectRevKey(f *testing.F) {
	f.Add(mvcc.RevToBytes(mvcc.Revision{Main: 7, Sub: 1}, mvcc.NewRevBytes()))
	f.Add(append(mvcc.RevToBytes(mvcc.Revision{Main: 9}, mvcc.NewRevBytes()), 't'))
	f.Add([]byte("short"))
	f.Fuzz(func(t *testing.T, b []byte) {
		main, sub, tomb, err := decodeRevKey(b)
		if err != nil {
			return
		}
		// What decodes must agree with etcd's own decoder.
		if got := mvcc.BytesToRev(b); got.Main != main || got.Sub != sub || mvcc.IsTombstone(b) != tomb {
			t.Fatalf("decodeRevKey(%x) = %d,%d,%v; mvcc says %+v tombstone %v", b, main, sub, tomb, got, mvcc.IsTombstone(b))
		}
	})
}
