package diskprobe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/etcdperf/etcdperf/hardware"
)

func TestJudgeFS(t *testing.T) {
	const ext4 = 0xEF53
	for _, tc := range []struct {
		name               string
		magic, flags, free int64
		allowTmpfs         bool
		want               error
	}{
		{"ext4 with room", ext4, 0, 1 << 30, false, nil},
		{"tmpfs refused", hardware.MagicTmpfs, 0, 1 << 30, false, ErrTmpfs},
		{"ramfs refused", hardware.MagicRamfs, 0, 1 << 30, false, ErrTmpfs},
		{"tmpfs allowed", hardware.MagicTmpfs, 0, 1 << 30, true, nil},
		{"read-only", ext4, unix.ST_RDONLY, 1 << 30, false, ErrReadOnly},
		{"full", ext4, 0, 10 << 20, false, ErrNoSpace},
		{"exactly enough", ext4, 0, 23 << 20, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := judgeFS("/d", tc.magic, tc.flags, tc.free, 23<<20, tc.allowTmpfs)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("judgeFS = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dir  string
		need int64
		want error
	}{
		{"missing", filepath.Join(dir, "nope"), 0, ErrNotDir},
		{"a file", file, 0, ErrNotDir},
		{"empty", "", 0, ErrNotDir},
		{"more than any disk", dir, 1 << 62, ErrNoSpace},
		{"fine", dir, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkDir(tc.dir, tc.need, true)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("checkDir = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestRefusesTmpfs runs the probe on a real tmpfs when the machine has one at /dev/shm.
func TestRefusesTmpfs(t *testing.T) {
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || int64(uint32(st.Type)) != hardware.MagicTmpfs {
		t.Skip("/dev/shm is not a tmpfs here; TestJudgeFS covers the rule")
	}
	dir, err := os.MkdirTemp("/dev/shm", "diskprobe-test-")
	if err != nil {
		t.Skipf("cannot create a folder on /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	_, err = Run(context.Background(), Config{Dir: dir, Size: 64 << 10})
	if !errors.Is(err, ErrTmpfs) {
		t.Fatalf("Run on tmpfs = %v, want ErrTmpfs", err)
	}
	res, err := Run(context.Background(), Config{Dir: dir, Size: 64 << 10, AllowTmpfs: true})
	if err != nil || res.Writes != (64<<10)/2300 {
		t.Fatalf("Run on tmpfs with AllowTmpfs = %d writes, %v", res.Writes, err)
	}
	if res.Filesystem != "tmpfs" || res.Device != nil {
		t.Errorf("facts = %q, %+v; want tmpfs and no block device", res.Filesystem, res.Device)
	}
}
