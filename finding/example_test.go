package finding_test

import (
	"fmt"

	"github.com/etcdperf/etcdperf/finding"
)

// Findings are graded with one vocabulary: Worst keeps the worse of two
// severities, and Bad says whether one needs attention.
func ExampleWorst() {
	findings := []finding.Finding{
		{Class: finding.ClassDisk, Severity: finding.Warn, Summary: "wal fsync p99 12 ms"},
		{Class: finding.ClassCPU, Severity: finding.OK},
	}
	worst := finding.OK
	for _, f := range findings {
		worst = finding.Worst(worst, f.Severity)
		if f.Severity.Bad() {
			fmt.Println(f.Class, f.Severity, f.Summary)
		}
	}
	fmt.Println("worst:", worst)
	// Output:
	// disk warn wal fsync p99 12 ms
	// worst: warn
}
