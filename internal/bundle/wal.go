package bundle

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
)

// WAL record types (go.etcd.io/etcd/server/v3/storage/wal: metadataType
// ... crcType, unexported there).
const (
	recMetadata = iota + 1
	recEntry
	recState
	recCRC
	recSnapshot
)

// WAL is what a member's write-ahead log holds, read as etcd-dump-logs reads it.
type WAL struct {
	Segments []Segment `json:"segments"`
	// Entries counts the entries by kind: ConfChange (and ConfChangeV2), and for
	// Normal entries the internal request they carry (IRRPut, IRRTxn, ...; Empty
	// for a new leader's empty entry; Request for a v2 request), as
	// etcd-dump-logs -entry-type names them. Bytes sums their data by kind.
	Entries map[string]int64 `json:"entries"`
	Bytes   map[string]int64 `json:"bytes"`
	// First and last entry (after entries a later leader overwrote were dropped).
	FirstIndex uint64 `json:"first_index"`
	FirstTerm  uint64 `json:"first_term"`
	LastIndex  uint64 `json:"last_index"`
	LastTerm   uint64 `json:"last_term"`
	// State is the last hard state: term, vote and commit index.
	Term   uint64 `json:"term"`
	Vote   string `json:"vote,omitempty"`
	Commit uint64 `json:"commit"`
	// Snapshots are the snapshot records the WAL holds (index, term).
	Snapshots []SnapRef `json:"wal_snapshots,omitempty"`
	// Overwritten counts entries a later leader replaced (uncommitted ones).
	Overwritten int64 `json:"overwritten,omitempty"`
	// Error is where reading stopped early (a torn last record is normal after a
	// crash; a CRC mismatch is corruption); empty when every record was read.
	Error string `json:"error,omitempty"`

	// terms are the terms of indexes FirstIndex..LastIndex, for comparing histories.
	terms []uint64
}

// Segment is one WAL file.
type Segment struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// SnapRef is a snapshot's index and term.
type SnapRef struct {
	Index uint64 `json:"index"`
	Term  uint64 `json:"term"`
}

// TermAt is the term of the entry at index, and whether the WAL holds it.
func (w *WAL) TermAt(index uint64) (uint64, bool) {
	if w == nil || len(w.terms) == 0 || index < w.FirstIndex || index > w.LastIndex {
		return 0, false
	}
	return w.terms[index-w.FirstIndex], true
}

// ReadWAL reads every record of the WAL segments in dir, read-only: the files
// are opened O_RDONLY and never locked, truncated or zeroed (wal.ReadAll does
// all three in write mode). A record that does not decode ends the reading with
// Error set: what came before it is kept.
func ReadWAL(dir string) (*WAL, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	w := &WAL{Entries: map[string]int64{}, Bytes: map[string]int64{}}
	var readers []fileutil.FileReader
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".wal") || e.IsDir() {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("wal: %w", err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("wal: %w", err)
		}
		w.Segments = append(w.Segments, Segment{Name: e.Name(), Bytes: fi.Size()})
		readers = append(readers, fileutil.NewFileReader(f))
	}
	if len(readers) == 0 {
		return nil, fmt.Errorf("wal: no .wal file in %s", dir)
	}
	decodeRecords(wal.NewDecoder(readers...), w)
	return w, nil
}

// decodeRecords reads records from d into w until the end or the first bad one.
func decodeRecords(d wal.Decoder, w *WAL) {
	var rec walpb.Record
	for {
		err := d.Decode(&rec)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			w.Error = err.Error()
			return
		}
		if err := w.add(d, &rec); err != nil {
			w.Error = err.Error()
			return
		}
	}
}

// add takes one record into w.
func (w *WAL) add(d wal.Decoder, rec *walpb.Record) error {
	switch rec.Type {
	case recEntry:
		var e raftpb.Entry
		if err := e.Unmarshal(rec.Data); err != nil {
			return fmt.Errorf("entry record: %w", err)
		}
		w.addEntry(&e)
	case recState:
		var s raftpb.HardState
		if err := s.Unmarshal(rec.Data); err != nil {
			return fmt.Errorf("state record: %w", err)
		}
		if s != (raftpb.HardState{}) {
			w.Term, w.Commit = s.Term, s.Commit
			w.Vote = ""
			if s.Vote != 0 {
				w.Vote = strconv.FormatUint(s.Vote, 16)
			}
		}
	case recCRC:
		if crc := d.LastCRC(); crc != 0 && rec.Validate(crc) != nil {
			return fmt.Errorf("CRC mismatch: %w", wal.ErrCRCMismatch)
		}
		d.UpdateCRC(rec.Crc)
	case recSnapshot:
		var s walpb.Snapshot
		if err := s.Unmarshal(rec.Data); err != nil {
			return fmt.Errorf("snapshot record: %w", err)
		}
		w.Snapshots = append(w.Snapshots, SnapRef{Index: s.Index, Term: s.Term})
	case recMetadata:
	default:
		return fmt.Errorf("unknown record type %d", rec.Type)
	}
	return nil
}

// addEntry counts e, and replaces the entries from its index on when a later
// leader overwrote them (as wal.ReadAll does).
func (w *WAL) addEntry(e *raftpb.Entry) {
	switch {
	case len(w.terms) == 0:
		w.FirstIndex, w.FirstTerm = e.Index, e.Term
	case e.Index < w.FirstIndex:
		// An entry from before the first one read: the WAL restarted at a snapshot.
		w.Overwritten += int64(len(w.terms))
		w.terms, w.FirstIndex, w.FirstTerm = nil, e.Index, e.Term
	case e.Index <= w.LastIndex:
		w.Overwritten += int64(w.LastIndex - e.Index + 1)
		w.terms = w.terms[:e.Index-w.FirstIndex]
	case e.Index > w.LastIndex+1:
		// A gap (entries of a snapshot the member received): start afresh.
		w.terms, w.FirstIndex, w.FirstTerm = nil, e.Index, e.Term
	}
	w.terms = append(w.terms, e.Term)
	w.LastIndex, w.LastTerm = e.Index, e.Term
	kind := EntryKind(e.Type, e.Data)
	w.Entries[kind]++
	w.Bytes[kind] += int64(len(e.Data))
}

// EntryKind names what an entry carries, as etcd-dump-logs -entry-type does:
// ConfigChange for membership changes; for a Normal entry the field its
// InternalRaftRequest sets (IRRPut, IRRTxn, IRRCompaction, ...), Request for an
// etcd v2 request, Empty for the empty entry a new leader appends, Unknown for
// data neither decodes.
func EntryKind(t raftpb.EntryType, data []byte) string {
	switch t {
	case raftpb.EntryConfChange, raftpb.EntryConfChangeV2:
		return "ConfigChange"
	case raftpb.EntryNormal:
	default:
		return "Unknown"
	}
	if len(data) == 0 {
		return "Empty"
	}
	var r pb.InternalRaftRequest
	if err := r.Unmarshal(data); err == nil {
		if k := irrKind(&r); k != "" {
			return k
		}
	}
	var v2 pb.Request
	if err := v2.Unmarshal(data); err == nil && v2.Method != "" {
		return "Request"
	}
	return "Unknown"
}

// irrKind is the request an InternalRaftRequest carries; "" when none of the
// fields it knows is set.
func irrKind(r *pb.InternalRaftRequest) string {
	for _, f := range []struct {
		set  bool
		name string
	}{
		{r.Range != nil, "IRRRange"}, {r.Put != nil, "IRRPut"}, {r.DeleteRange != nil, "IRRDeleteRange"}, {r.Txn != nil, "IRRTxn"},
		{r.Compaction != nil, "IRRCompaction"}, {r.LeaseGrant != nil, "IRRLeaseGrant"}, {r.LeaseRevoke != nil, "IRRLeaseRevoke"},
		{r.LeaseCheckpoint != nil, "IRRLeaseCheckpoint"}, {r.Alarm != nil, "IRRAlarm"},
		{r.AuthEnable != nil, "IRRAuthEnable"}, {r.AuthDisable != nil, "IRRAuthDisable"}, {r.AuthStatus != nil, "IRRAuthStatus"},
		{r.Authenticate != nil, "IRRAuthenticate"},
		{r.AuthUserAdd != nil || r.AuthUserDelete != nil || r.AuthUserChangePassword != nil || r.AuthUserGrantRole != nil ||
			r.AuthUserGet != nil || r.AuthUserRevokeRole != nil || r.AuthUserList != nil, "IRRAuthUser"},
		{r.AuthRoleAdd != nil || r.AuthRoleDelete != nil || r.AuthRoleGet != nil || r.AuthRoleGrantPermission != nil ||
			r.AuthRoleRevokePermission != nil || r.AuthRoleList != nil, "IRRAuthRole"},
		{r.ClusterVersionSet != nil, "IRRClusterVersionSet"}, {r.ClusterMemberAttrSet != nil, "IRRClusterMemberAttrSet"},
		{r.DowngradeInfoSet != nil, "IRRDowngradeInfoSet"}, {r.DowngradeVersionTest != nil, "IRRDowngradeVersionTest"},
		{r.V2 != nil, "Request"},
	} {
		if f.set {
			return f.name
		}
	}
	return ""
}

// snapFiles lists a member's snap dir: raft snapshots (TERM-INDEX.snap, both
// hex) and the db snapshots a member received (INDEX.snap.db).
func snapFiles(dir string) ([]SnapFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("snap: %w", err)
	}
	var out []SnapFile
	for _, e := range ents {
		s, ok := ParseSnapName(e.Name())
		if !ok {
			continue
		}
		if fi, err := e.Info(); err == nil {
			s.Bytes = fi.Size()
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// SnapFile is one snapshot file of a member's snap dir.
type SnapFile struct {
	Name  string `json:"name"`
	Term  uint64 `json:"term,omitempty"`
	Index uint64 `json:"index"`
	Bytes int64  `json:"bytes"`
	// DB is set for INDEX.snap.db, a db snapshot received from the leader.
	DB bool `json:"db,omitempty"`
}

// ParseSnapName reads a snap dir's file name: TERM-INDEX.snap (16 hex digits
// each, etcd's snap.Snapshotter) or INDEX.snap.db; ok is false for other files
// (the db, .broken and temp files).
func ParseSnapName(name string) (SnapFile, bool) {
	hex16 := func(s string) (uint64, bool) {
		if len(s) != 16 {
			return 0, false
		}
		v, err := strconv.ParseUint(s, 16, 64)
		return v, err == nil
	}
	if base, ok := strings.CutSuffix(name, ".snap.db"); ok {
		idx, ok := hex16(base)
		return SnapFile{Name: name, Index: idx, DB: true}, ok
	}
	base, ok := strings.CutSuffix(name, ".snap")
	if !ok {
		return SnapFile{}, false
	}
	t, i, ok := strings.Cut(base, "-")
	if !ok {
		return SnapFile{}, false
	}
	term, ok1 := hex16(t)
	idx, ok2 := hex16(i)
	return SnapFile{Name: name, Term: term, Index: idx}, ok1 && ok2
}
