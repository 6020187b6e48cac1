package analyze_test

import (
	"fmt"

	"github.com/etcdperf/etcdperf/analyze"
)

// A tool grades what an etcd member's /metrics said before and after a run:
// here two dumps recorded in testdata around six seconds of puts to a member whose disk is
// throttled to 80 IOPS (analyze.Run does the same for a run file read with
// results.ReadFile). The verdict names the bottleneck; each finding has its
// class, severity and evidence graded against a sourced threshold.
func ExampleDumpFiles() {
	res, err := analyze.DumpFiles("testdata/truth/disk-1m-iops-80-before.txt", "testdata/truth/disk-1m-iops-80-after.txt", analyze.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Verdict.Status, res.Verdict.Bottleneck)
	for _, f := range res.Findings {
		if f.Severity.Bad() {
			fmt.Println(f.Class, f.Severity)
			for _, e := range f.Evidence {
				if e.Severity.Bad() {
					fmt.Printf("  %s %s\n", e.Severity, e.Signal)
				}
			}
		}
	}
	// Output:
	// fail disk
	// disk fail
	//   fail wal fsync p99 (etcd_disk_wal_fsync_duration_seconds)
	//   fail backend commit p99 (etcd_disk_backend_commit_duration_seconds)
	//   warn slow applies per 1,000 requests (etcd_server_slow_apply_total delta)
}
