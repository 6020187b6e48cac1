package analyze

import (
	"io"
	"os"
	"testing"
)

// FuzzMetricsText feeds arbitrary text through the whole metrics path — filter,
// parse, window deltas, every rule, the verdict and rendering — which must never
// panic, whatever a member (or a non-member) serves.
// Run: go test ./analyze/ -run '^$' -fuzz FuzzMetricsText -fuzztime 30s
func FuzzMetricsText(f *testing.F) {
	for _, name := range []string{"etcd-3.6-after.txt", "etcd-3.4-after.txt"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), string(b[:len(b)/2]))
	}
	f.Add("# TYPE etcd_disk_wal_fsync_duration_seconds histogram\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 1\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 2\netcd_disk_wal_fsync_duration_seconds_sum 1\netcd_disk_wal_fsync_duration_seconds_count 2\n",
		"# TYPE etcd_disk_wal_fsync_duration_seconds histogram\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 0\netcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 0\netcd_disk_wal_fsync_duration_seconds_sum 0\netcd_disk_wal_fsync_duration_seconds_count 0\n")
	f.Add("etcd_server_has_leader 1\n", "etcd_server_has_leader NaN\n")
	f.Add("garbage {", "")
	f.Add("node_load1 1\n", "process_cpu_seconds_total -5\netcd_mvcc_put_total +Inf\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		_ = Filter(before)
		rep, err := Dumps(Filter(before), Filter(after), Options{Cores: 2, MemoryBytes: 1 << 30, WindowSeconds: 5})
		if err != nil {
			return
		}
		for _, format := range []string{FormatSimple, FormatTable, FormatJSON} {
			if err := rep.Write(io.Discard, format); err != nil && format != FormatJSON {
				t.Fatalf("render %s: %v", format, err)
			}
		}
	})
}
