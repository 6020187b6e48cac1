// Package metrics names the Prometheus series etcdperf reads from an etcd
// member's /metrics, in one place, so the analyzer's rules, the drills, inspect,
// the report's plots and the docs cannot spell one differently. It is a leaf:
// names only, no parsing (analyze parses /metrics).
//
// Names as registered by etcd, verified against etcd 3.6.16 and 3.4 sources:
// server/storage/wal/metrics.go, server/storage/backend/metrics.go,
// server/etcdserver/metrics.go, server/etcdserver/txn/metrics.go,
// server/etcdserver/api/rafthttp/metrics.go, server/etcdserver/api/v3rpc/metrics.go,
// server/etcdserver/api/snap/metrics.go, server/storage/mvcc/metrics.go; the
// process collector of client_golang; go-grpc-prometheus.
package metrics

// Disk.
const (
	WALFsync      = "etcd_disk_wal_fsync_duration_seconds"
	WALWriteBytes = "etcd_disk_wal_write_bytes_total" // a gauge in etcd's code, but it only grows
	BackendCommit = "etcd_disk_backend_commit_duration_seconds"
)

// Server.
const (
	ApplyDuration      = "etcd_server_apply_duration_seconds" // 3.5+
	RangeDuration      = "etcd_server_range_duration_seconds" // 3.5+
	SlowApply          = "etcd_server_slow_apply_total"
	LeaderChanges      = "etcd_server_leader_changes_seen_total"
	HasLeader          = "etcd_server_has_leader"
	IsLeader           = "etcd_server_is_leader"
	ProposalsFailed    = "etcd_server_proposals_failed_total"
	ProposalsCommitted = "etcd_server_proposals_committed_total" // a gauge: the committed index
	ProposalsApplied   = "etcd_server_proposals_applied_total"   // a gauge: the applied index
	SlowReadIndex      = "etcd_server_slow_read_indexes_total"
	HeartbeatFailures  = "etcd_server_heartbeat_send_failures_total"
	Quota              = "etcd_server_quota_backend_bytes"
	ServerVersion      = "etcd_server_version"  // label server_version
	ClusterVersion     = "etcd_cluster_version" // label cluster_version
)

// Storage (mvcc).
const (
	DBTotal    = "etcd_mvcc_db_total_size_in_bytes"
	DBInUse    = "etcd_mvcc_db_total_size_in_use_in_bytes"
	PutTotal   = "etcd_mvcc_put_total"
	RangeTotal = "etcd_mvcc_range_total"
)

// Watch (server/storage/mvcc/metrics.go): gauges of the streams, watchers and
// unsynced slow watchers now; PendingEvents is a gauge too despite its _total
// (pendingEventsGauge: events held for full watcher channels now, added when a
// watcher becomes a victim, taken off when they are sent); EventsSent counts
// the events sent.
const (
	WatchStreams  = "etcd_debugging_mvcc_watch_stream_total"
	Watchers      = "etcd_debugging_mvcc_watcher_total"
	SlowWatchers  = "etcd_debugging_mvcc_slow_watcher_total"
	PendingEvents = "etcd_debugging_mvcc_pending_events_total"
	EventsSent    = "etcd_debugging_mvcc_events_total"
)

// Network: peers (label To) and clients.
const (
	PeerRTT          = "etcd_network_peer_round_trip_time_seconds"
	PeerSentFailures = "etcd_network_peer_sent_failures_total"
	PeerSentBytes    = "etcd_network_peer_sent_bytes_total"
	ActivePeers      = "etcd_network_active_peers"
	GRPCReceived     = "etcd_network_client_grpc_received_bytes_total"
	GRPCSent         = "etcd_network_client_grpc_sent_bytes_total"
)

// Snapshots sent to a peer (label To) and received or saved by a member.
const (
	SnapSendSuccess  = "etcd_network_snapshot_send_success"
	SnapSendFailures = "etcd_network_snapshot_send_failures"
	SnapSendSeconds  = "etcd_network_snapshot_send_total_duration_seconds"
	SnapRecvSeconds  = "etcd_network_snapshot_receive_total_duration_seconds"
	SnapDBSave       = "etcd_snap_db_save_total_duration_seconds"
	SnapDBFsync      = "etcd_snap_db_fsync_duration_seconds"
)

// gRPC server (go-grpc-prometheus, always registered by etcd; only the
// handling-time histogram needs --metrics=extensive).
const (
	GRPCMsgReceived = "grpc_server_msg_received_total" // label grpc_method
	// GRPCHandling is the time from a request's arrival to its reply on the
	// member that received it (label grpc_method); --metrics=extensive only.
	GRPCHandling = "grpc_server_handling_seconds"
)

// Process collector.
const (
	RSS        = "process_resident_memory_bytes"
	CPUSeconds = "process_cpu_seconds_total"
	// ProcessStart is the process's start in Unix seconds (client_golang's
	// process collector, from proc/PID/stat).
	ProcessStart = "process_start_time_seconds"
)

// Go runtime collector (client_golang): what a member says of the cores and
// memory it may use, where etcdperf cannot see its machine.
const (
	// GoMaxProcs is runtime.GOMAXPROCS: at most this many cores run Go code at once.
	GoMaxProcs = "go_sched_gomaxprocs_threads"
	// GoMemLimit is the GOMEMLIMIT soft limit; math.MaxInt64 when none is set.
	GoMemLimit = "go_gc_gomemlimit_bytes"
)

// Prefixes of the families etcdperf keeps from a member's /metrics.
const (
	PrefixEtcd       = "etcd_"
	PrefixProcess    = "process_"
	PrefixGo         = "go_"
	PrefixGRPCServer = "grpc_server_"
	PrefixOSFD       = "os_fd_"
)

// Kept are the family prefixes worth storing in a run file: etcd's own
// (etcd_network_* included), the process and Go runtime collectors, gRPC server
// metrics and etcd's file-descriptor gauges. Everything else is dropped before
// storing, so a run file does not carry an unrelated exporter's metrics.
var Kept = []string{PrefixEtcd, PrefixProcess, PrefixGo, PrefixGRPCServer, PrefixOSFD}

// What can freeze a member for a while (server/storage/backend/metrics.go,
// server/etcdserver/api/snap/metrics.go, server/storage/mvcc/metrics.go): a
// defragmentation in flight (a gauge, 1 while it runs) and its durations, a
// snapshot saved to disk, a backend snapshot sent to a follower, and the
// compaction's pauses of the writes (milliseconds).
const (
	DefragInflight  = "etcd_disk_defrag_inflight"
	DefragDuration  = "etcd_disk_backend_defrag_duration_seconds"
	SnapSave        = "etcd_debugging_snap_save_total_duration_seconds"
	BackendSnapshot = "etcd_disk_backend_snapshot_duration_seconds"
	CompactionPause = "etcd_debugging_mvcc_db_compaction_pause_duration_milliseconds"
)
