package hardware

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/etcdperf/etcdperf/results"
)

func TestRunStatuses(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, results.CollectorOK},
		{ErrNoData, results.CollectorNoData},
		{errors.New("boom"), results.CollectorError},
	} {
		st := run(Collector{Name: "x", Collect: func(Config, *results.Host) error { return tc.err }}, Config{}, &results.Host{})
		if st.Status != tc.want || st.Name != "x" || st.DurationMs < 0 {
			t.Errorf("run(err=%v) = %+v, want status %s", tc.err, st, tc.want)
		}
	}
}

func TestCgroupNarrowsMemory(t *testing.T) {
	h := &results.Host{MemoryBytes: 16 << 30}
	fsys := fstest.MapFS{
		"proc/self/cgroup": file("4:memory:/m\n"),
		"sys/fs/cgroup/memory/m/memory.limit_in_bytes": file("1073741824\n"),
	}
	if err := collectCgroup(Config{Root: tree(t, fsys)}, h); err != nil {
		t.Fatal(err)
	}
	if h.MemoryBytes != 1<<30 || h.CgroupMemoryLimitBytes != 1<<30 {
		t.Errorf("host = %+v, want memory narrowed to the 1 GiB limit", h)
	}
}

// TestCollectHere runs the real collectors on this machine: each must report, and
// only with ok or no-data (a VM without cgroups or sysfs disks is not a failure).
func TestCollectHere(t *testing.T) {
	h := Collect(Config{DataDir: t.TempDir()})
	if len(h.Collectors) != len(Collectors) {
		t.Fatalf("%d statuses for %d collectors", len(h.Collectors), len(Collectors))
	}
	for _, st := range h.Collectors {
		if st.Status == results.CollectorError {
			t.Errorf("collector %s failed: %s", st.Name, st.Error)
		}
	}
	if h.CPUs < 1 || h.MemoryBytes <= 0 {
		t.Errorf("host = %+v, want CPUs and memory", h)
	}
	if h.DataDirFS == "" {
		t.Error("no filesystem type for the temp dir")
	}
	if st := Collect(Config{}).Collectors; st[len(st)-1].Status != results.CollectorNoData {
		t.Errorf("disk without a data dir = %+v, want no-data", st[len(st)-1])
	}
}
