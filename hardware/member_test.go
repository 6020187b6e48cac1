package hardware

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/etcdperf/etcdperf/results"
)

func TestReadMember(t *testing.T) {
	proc := fstest.MapFS{
		"proc/net/tcp":     file(procNetTCP),
		"proc/200/fd/9":    link("socket:[1517]"),
		"proc/200/cgroup":  file("4:memory:/etcd\n1:cpu:/etcd\n"),
		"proc/300/cgroup":  file("4:memory:/\n1:cpu:/\n"),
		"proc/self/cgroup": file("4:memory:/\n1:cpu:/\n"),
		"sys/fs/cgroup/memory/etcd/memory.limit_in_bytes": file("314572800\n"),
		"sys/fs/cgroup/memory/memory.limit_in_bytes":      file("9223372036854771712\n"),
		"sys/fs/cgroup/cpu/etcd/cpu.cfs_quota_us":         file("15000\n"),
		"sys/fs/cgroup/cpu/etcd/cpu.cfs_period_us":        file("100000\n"),
	}
	root := tree(t, proc)
	for _, tc := range []struct {
		name   string
		urls   []string
		pid    int
		want   results.Member
		noData bool
	}{
		{"found by its port", []string{"unix://etcd.sock", "http://127.0.0.1:2379"}, 0,
			results.Member{Pid: 200, MemoryLimitBytes: 300 << 20, CPUQuotaCores: 0.15}, false},
		{"pid given, no limits", nil, 300, results.Member{Pid: 300}, false},
		{"nothing listens on its port", []string{"http://127.0.0.1:2381"}, 0, results.Member{}, true},
		{"no client URL", nil, 0, results.Member{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := results.Member{ClientURLs: tc.urls}
			err := ReadMember(root, &m, tc.pid)
			switch {
			case tc.noData && !errors.Is(err, ErrNoData):
				t.Fatalf("err = %v, want ErrNoData", err)
			case !tc.noData && err != nil:
				t.Fatal(err)
			}
			if m.Pid != tc.want.Pid || m.MemoryLimitBytes != tc.want.MemoryLimitBytes || m.CPUQuotaCores != tc.want.CPUQuotaCores {
				t.Errorf("member = %+v, want %+v", m, tc.want)
			}
		})
	}
}
