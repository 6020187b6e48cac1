package analyze

import (
	"os"
	"strings"
	"testing"
)

// FuzzMetricsText feeds arbitrary text through the whole metrics path — filter,
// parse, window deltas, every rule and the verdict — which must never panic,
// whatever a member (or a non-member) serves (report's FuzzAnalysis renders it too).
// Run: go test ./analyze/ -run '^$' -fuzz FuzzMetricsText -fuzztime 30s
//
// Seeds are slices of the recorded fixtures, not whole ones: the fuzzer minimizes
// every new interesting input, and minimizing 100 KB inputs takes its full minute.
func FuzzMetricsText(f *testing.F) {
	for _, name := range []string{"etcd-3.6-after.txt", "etcd-3.4-after.txt"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		s := string(b)
		// The WAL fsync histogram and the leader gauges, cut at line boundaries.
		wal := s[strings.Index(s, "# HELP etcd_disk_wal_fsync"):]
		wal = wal[:strings.Index(wal, "# HELP etcd_disk_wal_write")]
		f.Add(wal, wal+"etcd_server_has_leader 1\n")
		f.Add(s[:4096], s[:strings.LastIndex(s[:4096], "\n")+1])
	}
	f.Add("# TYPE etcd_disk_wal_fsync_duration_seconds histogram\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 1\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 2\netcd_disk_wal_fsync_duration_seconds_sum 1\netcd_disk_wal_fsync_duration_seconds_count 2\n",
		"# TYPE etcd_disk_wal_fsync_duration_seconds histogram\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 0\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 0\netcd_disk_wal_fsync_duration_seconds_sum 0\netcd_disk_wal_fsync_duration_seconds_count 0\n")
	f.Add("etcd_server_has_leader 1\n", "etcd_server_has_leader NaN\n")
	f.Add("garbage {", "")
	f.Add("node_load1 1\n", "process_cpu_seconds_total -5\netcd_mvcc_put_total +Inf\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		_ = Filter(before)
		_, _ = Dumps(Filter(before), Filter(after), Options{Cores: 2, MemoryBytes: 1 << 30, WindowSeconds: 5})
	})
}
