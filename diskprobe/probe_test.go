package diskprobe

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"
)

// These tests check the mechanics of each pattern (what is written, counted and cleaned up),
// never how fast the disk is. They allow tmpfs so they run wherever TMPDIR is.

// assertEmpty checks that the probe left nothing behind in dir.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("probe left %d entries in %s, first %s", len(left), dir, left[0].Name())
	}
}

func TestRunPatterns(t *testing.T) {
	for _, tc := range []struct {
		cfg                     Config
		writes, syncs, bytes    int64
		blockSize               int
		wantCommits, wantFioCmd bool
	}{
		{cfg: Config{Pattern: PatternFio, Size: 100 * 2300}, writes: 100, syncs: 100, bytes: 100 * 2300, blockSize: 2300, wantFioCmd: true},
		{cfg: Config{Pattern: PatternFio, Size: 1 << 20, BlockSize: 8000}, writes: 131, syncs: 131, bytes: 131 * 8000, blockSize: 8000, wantFioCmd: true},
		// 100 batches of 2304 bytes, each one write and one fdatasync
		{cfg: Config{Pattern: PatternWAL, Size: 100 * 2304}, writes: 100, syncs: 100, bytes: 100 * 2304, blockSize: 2300, wantFioCmd: true},
		{cfg: Config{Pattern: PatternBackend, Duration: 300 * time.Millisecond, CommitInterval: time.Millisecond, CommitPages: 4, DBBytes: 1 << 20},
			blockSize: pageSize, wantCommits: true},
	} {
		t.Run(tc.cfg.Pattern, func(t *testing.T) {
			dir := t.TempDir()
			tc.cfg.Dir, tc.cfg.AllowTmpfs = dir, true
			res, err := Run(context.Background(), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			assertEmpty(t, dir)
			if tc.wantCommits {
				// 4 pages and a meta page per commit, two fdatasyncs
				if res.Commits == 0 || res.Writes != 5*res.Commits || res.Fdatasyncs != 2*res.Commits || res.Bytes != res.Writes*pageSize {
					t.Errorf("backend: %d commits, %d writes, %d syncs, %d bytes", res.Commits, res.Writes, res.Fdatasyncs, res.Bytes)
				}
				if res.Commit == nil || res.CommitHist == "" || len(res.CommitBuckets) != 14 {
					t.Errorf("backend: no commit summary, histogram or buckets")
				}
			} else if res.Writes != tc.writes || res.Fdatasyncs != tc.syncs || res.Bytes != tc.bytes {
				t.Errorf("%d writes, %d syncs, %d bytes; want %d, %d, %d", res.Writes, res.Fdatasyncs, res.Bytes, tc.writes, tc.syncs, tc.bytes)
			}
			if res.Pattern != tc.cfg.Pattern || res.BlockSize != tc.blockSize || res.Dir != dir {
				t.Errorf("header = %s %d %s", res.Pattern, res.BlockSize, res.Dir)
			}
			if res.DurationS <= 0 || res.IOPS <= 0 || res.MBPerS <= 0 {
				t.Errorf("rates: %gs, %g IOPS, %g MB/s", res.DurationS, res.IOPS, res.MBPerS)
			}
			if res.SyncHist == "" || res.WriteHist == "" || res.Fdatasync.Max <= 0 {
				t.Errorf("histograms missing: %+v", res.Fdatasync)
			}
			if n := res.FdatasyncBuckets[len(res.FdatasyncBuckets)-1].Count; n > res.Fdatasyncs {
				t.Errorf("last bucket %d > %d fdatasyncs", n, res.Fdatasyncs)
			}
			if (res.FioCommand != "") != tc.wantFioCmd || res.Grade == "" || res.GradeReason == "" || res.Filesystem == "" {
				t.Errorf("fio %q, grade %q (%s), fs %q", res.FioCommand, res.Grade, res.GradeReason, res.Filesystem)
			}
		})
	}
}

func TestRunEtcdPattern(t *testing.T) {
	dir := t.TempDir()
	res, err := Run(context.Background(), Config{Dir: dir, AllowTmpfs: true, Pattern: PatternEtcd, Size: 200 * 2304,
		CommitInterval: time.Millisecond, CommitPages: 2, DBBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	assertEmpty(t, dir)
	if res.Pattern != PatternEtcd || res.Writes != 200 || res.Backend == nil || res.Backend.Pattern != PatternBackend {
		t.Fatalf("etcd pattern: %s, %d WAL writes, backend %+v", res.Pattern, res.Writes, res.Backend)
	}
	if res.Backend.Commit == nil || res.Commit != nil {
		t.Errorf("commits belong to the backend side only")
	}
	if res.GradeReason == "" || res.Backend.GradeReason == "" {
		t.Errorf("reasons: %q, %q", res.GradeReason, res.Backend.GradeReason)
	}
}

// TestWALSegments checks the cut: full segments are truncated where their records end, the
// new one is renamed from the pipeline's preallocated file, and the spare is removed.
func TestWALSegments(t *testing.T) {
	dir := t.TempDir()
	const seg = 1 << 20
	cfg, err := Config{Pattern: PatternWAL, Size: 3*seg + seg/2, SegmentBytes: seg}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	if err := walProbe(context.Background(), dir, cfg, time.Time{}, rec); err != nil {
		t.Fatal(err)
	}
	if rec.cuts != 3 {
		t.Errorf("%d cuts, want 3", rec.cuts)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) != 4 || names[0] != "0000000000000000-0000000000000000.wal" || filepath.Ext(names[3]) != ".wal" {
		t.Fatalf("segments = %v", names)
	}
	for i, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		full := i < len(names)-1
		// A cut segment ends just past seg (the batch that crossed it); the tail is still preallocated.
		if full && (fi.Size() < seg || fi.Size() > seg+2*2304) || !full && fi.Size() != seg {
			t.Errorf("%s: %d bytes", name, fi.Size())
		}
	}
	// Every cut adds two syncs and a directory fsync to the one per batch.
	batches := cfg.Size / 2304
	if rec.syncs != batches+3*2 {
		t.Errorf("%d syncs for %d batches and 3 cuts", rec.syncs, batches)
	}
}

// TestPageWriter checks the port of etcd's PageWriter: small records are buffered until a
// flush; past the watermark it writes whole pages at page-aligned file offsets.
func TestPageWriter(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "w"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := newRecorder()
	pw := pageWriter{f: f, rec: rec, buf: make([]byte, walBufferBytes+walPageBytes), pageOffset: 100, off: 100}
	if _, err := f.Seek(100, 0); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	rec8 := bytes.Repeat([]byte{7}, 1000)
	for i := 0; rec.writes == 0 && i < 200; i++ {
		if err := pw.write(rec8); err != nil {
			t.Fatal(err)
		}
		want.Write(rec8)
		if rec.writes == 0 && pw.buffered != want.Len() {
			t.Fatalf("buffered %d, want %d", pw.buffered, want.Len())
		}
	}
	// The write that passes the watermark while a page is unfinished is buffered (etcd avoids an
	// unaligned flush); the one that completes the page flushes everything up to the boundary.
	if rec.writes != 1 || pw.off%walPageBytes != 0 || want.Len() <= walBufferBytes {
		t.Errorf("%d writes after %d bytes, file offset %d (want one write ending on a page boundary past the watermark)",
			rec.writes, want.Len(), pw.off)
	}
	if err := pw.flush(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[100:], want.Bytes()) {
		t.Errorf("file holds %d bytes after the offset, want the %d written", len(got)-100, want.Len())
	}
}

func TestRunCancelled(t *testing.T) {
	for _, pattern := range []string{PatternFio, PatternWAL, PatternBackend, PatternEtcd} {
		t.Run(pattern, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Cancel as soon as the probe has started; the size would take minutes otherwise.
			go func() {
				for {
					if entries, _ := os.ReadDir(dir); len(entries) > 0 {
						time.Sleep(20 * time.Millisecond)
						cancel()
						return
					}
					time.Sleep(time.Millisecond)
				}
			}()
			res, err := Run(ctx, Config{Dir: dir, AllowTmpfs: true, Pattern: pattern, Size: 1 << 30, DBBytes: 1 << 20})
			if !errors.Is(err, context.Canceled) || !res.Interrupted {
				t.Fatalf("Run = %v, interrupted %t; want context.Canceled", err, res.Interrupted)
			}
			assertEmpty(t, dir)
		})
	}
}

// TestLoopsDoNotAllocate runs each size-bound pattern at two sizes: the extra iterations of the
// timed loop must not add allocations.
func TestLoopsDoNotAllocate(t *testing.T) {
	mallocs := func(p probe, cfg Config) uint64 {
		dir := t.TempDir()
		cfg, err := cfg.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := p(context.Background(), dir, cfg, time.Time{}, newRecorder()); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	for name, p := range map[string]probe{PatternFio: fioProbe, PatternWAL: walProbe} {
		small := mallocs(p, Config{Pattern: name, Size: 50 * 2304})
		large := mallocs(p, Config{Pattern: name, Size: 550 * 2304})
		// 500 more iterations; a few allocations of the runtime or the test framework may land in between.
		if large > small+25 {
			t.Errorf("%s: %d allocations for 50 iterations, %d for 550", name, small, large)
		}
	}
}

// TestLightPaced: the light probe writes one batch per interval, not back to
// back, and stops with its context, keeping what it measured.
func TestLightPaced(t *testing.T) {
	cfg := Light(t.TempDir())
	cfg.AllowTmpfs = true
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, cfg)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the context's", err)
	}
	// Back to back, half a second is thousands of fdatasyncs on any disk; paced, a handful.
	if res.Fdatasyncs < 1 || res.Fdatasyncs > 20 || res.IntervalMs != 100 || !res.Interrupted {
		t.Errorf("fdatasyncs %d, interval %g ms, interrupted %v; want 1..20 at 100 ms, interrupted", res.Fdatasyncs, res.IntervalMs, res.Interrupted)
	}
}
