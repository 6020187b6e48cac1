package diskprobe

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// fioProbe does what `fio --rw=write --ioengine=sync --fdatasync=1 --size=S --bs=B` does
// (checked with strace, fio 3.33): lay the file out with fallocate(mode 0) — fio's default
// fallocate=native — close it, reopen it, drop its cache, then write floor(S/B) blocks
// sequentially, each followed by fdatasync. The file is allocated but unwritten, so every
// fdatasync also commits the extent conversion to the journal, as it does under fio.
func fioProbe(ctx context.Context, dir string, cfg Config, deadline time.Time, rec *recorder) error {
	path := filepath.Join(dir, "etcdperf.0.0") // fio's <name>.<job>.<file>
	if err := layout(path, cfg.Size); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("fio pattern: %w", err)
	}
	defer f.Close()
	fd := int(f.Fd())
	// fio's invalidate=1 and its sequential hint; advisory, so errors do not matter.
	_ = unix.Fadvise(fd, 0, cfg.Size, unix.FADV_DONTNEED)
	_ = unix.Fadvise(fd, 0, cfg.Size, unix.FADV_SEQUENTIAL)

	buf := make([]byte, cfg.BlockSize)
	if _, err := rand.Read(buf); err != nil { // fio writes random buffers too
		return err
	}
	blocks := cfg.Size / int64(cfg.BlockSize)
	st := newStopper(ctx, deadline)
	rec.start = time.Now()
	defer func() { rec.end = time.Now() }()
	now := rec.start
	for i := int64(0); i < blocks && !st.stop(now); i++ {
		t0 := time.Now()
		n, err := f.Write(buf)
		t1 := time.Now()
		if err != nil {
			return fmt.Errorf("fio pattern: write: %w", err)
		}
		rec.recordWrite(t1.Sub(t0), n)
		t2, w2 := rec.syncStart()
		if err := fdatasync(fd); err != nil {
			return fmt.Errorf("fio pattern: fdatasync: %w", err)
		}
		rec.recordSync(t2, w2)
		now = time.Now()
	}
	return ctx.Err()
}

// layout creates path and allocates size bytes with fallocate mode 0, as fio does by default.
// Where the filesystem cannot fallocate, fio carries on with a sparse file, and so do we.
func layout(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Close()
	if err := fallocate(f, size); err != nil {
		return fmt.Errorf("fallocate %s: %w", path, err)
	}
	return f.Close()
}

// fallocate allocates size bytes and extends the file (mode 0), the way fio's
// fallocate=native and etcd's fileutil.Preallocate(f, size, true) do, with etcd's
// fallback to ftruncate where fallocate is not supported.
func fallocate(f *os.File, size int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), 0, 0, size)
		switch err {
		case nil:
			return nil
		case unix.EINTR:
			continue
		case unix.EOPNOTSUPP:
			return f.Truncate(size)
		}
		return err
	}
}

// fdatasync retries on EINTR, which some filesystems (NFS, FUSE) return.
func fdatasync(fd int) error {
	for {
		if err := unix.Fdatasync(fd); err != unix.EINTR {
			return err
		}
	}
}

// FioCommand renders the fio job that does the same I/O as the pattern: exactly so for fio,
// the closest job for wal and etcd (the WAL side: the segment's size, and the batch as the
// block). The backend pattern has none: fio cannot pace commits of two fdatasyncs each.
func FioCommand(pattern string, cfg Config) string {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return ""
	}
	dir := shellQuote(cfg.Dir)
	switch pattern {
	case PatternFio:
		return fmt.Sprintf("fio --rw=write --ioengine=sync --fdatasync=1 --directory=%s --size=%s --bs=%d --name=etcdperf",
			dir, FormatSize(cfg.Size), cfg.BlockSize)
	case PatternWAL, PatternEtcd:
		return fmt.Sprintf("fio --rw=write --ioengine=sync --fdatasync=1 --directory=%s --filesize=%d --io_size=%s --bs=%d --name=etcdperf-wal",
			dir, cfg.SegmentBytes, FormatSize(cfg.Size), walBatchBytes(cfg.BlockSize))
	}
	return ""
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// FormatSize renders a byte count as fio reads it, with the largest exact 1024-power suffix.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"t", 40}, {"g", 30}, {"m", 20}, {"k", 10}} {
		if n > 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
