package hardware

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// tree writes the fixture fsys (paths from "/", links as fs.ModeSymlink) into
// a temp dir and returns it: procfs reads a mount point, not an fs.FS. As the
// kernel shows it, proc/self is a link: proc/self/X is written to proc/1000/X.
func tree(t testing.TB, fsys fstest.MapFS) string {
	t.Helper()
	root := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(root, "proc"), 0o755))
	for name, f := range fsys {
		if rest, ok := strings.CutPrefix(name, "proc/self/"); ok {
			name = "proc/1000/" + rest
			fsys["proc/self"] = link("1000")
		}
		p := filepath.Join(root, name)
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		if f.Mode&fs.ModeSymlink == 0 {
			must(os.WriteFile(p, f.Data, 0o644))
		}
	}
	for name, f := range fsys {
		if f.Mode&fs.ModeSymlink != 0 {
			p := filepath.Join(root, name)
			must(os.MkdirAll(filepath.Dir(p), 0o755))
			must(os.Symlink(string(f.Data), p))
		}
	}
	return root
}

func TestReadCgroup(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fs      fstest.MapFS
		pid     int // 0: proc/self
		want    Cgroup
		noData  bool
		wantErr bool
	}{
		{
			name: "v1 limit on the process's cgroup",
			fs: fstest.MapFS{
				"proc/self/cgroup": file("12:memory:/etcd\n4:cpu,cpuacct:/etcd\n1:name=systemd:/\n"),
				"sys/fs/cgroup/memory/etcd/memory.limit_in_bytes":  file("536870912\n"),
				"sys/fs/cgroup/memory/memory.limit_in_bytes":       file("9223372036854771712\n"),
				"sys/fs/cgroup/cpu,cpuacct/etcd/cpu.cfs_quota_us":  file("50000\n"),
				"sys/fs/cgroup/cpu,cpuacct/etcd/cpu.cfs_period_us": file("100000\n"),
				"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":       file("-1\n"),
				"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us":      file("100000\n"),
			},
			want: Cgroup{Version: 1, MemoryLimitBytes: 512 << 20, CPUQuota: 0.5},
		},
		{
			name: "v1 parent limit applies to the child",
			fs: fstest.MapFS{
				"proc/self/cgroup": file("4:memory:/a/b\n1:cpu:/a/b\n"),
				"sys/fs/cgroup/memory/a/b/memory.limit_in_bytes": file("9223372036854771712\n"),
				"sys/fs/cgroup/memory/a/memory.limit_in_bytes":   file("1073741824\n"),
			},
			want: Cgroup{Version: 1, MemoryLimitBytes: 1 << 30},
		},
		{
			name: "v1 unlimited, namespaced path missing: the mount root",
			fs: fstest.MapFS{
				"proc/self/cgroup":                           file("4:memory:/process_api/84f5\n1:cpu:/\n"),
				"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
				"sys/fs/cgroup/cpu/cpu.cfs_quota_us":         file("-1\n"),
				"sys/fs/cgroup/cpu/cpu.cfs_period_us":        file("100000\n"),
			},
			want: Cgroup{Version: 1},
		},
		{
			name: "v2 limits",
			fs: fstest.MapFS{
				"proc/self/cgroup":                                   file("0::/system.slice/etcd.service\n"),
				"sys/fs/cgroup/cgroup.controllers":                   file("cpu memory io\n"),
				"sys/fs/cgroup/system.slice/etcd.service/memory.max": file("2147483648\n"),
				"sys/fs/cgroup/system.slice/etcd.service/cpu.max":    file("150000 100000\n"),
				"sys/fs/cgroup/system.slice/memory.max":              file("max\n"),
			},
			want: Cgroup{Version: 2, MemoryLimitBytes: 2 << 30, CPUQuota: 1.5},
		},
		{
			name: "v2 no limits",
			fs: fstest.MapFS{
				"proc/self/cgroup":                 file("0::/\n"),
				"sys/fs/cgroup/cgroup.controllers": file("cpu memory\n"),
				"sys/fs/cgroup/memory.max":         file("max\n"),
				"sys/fs/cgroup/cpu.max":            file("max 100000\n"),
			},
			want: Cgroup{Version: 2},
		},
		{
			name: "v2 garbage",
			fs: fstest.MapFS{
				"proc/self/cgroup":                 file("0::/\n"),
				"sys/fs/cgroup/cgroup.controllers": file("cpu memory\n"),
				"sys/fs/cgroup/memory.max":         file("lots\n"),
			},
			wantErr: true,
		},
		{
			name: "v1 another process: its own group, not the reader's",
			fs: fstest.MapFS{
				"proc/self/cgroup": file("4:memory:/\n1:cpu:/\n"),
				"proc/4242/cgroup": file("4:memory:/etcd-member\n1:cpu:/etcd-member\n"),
				"sys/fs/cgroup/memory/etcd-member/memory.limit_in_bytes": file("314572800\n"),
				"sys/fs/cgroup/memory/memory.limit_in_bytes":             file("9223372036854771712\n"),
				"sys/fs/cgroup/cpu/etcd-member/cpu.cfs_quota_us":         file("15000\n"),
				"sys/fs/cgroup/cpu/etcd-member/cpu.cfs_period_us":        file("100000\n"),
				"sys/fs/cgroup/cpu/cpu.cfs_quota_us":                     file("-1\n"),
				"sys/fs/cgroup/cpu/cpu.cfs_period_us":                    file("100000\n"),
			},
			pid:  4242,
			want: Cgroup{Version: 1, MemoryLimitBytes: 300 << 20, CPUQuota: 0.15},
		},
		{
			name: "v2 another process",
			fs: fstest.MapFS{
				"proc/self/cgroup":                                file("0::/user.slice\n"),
				"proc/77/cgroup":                                  file("0::/system.slice/etcd.service\n"),
				"sys/fs/cgroup/cgroup.controllers":                file("cpu memory\n"),
				"sys/fs/cgroup/user.slice/memory.max":             file("1073741824\n"),
				"sys/fs/cgroup/system.slice/etcd.service/cpu.max": file("max 100000\n"),
				"sys/fs/cgroup/system.slice/memory.max":           file("4294967296\n"),
			},
			pid:  77,
			want: Cgroup{Version: 2, MemoryLimitBytes: 4 << 30},
		},
		{
			name: "another process outside this cgroup namespace",
			fs: fstest.MapFS{
				"proc/77/cgroup":                   file("0::/../../system.slice/etcd.service\n"),
				"sys/fs/cgroup/cgroup.controllers": file("cpu memory\n"),
				"sys/fs/cgroup/memory.max":         file("1073741824\n"),
			},
			pid:    77,
			noData: true,
		},
		{name: "no such process", fs: fstest.MapFS{"proc/self/cgroup": file("0::/\n")}, pid: 9, noData: true},
		{name: "no proc", fs: fstest.MapFS{}, noData: true},
		{name: "no cgroup files", fs: fstest.MapFS{"proc/self/cgroup": file("4:memory:/x\n")}, noData: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadCgroup(tree(t, tc.fs), tc.pid)
			switch {
			case tc.noData:
				if !errors.Is(err, ErrNoData) {
					t.Fatalf("err = %v, want ErrNoData", err)
				}
				return
			case tc.wantErr:
				if err == nil || errors.Is(err, ErrNoData) {
					t.Fatalf("err = %v, want a failure", err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("ReadCgroup = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseCPUMax(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    float64
		wantErr bool
	}{
		{"max 100000\n", 0, false},
		{"200000 100000", 2, false},
		{"50000 100000", 0.5, false},
		{"x 100000", 0, true},
		{"100000", 0, true},
		{"100 0", 0, true},
	} {
		got, err := parseCPUMax(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parseCPUMax(%q) = %g, %v; want %g, err %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
