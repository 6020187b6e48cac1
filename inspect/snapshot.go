package inspect

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/server/v3/storage/schema"
)

// openTimeout bounds the wait for the file lock: a db file that a running etcd holds
// (exclusively) is not readable, and waiting longer will not change that.
const openTimeout = 2 * time.Second

// ErrBadSnapshot marks a file that is not a readable etcd snapshot.
var ErrBadSnapshot = errors.New("not a readable etcd snapshot")

// keyState is what the key bucket holds for one user key: its latest revision and
// how many entries (revisions and tombstones) and bytes its history takes.
type keyState struct {
	valueSize, create, mod, version int64
	tombstone                       bool
	entries, bytes, lastBytes       int64
}

// ReadSnapshot inspects an etcd snapshot file (`etcdctl snapshot save`, or a
// member's member/snap/db). The file is opened read-only with bbolt and never
// written; a snapshot's sha256 trailer, when present, is verified first.
func ReadSnapshot(path string, o Options) (r *Result, err error) {
	start := time.Now()
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("snapshot %s: %w: it is a folder", path, ErrBadSnapshot)
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("snapshot %s: %w: the file is empty", path, ErrBadSnapshot)
	}
	dataSize, err := verifyTrailer(path, fi.Size())
	if err != nil {
		return nil, err
	}
	// checkBolt below keeps bbolt inside the file; as a second line of defence, a
	// fault on the memory map (SIGBUS) or a panic in bbolt becomes an error.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("snapshot %s: %w: corrupt database (%v)", path, ErrBadSnapshot, p)
		}
	}()
	if err := checkBolt(path, dataSize); err != nil {
		if errors.Is(err, errNotBolt) {
			return nil, fmt.Errorf("snapshot %s: %w: %v", path, ErrBadSnapshot, err)
		}
		return nil, fmt.Errorf("snapshot %s: %w: corrupt database: %v", path, ErrBadSnapshot, err)
	}
	// The free pages give the in-use size, as etcd computes it for Status.
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: openTimeout, PreLoadFreelist: true})
	if err != nil {
		return nil, openErr(path, err)
	}
	defer db.Close()

	r = &Result{Source: "snapshot", Snapshot: path, InspectedAt: fi.ModTime().UTC(), KeyPrefix: o.KeyPrefix}
	agg := NewAggregator(o.Depth, o.Top, o.nearLimit())
	err = db.View(func(tx *bolt.Tx) error {
		r.DB.SizeBytes = tx.Size()
		r.DB.InUseBytes = tx.Size() - int64(db.Stats().FreePageN)*int64(db.Info().PageSize)
		meta, kb := tx.Bucket(schema.Meta.Name()), tx.Bucket(schema.Key.Name())
		if meta == nil || kb == nil {
			return fmt.Errorf("snapshot %s: %w: a bbolt database without etcd's %q and %q buckets", path, ErrBadSnapshot, schema.Meta.Name(), schema.Key.Name())
		}
		if v := meta.Get(schema.FinishedCompactKeyName); v != nil {
			main, _, _, err := decodeRevKey(v)
			if err != nil {
				return fmt.Errorf("snapshot %s: %w: meta %s: %v", path, ErrBadSnapshot, schema.FinishedCompactKeyName, err)
			}
			r.History.CompactRevision = main
		}
		keys, rev, err := readKeyBucket(kb, []byte(o.KeyPrefix))
		if err != nil {
			return fmt.Errorf("snapshot %s: %w: %v", path, ErrBadSnapshot, err)
		}
		r.Revision = rev
		addKeys(agg, keys)
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.History.CurrentRevision = r.Revision
	r.History.RevisionsSinceCompaction = r.Revision - r.History.CompactRevision
	r.History.Basis = "snapshot: every revision and tombstone in the key bucket counted; bytes are key-bucket entries (revision key + KeyValue), without bbolt page overhead"
	agg.Fill(r)
	r.Values.Mode = ValuesExact
	r.Scan = ScanStats{BytesRead: dataSize, DurationS: time.Since(start).Seconds()}
	finish(r, o, clusterMetrics{})
	return r, nil
}

// verifyTrailer checks the sha256 that etcd appends to a snapshot stream (the file
// is then 32 bytes past a 512-byte multiple, the rule etcdutl snapshot restore
// uses) and returns the size of the database part.
func verifyTrailer(path string, size int64) (int64, error) {
	if size%512 != sha256.Size {
		return size, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(h, f, size-sha256.Size); err != nil {
		return 0, fmt.Errorf("snapshot %s: read: %w", path, err)
	}
	want := make([]byte, sha256.Size)
	if _, err := io.ReadFull(f, want); err != nil {
		return 0, fmt.Errorf("snapshot %s: read: %w", path, err)
	}
	if !bytes.Equal(h.Sum(nil), want) {
		return 0, fmt.Errorf("snapshot %s: %w: its sha256 trailer does not match its content (tampered with or damaged)", path, ErrBadSnapshot)
	}
	return size - sha256.Size, nil
}

func openErr(path string, err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("snapshot %s: locked by another process (a running etcd's db file cannot be read; inspect a snapshot of it, or the live cluster)", path)
	case errors.Is(err, os.ErrPermission), errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("snapshot: %w", err)
	}
	// Whatever else bbolt rejects (invalid meta pages, a version or checksum mismatch,
	// a file too short to map) means one thing to the user.
	return fmt.Errorf("snapshot %s: %w: not a bbolt database (%v)", path, ErrBadSnapshot, err)
}

// decodeRevKey parses a key-bucket key: 8-byte big-endian main revision, '_', 8-byte
// sub revision, and a 't' mark for a tombstone (go.etcd.io/etcd/server/v3/storage/mvcc,
// revision.go). mvcc's own decoder panics on bad input; this one returns an error.
func decodeRevKey(b []byte) (main, sub int64, tombstone bool, err error) {
	if (len(b) != revKeyBytes && len(b) != revKeyBytes+1) || b[8] != '_' {
		return 0, 0, false, badRevKey(b)
	}
	main, sub = int64(binary.BigEndian.Uint64(b[:8])), int64(binary.BigEndian.Uint64(b[9:17]))
	if main < 0 || sub < 0 || (len(b) == revKeyBytes+1 && b[revKeyBytes] != 't') {
		return 0, 0, false, badRevKey(b)
	}
	return main, sub, len(b) == revKeyBytes+1, nil
}

// badRevKey shows at most the first bytes of a bad key: in a damaged file its
// length can be anything up to the whole map.
func badRevKey(b []byte) error {
	if len(b) > 2*revKeyBytes {
		return fmt.Errorf("bad revision key of %d bytes, starting %x", len(b), b[:2*revKeyBytes])
	}
	return fmt.Errorf("bad revision key %x", b)
}

// readKeyBucket walks the key bucket in revision order, so the last entry seen for a
// key is its latest. It returns the state of every key under prefix and the highest
// revision.
func readKeyBucket(kb *bolt.Bucket, prefix []byte) (map[string]*keyState, int64, error) {
	keys := map[string]*keyState{}
	var rev int64
	c := kb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		main, _, tomb, err := decodeRevKey(k)
		if err != nil {
			return nil, 0, err
		}
		rev = max(rev, main)
		var kv mvccpb.KeyValue
		if err := kv.Unmarshal(v); err != nil {
			return nil, 0, fmt.Errorf("entry at revision %d: bad KeyValue: %v", main, err)
		}
		if !bytes.HasPrefix(kv.Key, prefix) {
			continue
		}
		st := keys[string(kv.Key)]
		if st == nil {
			st = &keyState{}
			keys[string(kv.Key)] = st
		}
		n := int64(len(k) + len(v))
		st.entries++
		st.bytes += n
		st.lastBytes = n
		st.tombstone = tomb
		st.valueSize, st.create, st.mod, st.version = int64(len(kv.Value)), kv.CreateRevision, kv.ModRevision, kv.Version
	}
	return keys, rev, nil
}

// addKeys feeds the key states to agg in key order (so ties in the largest keys
// resolve the same way in both modes).
func addKeys(agg *Aggregator, keys map[string]*keyState) {
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		st := keys[k]
		if st.tombstone {
			agg.AddDeleted(st.bytes)
			continue
		}
		agg.Add(Record{Key: []byte(k), ValueSize: st.valueSize, CreateRevision: st.create, ModRevision: st.mod,
			Version: st.version, OldRevisions: st.entries - 1, OldBytes: st.bytes - st.lastBytes, OldExact: true})
	}
}
