package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// FUSE is the feature of mounting a FUSE filesystem (root and /dev/fuse).
func FUSE() error {
	if os.Geteuid() != 0 {
		return errors.New("mounting FUSE needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("no FUSE (no /dev/fuse): %w", err)
	}
	return nil
}

// SlowSync is the delay of a slow-sync disk, changeable while it is mounted (to
// calibrate it against a measured fsync latency).
type SlowSync struct{ ns atomic.Int64 }

// Set makes every later flush wait d.
func (s *SlowSync) Set(d time.Duration) { s.ns.Store(int64(d)) }

// Delay is the current delay.
func (s *SlowSync) Delay() time.Duration { return time.Duration(s.ns.Load()) }

// NewSlowSyncLoop is an ext4 on a loop device whose every flush takes at least
// delay (changed later through the SlowSync it returns): its image lives on a FUSE mirror of a folder in memory that holds each
// fsync for delay before doing it. A blkio throttle cannot make a steady small
// latency: once its budget is spent it holds writes to the end of its 100 ms
// slice, so a throttled fsync p99 is ~100 ms or none. This makes one of a few
// milliseconds, every time, as a slower disk would.
//
// The ext4 has no journal, so an fdatasync is one flush of the device and waits
// the delay once. With a journal, the fdatasyncs that commit metadata flush
// again: etcd's WAL alone on the disk, under a 10 ms delay, had a mean fsync of
// 11.3 ms but a p99 of 26 ms (over 1% of them past 16 ms); without a journal,
// 266 of 267 were in 8–16 ms.
func NewSlowSyncLoop(t testing.TB, size int64, delay time.Duration) (*Loop, *SlowSync) {
	t.Helper()
	if err := FUSE(); err != nil {
		t.Skipf("cannot slow fsyncs down: %v", err)
	}
	slow := &SlowSync{}
	slow.Set(delay)
	backing := MemDir(t)
	root, err := fs.NewLoopbackRoot(backing)
	if err != nil {
		t.Fatal(err)
	}
	node := &slowSyncNode{LoopbackNode: root.(*fs.LoopbackNode), slow: slow}
	mnt := t.TempDir()
	srv, err := fs.Mount(mnt, node, &fs.Options{MountOptions: fuse.MountOptions{DirectMount: true, FsName: "etcdperf-slowsync", Name: "slowsync"}})
	if err != nil {
		t.Skipf("cannot mount FUSE at %s: %v", mnt, err)
	}
	// Registered before the loop's cleanups, so it runs after them.
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	img := mnt + "/disk.img"
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	return newLoopExt4(t, img, "-O", "^has_journal"), slow
}

// slowSyncNode is a file or folder of the mirror: fsyncs wait delay first.
type slowSyncNode struct {
	*fs.LoopbackNode
	slow *SlowSync
}

var (
	_ fs.NodeFsyncer     = (*slowSyncNode)(nil)
	_ fs.NodeWrapChilder = (*slowSyncNode)(nil)
)

// WrapChild makes every file and folder of the mirror slow too.
func (n *slowSyncNode) WrapChild(_ context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &slowSyncNode{LoopbackNode: ops.(*fs.LoopbackNode), slow: n.slow}
}

// Fsync waits, then syncs the file as the mirror would.
func (n *slowSyncNode) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	time.Sleep(n.slow.Delay())
	if s, ok := f.(fs.FileFsyncer); ok {
		return s.Fsync(ctx, flags)
	}
	return 0
}
