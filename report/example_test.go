package report_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// A tool renders a run file as etcdperf report does: here the Markdown of a
// recorded bench run (testdata), of which the operations table is printed.
// The other formats are in report.ReportFormats; report.Compare compares two runs.
func ExampleRender() {
	run, err := results.ReadFile("testdata/run-fixture.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	var out bytes.Buffer
	if err := report.Render(&out, run, "run-fixture.json", "markdown", "", ""); err != nil {
		fmt.Println(err)
		return
	}
	_, ops, _ := strings.Cut(out.String(), "## Operations\n\n")
	table, _, _ := strings.Cut(ops, "\n\n")
	fmt.Println(table)
	// Output:
	// | op | requests | errors | throughput/s | target/s | late starts |
	// | --- | --- | --- | --- | --- | --- |
	// | put | 20006 | 6 | 1000 | 1000 | 0 |
	// | range | 9802 | 6 | 490 | closed loop | 0 |
}
