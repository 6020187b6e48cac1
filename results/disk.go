package results

import (
	"fmt"
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/etcdperf/etcdperf/finding"
)

// Severity is the probe's grade in finding's vocabulary; unknown when there is none.
func (d DiskResult) Severity() finding.Severity { return d.Grade.Severity() }

// DiskResult is one disk probe run (see package diskprobe).
type DiskResult struct {
	Pattern   string `json:"pattern"` // fio | wal | backend | etcd
	Dir       string `json:"dir"`
	BlockSize int    `json:"block_size"`
	// Bytes counts the bytes the timed loop wrote; DurationS is that loop's wall time.
	Bytes     int64   `json:"bytes"`
	DurationS float64 `json:"duration_s"`
	// Writes and Fdatasyncs count the write and fdatasync (or directory fsync) calls.
	Writes     int64 `json:"writes"`
	Fdatasyncs int64 `json:"fdatasyncs"`
	// IOPS is Writes per second of DurationS, as fio counts it (the syncs are in the time, not the count).
	IOPS      float64 `json:"iops"`
	MBPerS    float64 `json:"mb_per_s"` // 10^6 bytes per second
	Fdatasync Summary `json:"fdatasync_ms"`
	Write     Summary `json:"write_ms"`
	SyncHist  Hist    `json:"fdatasync_hist,omitempty"`
	WriteHist Hist    `json:"write_hist,omitempty"`
	// FdatasyncLessWait is each fdatasync less the time the probe's thread
	// waited for a CPU meanwhile (its run-queue delay, schedstat): the disk's
	// part, which a starved probe does not inflate. CPUWaitMs is that wait over
	// all its fdatasyncs. Both absent where the kernel does not say.
	FdatasyncLessWait *Summary `json:"fdatasync_less_cpu_wait_ms,omitempty"`
	LessWaitHist      Hist     `json:"fdatasync_less_cpu_wait_hist,omitempty"`
	CPUWaitMs         float64  `json:"cpu_wait_ms,omitempty"`
	// FdatasyncBuckets are the fdatasync latencies counted like etcd_disk_wal_fsync_duration_seconds,
	// so a probe can be laid next to a member's metrics.
	FdatasyncBuckets []Bucket `json:"fdatasync_buckets,omitempty"`

	// Commit is the bbolt-like commit time (page writes, fdatasync, meta write, fdatasync) of the
	// backend pattern, the counterpart of etcd_disk_backend_commit_duration_seconds.
	Commits       int64    `json:"commits,omitempty"`
	Commit        *Summary `json:"commit_ms,omitempty"`
	CommitHist    Hist     `json:"commit_hist,omitempty"`
	CommitBuckets []Bucket `json:"commit_buckets,omitempty"`
	// SegmentCuts counts WAL segment cuts (wal pattern).
	SegmentCuts int `json:"segment_cuts,omitempty"`

	// Grade is the probe's grade as the output contract writes it: pass, warn or
	// fail (finding.StatusOf a severity; Severity reads it back).
	Grade finding.Status `json:"grade"`
	// GradeReason says which rule decided the grade, with the observed value and the source of the threshold.
	GradeReason string `json:"grade_reason,omitempty"`
	// FioCommand is the fio job that does the same I/O (fio pattern) or the closest one (wal pattern).
	FioCommand string `json:"fio_command,omitempty"`

	// Filesystem facts of Dir, and the block device under it (nil when there is none, e.g. overlay or tmpfs).
	Filesystem   string `json:"filesystem,omitempty"`
	Mountpoint   string `json:"mountpoint,omitempty"`
	MountDevice  string `json:"mount_device,omitempty"`
	MountOptions string `json:"mount_options,omitempty"`
	Device       *Disk  `json:"device,omitempty"`

	// Backend is the backend side of the etcd pattern, which ran concurrently with the WAL side above.
	Backend *DiskResult `json:"backend,omitempty"`
	// Interrupted is set when the probe was cancelled; the figures cover what ran.
	Interrupted bool `json:"interrupted,omitempty"`

	// Member is the member whose data dir's filesystem a probe taken during the
	// load (bench, check, plan) wrote to; empty for a probe of its own (disk, qualify).
	Member string `json:"member,omitempty"`
	// SharedWith are the other members whose data dirs are on the same
	// filesystem: one probe a filesystem measures it for them all.
	SharedWith []string `json:"shared_with,omitempty"`
	// IntervalMs is the pace of a light probe: one batch and its fdatasync every
	// IntervalMs; 0 for a probe that writes back to back.
	IntervalMs float64 `json:"interval_ms,omitempty"`
}

// SyncP99 is the fdatasync p99 (ms) the disk is graded by: less its thread's
// CPU wait where that was measured, since a measurement whose thread waited
// for a CPU is not evidence about the disk.
func (d DiskResult) SyncP99() float64 {
	if d.FdatasyncLessWait != nil {
		return d.FdatasyncLessWait.P99
	}
	return d.Fdatasync.P99
}

// SyncHistGraded is the histogram SyncP99 is taken from.
func (d DiskResult) SyncHistGraded() Hist {
	if d.FdatasyncLessWait != nil && d.LessWaitHist != "" {
		return d.LessWaitHist
	}
	return d.SyncHist
}

// WaitNote says how much of the fdatasync p99 was the probe thread's wait for
// a CPU, "" where none was.
func (d DiskResult) WaitNote() string {
	if d.FdatasyncLessWait == nil || d.Fdatasync.P99 <= d.FdatasyncLessWait.P99 {
		return ""
	}
	return fmt.Sprintf("less the probe thread's wait for a CPU (%.3g ms with it; %.3g ms of waiting over %d fdatasyncs)", d.Fdatasync.P99, d.CPUWaitMs, d.Fdatasyncs)
}

// Bucket is one cumulative histogram bucket, as Prometheus exposes it: Count observations were ≤ LE seconds.
type Bucket struct {
	LE    float64 `json:"le"`
	Count int64   `json:"count"`
}

// EtcdDiskBucketBounds are the upper bounds (seconds) of etcd's disk histograms
// etcd_disk_wal_fsync_duration_seconds and etcd_disk_backend_commit_duration_seconds:
// prometheus.ExponentialBuckets(0.001, 2, 14), i.e. 1 ms × 2^k for k = 0..13 (server/storage/wal/metrics.go).
var EtcdDiskBucketBounds = func() []float64 {
	b := make([]float64, 14)
	for k := range b {
		b[k] = 0.001 * math.Pow(2, float64(k))
	}
	return b
}()

// EtcdBuckets counts a microsecond histogram into etcd's disk buckets, cumulative. The +Inf
// bucket is left out (JSON has no infinity); its count is h.TotalCount(). Each bound is the
// lowest value of one of the shared histogram's sub-buckets, so a sample on a bound counts in
// it, as with Prometheus' le, and only samples less than 2^(k-1) µs above a bound (0.05%) are
// counted with it too.
func EtcdBuckets(h *hdr.Histogram) []Bucket {
	out := make([]Bucket, len(EtcdDiskBucketBounds))
	for i, le := range EtcdDiskBucketBounds {
		out[i].LE = le
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		for i, le := range EtcdDiskBucketBounds {
			if float64(bar.From) <= le*1e6 {
				out[i].Count += bar.Count
			}
		}
	}
	return out
}
