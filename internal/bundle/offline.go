package bundle

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/server/v3/storage/schema"

	"github.com/etcdperf/etcdperf/inspect"
	"github.com/etcdperf/etcdperf/results"
)

// Offline is what stopped members' data dirs hold, and which to restore from.
type Offline struct {
	Dirs []DataDir `json:"dirs"`
	// Restore names the data dir to restore from (etcdutl snapshot restore of its
	// db, or --force-new-cluster on it) and why; empty with one dir.
	Restore *Restore `json:"restore,omitempty"`
	// Agree compares every pair of WALs where they overlap: the same term at the
	// same index means the same entry (Raft's Log Matching property).
	Agree []Agreement `json:"agreement,omitempty"`
}

// DataDir is one member's data dir.
type DataDir struct {
	Path  string     `json:"path"`
	WAL   *WAL       `json:"wal,omitempty"`
	Snaps []SnapFile `json:"snapshots,omitempty"`
	DB    *DB        `json:"db,omitempty"`
	// Errors are the parts that could not be read.
	Errors []string `json:"errors,omitempty"`
}

// DB is a member's backend (member/snap/db), read-only.
type DB struct {
	SizeBytes  int64   `json:"size_bytes"`
	InUseBytes int64   `json:"in_use_bytes"`
	InUseRatio float64 `json:"in_use_ratio"`
	// ConsistentIndex and Term are the raft index and term the db has applied.
	ConsistentIndex uint64 `json:"consistent_index"`
	Term            uint64 `json:"term"`
	// Revision range: the compacted revision (history before it is gone) and the current one.
	CompactRevision int64 `json:"compact_revision"`
	CurrentRevision int64 `json:"current_revision"`
	// Keys and DeletedKeys count live keys and tombstones; bytes, never names.
	Keys        int64    `json:"keys"`
	DeletedKeys int64    `json:"deleted_keys"`
	Buckets     []Bucket `json:"buckets"`
}

// Bucket is one bbolt bucket of the db.
type Bucket struct {
	Name string `json:"name"`
	Keys int    `json:"keys"`
	// Bytes are the bucket's bytes in use (bbolt's BucketStats: branch, leaf and
	// inline bucket in use).
	Bytes int64 `json:"bytes"`
}

// Restore is the data dir to restore from, and the reasoning.
type Restore struct {
	Path   string   `json:"path"`
	Reason []string `json:"reason"`
}

// Agreement is what two WALs say where they overlap.
type Agreement struct {
	Dirs []string `json:"dirs"`
	// From and To bound the overlap; Agree is false at the first index whose terms differ.
	From     uint64 `json:"from,omitempty"`
	To       uint64 `json:"to,omitempty"`
	Agree    bool   `json:"agree"`
	Conflict uint64 `json:"conflict_index,omitempty"`
	// Committed says the conflict is at or under both members' commit index: two
	// members committed different entries, which Raft never does — corruption.
	Committed bool   `json:"committed_conflict,omitempty"`
	Note      string `json:"note,omitempty"`
}

// ReadDataDirs reads each data dir (the folder holding member/, or member/
// itself), read-only, compares their WALs and picks the one to restore from.
func ReadDataDirs(dirs []string) (*Offline, error) {
	o := &Offline{}
	for _, d := range dirs {
		dd, err := readDataDir(d)
		if err != nil {
			return nil, err
		}
		o.Dirs = append(o.Dirs, dd)
	}
	for i := range o.Dirs {
		for j := i + 1; j < len(o.Dirs); j++ {
			o.Agree = append(o.Agree, agree(&o.Dirs[i], &o.Dirs[j]))
		}
	}
	if len(o.Dirs) > 1 {
		o.Restore = chooseRestore(o)
	}
	return o, nil
}

// readDataDir reads one data dir; a part that cannot be read is an error of the
// dir, unless the folder holds no member at all.
func readDataDir(path string) (DataDir, error) {
	member := filepath.Join(path, "member")
	if _, err := os.Stat(filepath.Join(path, "wal")); err == nil {
		member = path // given member/ itself
	}
	if _, err := os.Stat(member); err != nil {
		return DataDir{}, fmt.Errorf("--data-dir %s: no member folder (want DIR/member/wal and DIR/member/snap): %w", path, err)
	}
	dd := DataDir{Path: path}
	var err error
	if dd.WAL, err = ReadWAL(filepath.Join(member, "wal")); err != nil {
		dd.Errors = append(dd.Errors, err.Error())
	}
	if dd.Snaps, err = snapFiles(filepath.Join(member, "snap")); err != nil {
		dd.Errors = append(dd.Errors, err.Error())
	}
	if dd.DB, err = ReadDB(filepath.Join(member, "snap", "db")); err != nil {
		dd.Errors = append(dd.Errors, err.Error())
	}
	return dd, nil
}

// ReadDB reads a member's db read-only: buckets, consistent index and term
// (bbolt), and the revisions, key counts and in-use size as inspect reads a
// snapshot (inspect; its key names are not kept).
func ReadDB(path string) (*DB, error) {
	r, err := inspect.ReadSnapshot(path, inspect.Options{Depth: 1, Top: 1})
	if err != nil {
		return nil, fmt.Errorf("db: %w", err)
	}
	d := &DB{SizeBytes: r.DB.SizeBytes, InUseBytes: r.DB.InUseBytes, CompactRevision: r.History.CompactRevision,
		CurrentRevision: r.History.CurrentRevision, Keys: r.Total.Keys, DeletedKeys: r.History.DeletedKeys}
	if d.SizeBytes > 0 {
		d.InUseRatio = float64(d.InUseBytes) / float64(d.SizeBytes)
	}
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("db %s: %w", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(schema.Meta.Name()); meta != nil {
			d.ConsistentIndex = beUint64(meta.Get(schema.MetaConsistentIndexKeyName))
			d.Term = beUint64(meta.Get(schema.MetaTermKeyName))
		}
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			st := b.Stats()
			d.Buckets = append(d.Buckets, Bucket{Name: string(name), Keys: st.KeyN, Bytes: int64(st.BranchInuse + st.LeafInuse + st.InlineBucketInuse)})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("db %s: %w", path, err)
	}
	return d, nil
}

// beUint64 is etcd's encoding of the meta bucket's numbers; 0 when absent or short.
func beUint64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// agree compares two WALs over the indexes both hold.
func agree(a, b *DataDir) Agreement {
	g := Agreement{Dirs: []string{a.Path, b.Path}, Agree: true}
	if a.WAL == nil || b.WAL == nil || len(a.WAL.terms) == 0 || len(b.WAL.terms) == 0 {
		g.Note = "a WAL without entries: nothing to compare"
		return g
	}
	g.From, g.To = max(a.WAL.FirstIndex, b.WAL.FirstIndex), min(a.WAL.LastIndex, b.WAL.LastIndex)
	if g.From > g.To {
		g.From, g.To = 0, 0
		g.Note = "the WALs do not overlap"
		return g
	}
	for i := g.From; i <= g.To; i++ {
		ta, _ := a.WAL.TermAt(i)
		tb, _ := b.WAL.TermAt(i)
		if ta != tb {
			g.Agree, g.Conflict = false, i
			g.Committed = i <= a.WAL.Commit && i <= b.WAL.Commit
			if g.Committed {
				g.Note = fmt.Sprintf("index %d: term %d in one, %d in the other, both committed: one of them is corrupt", i, ta, tb)
			} else {
				g.Note = fmt.Sprintf("index %d: term %d in one, %d in the other, past a commit index: an uncommitted entry a later leader replaced", i, ta, tb)
			}
			return g
		}
	}
	return g
}

// chooseRestore picks the data dir with the most recent consistent state: the
// highest committed index (HardState.Commit: what the cluster agreed on, as far as
// that member knew), then the most applied to its db (consistent index), then
// the latest term, a dir whose WAL conflicts with another's under both commit
// indexes excluded. The reasons say how each other dir compares.
func chooseRestore(o *Offline) *Restore {
	bad := map[string]string{}
	for _, g := range o.Agree {
		if g.Committed {
			for _, d := range g.Dirs {
				bad[d] = g.Note
			}
		}
	}
	type cand struct {
		d               *DataDir
		commit, applied uint64
		term            uint64
	}
	var cs []cand
	var reasons []string
	for i := range o.Dirs {
		d := &o.Dirs[i]
		if d.WAL == nil || d.DB == nil {
			reasons = append(reasons, fmt.Sprintf("%s: not a candidate, it could not be read whole (%s)", d.Path, strings.Join(d.Errors, "; ")))
			continue
		}
		if why, ok := bad[d.Path]; ok {
			// With two dirs in conflict neither can be told corrupt: both stay candidates.
			if len(o.Dirs) > 2 {
				reasons = append(reasons, fmt.Sprintf("%s: not a candidate, %s", d.Path, why))
				continue
			}
			reasons = append(reasons, fmt.Sprintf("%s: %s; compare with a third member or a snapshot before restoring", d.Path, why))
		}
		cs = append(cs, cand{d, d.WAL.Commit, d.DB.ConsistentIndex, d.WAL.Term})
	}
	if len(cs) == 0 {
		return &Restore{Reason: append(reasons, "no data dir can be read whole: restore from a snapshot (etcdctl snapshot save) instead")}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.commit != b.commit {
			return a.commit > b.commit
		}
		if a.applied != b.applied {
			return a.applied > b.applied
		}
		return a.term > b.term
	})
	best := cs[0]
	r := &Restore{Path: best.d.Path}
	r.Reason = append(r.Reason, fmt.Sprintf("%s: commit index %d, applied to its db up to index %d, term %d: the most recent consistent state",
		best.d.Path, best.commit, best.applied, best.term))
	for _, c := range cs[1:] {
		switch {
		case c.commit == best.commit && c.applied == best.applied:
			r.Reason = append(r.Reason, fmt.Sprintf("%s: as recent (commit %d, applied %d): either will do", c.d.Path, c.commit, c.applied))
		case c.commit < best.commit:
			r.Reason = append(r.Reason, fmt.Sprintf("%s: commit index %d, %d entries behind", c.d.Path, c.commit, best.commit-c.commit))
		default:
			r.Reason = append(r.Reason, fmt.Sprintf("%s: commit index %d but applied only up to %d", c.d.Path, c.commit, c.applied))
		}
	}
	r.Reason = append(r.Reason, reasons...)
	r.Reason = append(r.Reason, "restore: etcdutl snapshot restore "+filepath.Join(best.d.Path, "member", "snap", "db")+" --skip-hash-check (or start that member alone with --force-new-cluster), then add the others back as new members")
	return r
}

// OfflineBundle bundles stopped members' data dirs, writing nothing to them,
// and judges them (Judge).
func OfflineBundle(dirs []string, rates Rates, tool results.Tool, flags map[string]string) (*Bundle, error) {
	host, _ := os.Hostname()
	off, err := ReadDataDirs(dirs)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	b := &Bundle{Manifest: Manifest{Kind: KindOffline, Tool: tool, CreatedAt: now, Host: host, DataDirs: dirs, Flags: flags},
		Data: Data{Offline: off, Repair: offlineRepair(off, rates)},
		Run:  &results.Run{Version: results.Version, Tool: tool, Command: "bundle --data-dir", StartedAt: now, EndedAt: now, Valid: true, Flags: flags}}
	rep, err := Judge(b)
	if err != nil {
		return nil, err
	}
	b.Run.Diagnosis = rep.Diagnosis()
	return b, nil
}
