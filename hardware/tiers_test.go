package hardware

import (
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

func TestWorkloadTier(t *testing.T) {
	for _, tc := range []struct {
		w    finding.Workload
		want string
	}{
		{finding.Workload{}, "small"},
		{finding.Workload{Clients: 50, RPS: 150, DataBytes: 50e6}, "small"},
		{finding.Workload{Clients: 50, RPS: 200}, "medium"}, // "< 200" is exclusive
		{finding.Workload{Clients: 100}, "medium"},
		{finding.Workload{RPS: 5000}, "large"},
		{finding.Workload{Clients: 10, RPS: 100, DataBytes: 800e6}, "large"},
		{finding.Workload{RPS: 15000}, "xlarge"},
		{finding.Workload{DataBytes: 2e9}, "xlarge"},
	} {
		if got := WorkloadTier(tc.w).Name; got != tc.want {
			t.Errorf("WorkloadTier(%+v) = %s, want %s", tc.w, got, tc.want)
		}
	}
}

func TestHostTier(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *results.Host
		want string
		ok   bool
	}{
		{"m4.large", &results.Host{CPUs: 2, MemoryBytes: 8e9}, "small", true},
		{"8 GB VM reporting 7.7 GB", &results.Host{CPUs: 2, MemoryBytes: 7.7e9}, "small", true},
		{"cores without memory", &results.Host{CPUs: 16, MemoryBytes: 16e9}, "medium", true},
		{"cpu quota narrows", &results.Host{CPUs: 16, CgroupCPUQuota: 2, MemoryBytes: 64e9}, "small", true},
		{"m4.4xlarge", &results.Host{CPUs: 16, MemoryBytes: 64e9}, "xlarge", true},
		{"below small", &results.Host{CPUs: 1, MemoryBytes: 4e9}, "", false},
		{"unknown", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := HostTier(tc.h)
			if ok != tc.ok || got.Name != tc.want {
				t.Errorf("HostTier = %s, %v; want %s, %v", got.Name, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestGradeHost(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *results.Host
		w    finding.Workload
		want string
	}{
		{"mismatch in words", &results.Host{CPUs: 2, MemoryBytes: 32e9}, finding.Workload{RPS: 5000},
			"this workload is large; this host meets small: 2 CPUs where large wants 8"},
		{"enough", &results.Host{CPUs: 8, MemoryBytes: 32e9}, finding.Workload{Clients: 200},
			"this workload is medium; this host meets large, enough for it"},
		{"below small", &results.Host{CPUs: 2, MemoryBytes: 4e9}, finding.Workload{RPS: 100},
			"this workload is small; this host is below small: 4.0 GB of memory where small wants 8 GB"},
		{"unknown host", nil, finding.Workload{RPS: 100}, "this workload is small; this host's CPUs and memory are unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GradeHost(tc.h, tc.w).Summary; got != tc.want {
				t.Errorf("summary = %q\nwant      %q", got, tc.want)
			}
		})
	}
}
