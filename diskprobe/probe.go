// Package diskprobe measures the fdatasync latency of the disk under a folder, the
// way fio's etcd job does (pattern fio) and the way an etcd member really writes:
// its WAL (pattern wal), its bbolt backend commits (pattern backend), or both at
// once (pattern etcd). It writes only inside its own temp folder and removes it on
// every exit path.
package diskprobe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// Pattern names.
const (
	PatternFio     = "fio"
	PatternWAL     = "wal"
	PatternBackend = "backend"
	PatternEtcd    = "etcd"
)

// Patterns lists the pattern names in the order help texts show them.
var Patterns = []string{PatternFio, PatternWAL, PatternBackend, PatternEtcd}

// Defaults, each from the tool or etcd constant it mirrors.
const (
	// DefaultSize and DefaultBlockSize are fio's etcd job: --size=22m --bs=2300.
	DefaultSize      = 22 << 20
	DefaultBlockSize = 2300
	// OpenShiftBlockSize is the block size of OpenShift's variant of the fio job, graded at 20 ms.
	OpenShiftBlockSize = 8000
	// DefaultSegmentBytes is etcd's wal.SegmentSizeBytes (64 * 1000 * 1000).
	DefaultSegmentBytes = 64 * 1000 * 1000
	// DefaultCommitInterval is etcd's --backend-batch-interval.
	DefaultCommitInterval = 100 * time.Millisecond
	// DefaultCommitPages is the number of dirty 4 KiB pages a backend commit writes; a commit of
	// a few hundred small puts touches about this many leaf and branch pages.
	DefaultCommitPages = 16
	// DefaultDBBytes is the size of the backend pattern's db file, laid out before timing.
	DefaultDBBytes = 16 << 20
	// DefaultBackendDuration bounds the backend pattern, which is paced rather than size-bound:
	// at one commit per 100 ms it yields well over MinSamples commits.
	DefaultBackendDuration = 15 * time.Second
)

// Config is one probe run. Zero fields take the defaults above.
type Config struct {
	Dir     string
	Pattern string
	// Size is the number of bytes to write (fio and wal patterns).
	Size int64
	// BlockSize is the bytes per write (fio) or per WAL batch, framing included (wal).
	BlockSize int
	// Duration bounds the run; 0 means until Size is written (backend alone: DefaultBackendDuration).
	Duration time.Duration
	// AllowTmpfs lets the probe run on tmpfs or ramfs, where fdatasync is a no-op.
	AllowTmpfs bool
	// Interval paces the wal pattern: one batch and its fdatasync every Interval, a
	// light probe that can run beside a member's own load; 0 writes back to back.
	Interval time.Duration

	// SegmentBytes is the WAL segment size; tests cut segments sooner with a smaller one.
	SegmentBytes int64
	// CommitInterval, CommitPages and DBBytes shape the backend pattern: how often it commits,
	// how many random pages each commit writes, and the size of the db file they land in.
	CommitInterval time.Duration
	CommitPages    int
	DBBytes        int64
}

// Errors the checks before a run return; the message says what to do.
var (
	ErrTmpfs      = errors.New("fdatasync is a no-op on tmpfs/ramfs")
	ErrNotDir     = errors.New("not a usable folder")
	ErrReadOnly   = errors.New("folder is read-only")
	ErrNoSpace    = errors.New("not enough free space")
	ErrBadPattern = errors.New("unknown pattern")
)

// withDefaults fills zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.Pattern == "" {
		c.Pattern = PatternFio
	}
	switch c.Pattern {
	case PatternFio, PatternWAL, PatternBackend, PatternEtcd:
	default:
		return c, fmt.Errorf("%w %q: must be one of fio, wal, backend, etcd", ErrBadPattern, c.Pattern)
	}
	if c.Size == 0 {
		c.Size = DefaultSize
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.SegmentBytes == 0 {
		c.SegmentBytes = DefaultSegmentBytes
	}
	if c.CommitInterval == 0 {
		c.CommitInterval = DefaultCommitInterval
	}
	if c.CommitPages == 0 {
		c.CommitPages = DefaultCommitPages
	}
	if c.DBBytes == 0 {
		c.DBBytes = DefaultDBBytes
	}
	if c.Pattern == PatternBackend && c.Duration == 0 {
		c.Duration = DefaultBackendDuration
	}
	switch {
	case c.Size < 0:
		return c, fmt.Errorf("size %d: must be positive", c.Size)
	case c.BlockSize < minBlockSize || c.BlockSize > maxBlockSize:
		return c, fmt.Errorf("block size %d: must be %d..%d bytes", c.BlockSize, minBlockSize, maxBlockSize)
	case c.Size < int64(c.BlockSize):
		return c, fmt.Errorf("size %d is smaller than one block of %d bytes", c.Size, c.BlockSize)
	case c.Duration < 0:
		return c, fmt.Errorf("duration %s: must not be negative", c.Duration)
	case c.Interval < 0 || (c.Interval > 0 && c.Pattern != PatternWAL):
		return c, fmt.Errorf("interval %s: a pace of the wal pattern only, not negative", c.Interval)
	case c.SegmentBytes < 1<<20:
		return c, fmt.Errorf("segment size %d: must be at least 1 MiB", c.SegmentBytes)
	case c.CommitPages < 1 || int64(c.CommitPages+2)*pageSize > c.DBBytes:
		return c, fmt.Errorf("%d pages per commit do not fit a %d-byte db", c.CommitPages, c.DBBytes)
	}
	return c, nil
}

// Block size bounds: a WAL batch needs room for its two 8-byte length fields and the state
// record; above 64 MiB one write is no longer an fsync probe.
const (
	minBlockSize = 64
	maxBlockSize = 64 << 20
)

// probe runs one I/O pattern inside dir (the probe's own temp folder) and records into rec.
// It stops when done, at the deadline (zero: none) or when ctx is cancelled.
type probe func(ctx context.Context, dir string, cfg Config, deadline time.Time, rec *recorder) error

// Run checks cfg.Dir, runs the pattern in a temp folder inside it and returns the result.
// When ctx is cancelled it returns what was measured so far (Interrupted set) with ctx's error.
func Run(ctx context.Context, cfg Config) (results.DiskResult, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return results.DiskResult{}, err
	}
	if err := checkDir(cfg.Dir, needBytes(cfg), cfg.AllowTmpfs); err != nil {
		return results.DiskResult{}, err
	}
	if abs, err := filepath.Abs(cfg.Dir); err == nil {
		cfg.Dir = abs // the result and its fio command must say where, wherever they are read
	}
	tmp, err := os.MkdirTemp(cfg.Dir, ".etcdperf-disk-")
	if err != nil {
		return results.DiskResult{}, fmt.Errorf("create probe folder in %s: %w", cfg.Dir, err)
	}
	defer os.RemoveAll(tmp)

	var deadline time.Time
	if cfg.Duration > 0 {
		deadline = time.Now().Add(cfg.Duration)
	}
	var res results.DiskResult
	switch cfg.Pattern {
	case PatternEtcd:
		res, err = runEtcd(ctx, tmp, cfg, deadline)
	default:
		res, err = runOne(ctx, tmp, cfg, deadline, cfg.Pattern)
	}
	res.IntervalMs = float64(cfg.Interval) / float64(time.Millisecond)
	fx := facts(cfg.Dir)
	res.Filesystem, res.Mountpoint, res.MountDevice, res.MountOptions, res.Device =
		fx.fstype, fx.mountpoint, fx.device, fx.options, fx.disk
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		res.Interrupted = true
	}
	return res, err
}

var probes = map[string]probe{
	PatternFio:     fioProbe,
	PatternWAL:     walProbe,
	PatternBackend: backendProbe,
}

// runOne runs a single pattern and builds its result.
func runOne(ctx context.Context, tmp string, cfg Config, deadline time.Time, pattern string) (results.DiskResult, error) {
	rec := newRecorder()
	done := rec.onThread()
	err := probes[pattern](ctx, tmp, cfg, deadline, rec)
	done()
	res, berr := rec.result(pattern, cfg)
	return res, errors.Join(err, berr)
}

// runEtcd runs the WAL and backend patterns concurrently, as they share the disk in a member.
// The backend side stops when the WAL side is done.
func runEtcd(ctx context.Context, tmp string, cfg Config, deadline time.Time) (results.DiskResult, error) {
	walRec, beRec := newRecorder(), newRecorder()
	// A member's db exists before it serves: lay it out before the WAL side starts timing.
	db, err := openDB(tmp, cfg.DBBytes)
	if err != nil {
		return results.DiskResult{}, err
	}
	defer db.Close()
	beCtx, stopBackend := context.WithCancel(ctx)
	beErr := make(chan error, 1)
	go func() {
		defer beRec.onThread()()
		beErr <- commitLoop(beCtx, db, cfg, deadline, beRec)
	}()
	done := walRec.onThread()
	werr := walProbe(ctx, tmp, cfg, deadline, walRec)
	done()
	stopBackend()
	berr := <-beErr
	if errors.Is(berr, context.Canceled) && ctx.Err() == nil {
		berr = nil // stopped on purpose
	}
	res, err1 := walRec.result(PatternEtcd, cfg)
	be, err2 := beRec.result(PatternBackend, cfg)
	res.Backend = &be
	grade, reason := worst(res, be)
	res.Grade, res.GradeReason = finding.StatusOf(grade), reason
	return res, errors.Join(werr, berr, err1, err2)
}

// recorder collects one pattern's measurements. Its record methods do not allocate,
// so they can sit in the timed loop.
type recorder struct {
	sync, write, commit *hdr.Histogram
	// lessWait holds each fdatasync less its thread's CPU wait, and cpuWait
	// sums those waits; both only where rq reads them (see runQueue).
	lessWait      *hdr.Histogram
	cpuWait       time.Duration
	rq            *runQueue
	writes, syncs int64
	bytes         int64
	cuts          int
	start, end    time.Time
}

func newRecorder() *recorder {
	return &recorder{sync: results.NewHist(), write: results.NewHist(), commit: results.NewHist(), lessWait: results.NewHist()}
}

// us converts to whole microseconds, clamped to the histogram's range so a stall of
// more than a minute is still counted (as a minute) rather than dropped.
func us(d time.Duration) int64 {
	v := d.Microseconds()
	switch {
	case v < 0:
		return 0
	case v > results.HistMaxUs:
		return results.HistMaxUs
	}
	return v
}

func (r *recorder) recordWrite(d time.Duration, n int) {
	_ = r.write.RecordValue(us(d)) // us keeps the value in range
	r.writes++
	r.bytes += int64(n)
}

// syncStart is what recordSync needs from before an fdatasync: the clock and
// the thread's run-queue wait so far (read first, so the read is not timed).
func (r *recorder) syncStart() (time.Time, time.Duration) {
	w := r.rq.waited()
	return time.Now(), w
}

// recordSync records the fdatasync begun at t0 (with the thread's wait then
// at w0), and the part of it the thread did not spend waiting for a CPU.
func (r *recorder) recordSync(t0 time.Time, w0 time.Duration) {
	d := time.Since(t0)
	_ = r.sync.RecordValue(us(d))
	r.syncs++
	if r.rq != nil {
		w := min(max(r.rq.waited()-w0, 0), d)
		r.cpuWait += w
		_ = r.lessWait.RecordValue(us(d - w))
	}
}

func (r *recorder) recordCommit(d time.Duration) { _ = r.commit.RecordValue(us(d)) }

// result turns the recorded data into a DiskResult, graded.
func (r *recorder) result(pattern string, cfg Config) (results.DiskResult, error) {
	res := results.DiskResult{
		Pattern:     pattern,
		Dir:         cfg.Dir,
		BlockSize:   cfg.BlockSize,
		Bytes:       r.bytes,
		Writes:      r.writes,
		Fdatasyncs:  r.syncs,
		Fdatasync:   results.Summarize(r.sync),
		Write:       results.Summarize(r.write),
		SegmentCuts: r.cuts,
	}
	if pattern == PatternBackend {
		res.BlockSize = pageSize
	}
	if !r.start.IsZero() && r.end.After(r.start) {
		res.DurationS = r.end.Sub(r.start).Seconds()
		res.IOPS = float64(r.writes) / res.DurationS
		res.MBPerS = float64(r.bytes) / res.DurationS / 1e6
	}
	var err error
	if res.SyncHist, err = results.EncodeHist(r.sync); err != nil {
		return res, err
	}
	if res.WriteHist, err = results.EncodeHist(r.write); err != nil {
		return res, err
	}
	res.FdatasyncBuckets = results.EtcdBuckets(r.sync)
	if r.rq != nil && r.lessWait.TotalCount() > 0 {
		s := results.Summarize(r.lessWait)
		res.FdatasyncLessWait, res.CPUWaitMs = &s, float64(r.cpuWait)/float64(time.Millisecond)
		if res.LessWaitHist, err = results.EncodeHist(r.lessWait); err != nil {
			return res, err
		}
	}
	if pattern == PatternBackend {
		s := results.Summarize(r.commit)
		res.Commit, res.Commits = &s, r.commit.TotalCount()
		if res.CommitHist, err = results.EncodeHist(r.commit); err != nil {
			return res, err
		}
		res.CommitBuckets = results.EtcdBuckets(r.commit)
	}
	res.FioCommand = FioCommand(pattern, cfg)
	grade, reason := Grade(res)
	res.Grade, res.GradeReason = finding.StatusOf(grade), reason
	return res, nil
}

// stopper says when a timed loop must end: ctx cancelled or deadline passed. It does not
// allocate, and checks the clock only through the time the loop already read.
type stopper struct {
	done     <-chan struct{}
	deadline time.Time
}

func newStopper(ctx context.Context, deadline time.Time) stopper {
	return stopper{done: ctx.Done(), deadline: deadline}
}

// stop reports whether to end the loop, given the loop's latest clock reading.
func (s stopper) stop(now time.Time) bool {
	select {
	case <-s.done:
		return true
	default:
	}
	return !s.deadline.IsZero() && !now.Before(s.deadline)
}

// LightInterval paces the in-load probe: one WAL batch and its fdatasync every
// 100 ms, a few KiB a second beside a member's own writes.
const LightInterval = 100 * time.Millisecond

// Light is the probe bench, check and plan run during the load next to a
// member's data dir (on its filesystem, in a temp folder inside it): the wal
// pattern at LightInterval, with 1 MiB segments so that segment cuts happen
// within a run, and room for hours of it.
func Light(dataDir string) Config {
	return Config{Dir: dataDir, Pattern: PatternWAL, Size: 64 << 20, SegmentBytes: 1 << 20, Interval: LightInterval}
}
