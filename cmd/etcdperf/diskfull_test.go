package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/internal/faults"
)

// fillUp allocates every free block of the filesystem under dir, the blocks
// reserved for root included, in the file dir/filler.
func fillUp(t *testing.T, dir string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "filler"), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var off int64
	for chunk := int64(16 << 20); chunk >= 4096; chunk /= 4 {
		for {
			err := unix.Fallocate(int(f.Fd()), 0, off, chunk)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			off += chunk
		}
	}
}

// entries lists dir's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestDiskFullOrReadOnly runs the disk probe and writes run files on an ext4
// filesystem that fills up during the probe, is full, then is read-only: each
// ends with one clear line and exit 2, and leaves no temp file and no partial
// run file.
func TestDiskFullOrReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: formats and mounts a loop device")
	}
	fs := faults.NewLoopExt4(t, 400<<20)
	mnt := fs.Mount
	runs := filepath.Join(mnt, "runs")
	if err := os.Mkdir(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	want := []string{"lost+found", "runs"}
	check := func(t *testing.T, r result, msg string) {
		t.Helper()
		t.Log(strings.TrimSpace(r.stderr))
		assertCleanError(t, r)
		if !strings.Contains(r.stderr, msg) {
			t.Errorf("stderr %q does not say %q", r.stderr, msg)
		}
		if got := entries(t, mnt); !slices.Equal(got, want) {
			t.Errorf("%s holds %v, want %v", mnt, got, want)
		}
		if got := entries(t, runs); len(got) != 0 {
			t.Errorf("results dir holds %v", got)
		}
	}

	t.Run("fills up during the probe", func(t *testing.T) {
		// 200 MiB of WAL in 64 MiB segments, 1 MiB a batch: the first segments
		// are allocated at once, the next when the first is full.
		runDir := t.TempDir()
		s := startBin(t, t.TempDir(), "disk", "--dir", mnt, "--pattern", "wal", "--size", "200m", "--block-size", "1048576", "--results-dir", runDir)
		s.waitFor(t, "probe folder", func() bool { return len(entries(t, mnt)) > len(want) })
		fillUp(t, mnt)
		if !s.wait(30 * time.Second) {
			t.Fatal("still running 30 s after the disk filled up")
		}
		if err := os.Remove(filepath.Join(mnt, "filler")); err != nil {
			t.Fatal(err)
		}
		check(t, result{stdout: s.stdout.String(), stderr: s.stderr.String(), code: s.code}, "no space left on device")
		if got := entries(t, runDir); len(got) != 0 {
			t.Errorf("a failed probe wrote %v", got)
		}
	})

	fillUp(t, mnt)
	want = []string{"filler", "lost+found", "runs"}
	t.Run("full before the probe", func(t *testing.T) {
		check(t, runBin(t, nil, "disk", "--dir", mnt, "--results-dir", t.TempDir()), "not enough free space")
	})
	t.Run("run file on a full disk", func(t *testing.T) {
		check(t, runBin(t, nil, "disk", "--dir", t.TempDir(), "--size", "1m", "--results-dir", runs), "no space left on device")
		ep, cli := benchEtcd(t)
		check(t, runBin(t, nil, "bench", "put", "--endpoints", ep, "--total", "50", "--results-dir", runs), "no space left on device")
		checkUntouched(t, cli)
	})

	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount %s read-only: %v: %s", mnt, err, out)
	}
	t.Run("read-only", func(t *testing.T) {
		check(t, runBin(t, nil, "disk", "--dir", mnt, "--results-dir", t.TempDir()), "read-only")
		check(t, runBin(t, nil, "disk", "--dir", t.TempDir(), "--size", "1m", "--results-dir", runs), "read-only file system")
		ep, cli := benchEtcd(t)
		check(t, runBin(t, nil, "bench", "put", "--endpoints", ep, "--total", "50", "--results-dir", runs), "not writable")
		checkUntouched(t, cli)
	})
}
