package diskprobe

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// pageSize is bbolt's page size on Linux (the OS page size).
const pageSize = 4096

// backendProbe commits the way bbolt does under etcd's backend (go.etcd.io/bbolt tx.Commit):
// the dirty pages, sorted by page id, one pwrite each; fdatasync; the meta page (page 0 or 1
// by transaction id); fdatasync. etcd's backend commits every --backend-batch-interval, the
// timer restarting after each commit (server/storage/backend/backend.go run). The db file is
// written out before timing, as a member's db is: its pages exist and are overwritten in place.
func backendProbe(ctx context.Context, dir string, cfg Config, deadline time.Time, rec *recorder) error {
	db, err := openDB(dir, cfg.DBBytes)
	if err != nil {
		return err
	}
	defer db.Close()
	return commitLoop(ctx, db, cfg, deadline, rec)
}

// openDB creates the db file and lays it out.
func openDB(dir string, size int64) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "db"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("backend pattern: %w", err)
	}
	if err := fillFile(f, size); err != nil {
		f.Close()
		return nil, fmt.Errorf("backend pattern: lay out db: %w", err)
	}
	return f, nil
}

// commitLoop commits into the db file f every cfg.CommitInterval until the deadline or ctx's end.
func commitLoop(ctx context.Context, f *os.File, cfg Config, deadline time.Time, rec *recorder) error {
	fd := int(f.Fd())
	page := make([]byte, pageSize)
	if _, err := rand.Read(page); err != nil {
		return err
	}
	pages := cfg.DBBytes / pageSize
	offs := make([]int64, cfg.CommitPages)
	rng := mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), 0x9e3779b97f4a7c15))
	timer := time.NewTimer(cfg.CommitInterval)
	defer timer.Stop()

	rec.start = time.Now()
	defer func() { rec.end = time.Now() }()
	for txid := int64(2); ; txid++ {
		var now time.Time
		select {
		case <-ctx.Done():
			return ctx.Err()
		case now = <-timer.C:
		}
		if !deadline.IsZero() && !now.Before(deadline) {
			return nil
		}
		for i := range offs {
			offs[i] = (2 + rng.Int64N(pages-2)) * pageSize // pages 0 and 1 are the metas
		}
		slices.Sort(offs)
		t0 := time.Now()
		for _, off := range offs {
			if err := writeAt(f, page, off, rec); err != nil {
				return err
			}
		}
		if err := timedSync(fd, rec); err != nil {
			return err
		}
		if err := writeAt(f, page, (txid%2)*pageSize, rec); err != nil {
			return err
		}
		if err := timedSync(fd, rec); err != nil {
			return err
		}
		rec.recordCommit(time.Since(t0))
		timer.Reset(cfg.CommitInterval)
	}
}

func writeAt(f *os.File, p []byte, off int64, rec *recorder) error {
	t0 := time.Now()
	n, err := f.WriteAt(p, off)
	rec.recordWrite(time.Since(t0), n)
	if err != nil {
		return fmt.Errorf("backend pattern: write: %w", err)
	}
	return nil
}

func timedSync(fd int, rec *recorder) error {
	t0, w0 := rec.syncStart()
	if err := fdatasync(fd); err != nil {
		return fmt.Errorf("backend pattern: fdatasync: %w", err)
	}
	rec.recordSync(t0, w0)
	return nil
}

// fillFile writes size bytes of zeros and syncs them, so later page writes overwrite
// allocated, written blocks.
func fillFile(f *os.File, size int64) error {
	chunk := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(chunk)) {
		n := min(int64(len(chunk)), size-off)
		if _, err := f.WriteAt(chunk[:n], off); err != nil {
			return err
		}
	}
	return fdatasync(int(f.Fd()))
}
