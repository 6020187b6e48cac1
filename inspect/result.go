// Package inspect describes what an etcd cluster stores and how it is tuned: key
// count and bytes per prefix, value sizes, the largest keys, history waiting for
// compaction, db size against in-use bytes and the quota, the time a new member
// needs to catch up, growth between two inspections, and tuning advice. It reads
// either a live cluster (read-only, paginated, rate-limited ranges; see Live) or
// a snapshot file opened read-only with bbolt (see ReadSnapshot). Both feed one
// Aggregator, so the two modes report the same figures for the same data.
package inspect

import (
	"time"

	"github.com/etcdperf/etcdperf/finding"
)

// Result is the output of `etcdperf inspect`; its JSON form is inspect's -w json
// object (total, prefixes, value_size_bytes, findings) plus the sections below.
type Result struct {
	// Source is "live" or "snapshot".
	Source string `json:"source"`
	// Snapshot is the snapshot file read, in snapshot mode.
	Snapshot string `json:"snapshot,omitempty"`
	// Endpoints are the members inspected, in live mode.
	Endpoints     []string  `json:"endpoints,omitempty"`
	ServerVersion string    `json:"server_version,omitempty"`
	InspectedAt   time.Time `json:"inspected_at"`
	// Revision is the store revision every figure was read at.
	Revision int64 `json:"revision"`
	// KeyPrefix restricts the inspection to keys under it ("" is every key).
	KeyPrefix string `json:"key_prefix,omitempty"`
	Depth     int    `json:"depth"`

	Total     Totals      `json:"total"`
	Prefixes  []Prefix    `json:"prefixes"`
	ValueSize SizeSummary `json:"value_size_bytes"`
	Values    ValuesInfo  `json:"values"`
	Largest   []KeyInfo   `json:"largest_keys"`
	// NearLimit lists keys whose key+value is close to the request size limit.
	NearLimit []KeyInfo         `json:"near_request_limit"`
	History   History           `json:"history"`
	DB        DB                `json:"db"`
	Recovery  Recovery          `json:"recovery"`
	Growth    *Growth           `json:"growth,omitempty"`
	Tuning    Tuning            `json:"tuning"`
	Scan      ScanStats         `json:"scan"`
	Findings  []finding.Finding `json:"findings"`
	// Assumptions lists every figure that was not measured but assumed (defaults stated).
	Assumptions []string `json:"assumptions"`
}

// Totals are the latest revision of every live key.
type Totals struct {
	Keys       int64 `json:"keys"`
	KeyBytes   int64 `json:"key_bytes"`
	ValueBytes int64 `json:"value_bytes"`
}

// Prefix is the share of one key prefix (keys grouped by PrefixOf at the chosen depth).
type Prefix struct {
	Prefix     string      `json:"prefix"`
	Keys       int64       `json:"keys"`
	KeyBytes   int64       `json:"key_bytes"`
	ValueBytes int64       `json:"value_bytes"`
	ValueSize  SizeSummary `json:"value_size_bytes"`
	// OldRevisions are revisions of these keys kept besides the latest (history).
	OldRevisions int64 `json:"old_revisions"`
}

// SizeSummary is a byte-size distribution. Percentiles come from an HdrHistogram
// (within 1% for per-prefix figures, 0.1% overall); Max is exact.
type SizeSummary struct {
	P50 int64 `json:"p50"`
	P90 int64 `json:"p90"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

// ValuesInfo says how value sizes were obtained: keys-only ranges carry no value
// size, so a live inspection either reads every value (exact) or a sample of pages.
type ValuesInfo struct {
	Mode string `json:"mode"` // exact | sample
	// SampledKeys is the number of keys whose value size was read.
	SampledKeys int64 `json:"sampled_keys"`
	// Exact is false when value bytes are extrapolated from the sample.
	Exact bool `json:"exact"`
}

// KeyInfo is one key with its sizes.
type KeyInfo struct {
	Key        string `json:"key"`
	KeyBytes   int64  `json:"key_bytes"`
	ValueBytes int64  `json:"value_bytes"`
	Version    int64  `json:"version"`
}

// History is what compaction has not yet removed.
type History struct {
	CurrentRevision int64 `json:"current_revision"`
	// CompactRevision is the last compaction's revision; 0 when none is known.
	CompactRevision int64 `json:"compact_revision"`
	// RevisionsSinceCompaction counts main revisions (transactions) since compaction.
	RevisionsSinceCompaction int64 `json:"revisions_since_compaction"`
	// OldRevisions are revisions of live keys kept besides their latest one.
	OldRevisions int64 `json:"old_revisions"`
	// KeysWithHistory are live keys with at least one old revision.
	KeysWithHistory int64 `json:"keys_with_history"`
	// MaxDepth is the largest old-revision count of one key, and that key.
	MaxDepth    int64  `json:"max_depth"`
	MaxDepthKey string `json:"max_depth_key,omitempty"`
	// DeletedKeys are keys whose latest revision is a tombstone, still stored until
	// compaction (visible only in a snapshot; 0 live).
	DeletedKeys int64 `json:"deleted_keys"`
	// CompactionFreesBytes estimates the bytes a compaction at the current revision
	// would free from the db's in-use size (a defrag then returns them to the disk).
	CompactionFreesBytes int64 `json:"compaction_frees_bytes"`
	// Exact is false when the figures above are bounds or estimates (live mode after a
	// compaction, where a key's revisions before the compaction cannot be counted).
	Exact bool   `json:"exact"`
	Basis string `json:"basis"`
}

// DB is the backend file: its size, the part in use, and the quota.
type DB struct {
	SizeBytes  int64 `json:"size_bytes"`
	InUseBytes int64 `json:"in_use_bytes"`
	// InUseRatio is in-use / size: 1 is compact, low means fragmented (defrag reclaims it).
	InUseRatio float64 `json:"in_use_ratio"`
	QuotaBytes int64   `json:"quota_bytes"`
	// QuotaSource says where QuotaBytes came from (flag, status, metrics or assumed default).
	QuotaSource string  `json:"quota_source"`
	QuotaUsed   float64 `json:"quota_used"`
	// Members has each member's own figures in live mode.
	Members []MemberDB `json:"members,omitempty"`
}

// MemberDB is one member's status.
type MemberDB struct {
	Endpoint   string `json:"endpoint"`
	Version    string `json:"version"`
	SizeBytes  int64  `json:"size_bytes"`
	InUseBytes int64  `json:"in_use_bytes"`
	IsLeader   bool   `json:"is_leader,omitempty"`
	IsLearner  bool   `json:"is_learner,omitempty"`
}

// Recovery estimates how long a new member (or learner) takes to receive the
// leader's snapshot and write it: db size over the slower of network and disk.
type Recovery struct {
	DiskMBps float64 `json:"disk_mb_per_s"`
	NetMBps  float64 `json:"net_mb_per_s"`
	// Seconds is the estimate; it leaves out replaying the entries written meanwhile.
	Seconds float64 `json:"seconds"`
	Basis   string  `json:"basis"`
}

// Growth compares this inspection with an earlier one.
type Growth struct {
	PreviousAt        time.Time `json:"previous_at"`
	PreviousSizeBytes int64     `json:"previous_size_bytes"`
	PreviousFrom      string    `json:"previous_from"`
	BytesPerDay       float64   `json:"bytes_per_day"`
	// DaysToQuota is when the db reaches the quota at this rate; nil when not growing.
	DaysToQuota *float64 `json:"days_to_quota,omitempty"`
}

// Tuning holds the settings and measurements the tuning advice compares.
type Tuning struct {
	HeartbeatMs   float64 `json:"heartbeat_ms"`
	ElectionMs    float64 `json:"election_ms"`
	SnapshotCount int64   `json:"snapshot_count"`
	// PeerRTTP99Ms is the members' peer round trip p99 since they started; nil when
	// unknown (one member, or no /metrics).
	PeerRTTP99Ms *float64 `json:"peer_rtt_p99_ms,omitempty"`
	// WALFsyncP99Ms is the WAL fsync p99 since start; nil when unknown.
	WALFsyncP99Ms *float64 `json:"wal_fsync_p99_ms,omitempty"`
	// RaftLogBytes estimates the raft log etcd keeps in memory: snapshot-count entries
	// of the average key+value size.
	RaftLogBytes int64  `json:"raft_log_bytes"`
	Source       string `json:"source"`
}

// ScanStats describes the reads an inspection made.
type ScanStats struct {
	Requests   int64   `json:"requests"`
	Pages      int64   `json:"pages"`
	BytesRead  int64   `json:"bytes_read"`
	DurationS  float64 `json:"duration_s"`
	MaxRPS     float64 `json:"max_rps,omitempty"`
	PageSize   int64   `json:"page_size,omitempty"`
	PageBytes  int64   `json:"page_bytes,omitempty"`
	MetricsErr string  `json:"metrics_error,omitempty"`
}

// Worst is the most severe grade among the findings (fail > warn > ok > unknown).
func (r *Result) Worst() finding.Severity {
	w := finding.Unknown
	for _, f := range r.Findings {
		w = finding.Worst(w, f.Severity)
	}
	return w
}
