package analyze

import (
	"bytes"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
)

// TestVerbose: without -v the simple rendering shows ok classes in one line and
// only graded-bad evidence; with it, every signal of every class.
func TestVerbose(t *testing.T) {
	r := Report{
		Verdict: finding.Verdict{Status: finding.StatusPass, Bottleneck: "cpu", Summary: "pass"},
		Findings: []finding.Finding{
			{Class: finding.ClassDisk, Severity: finding.OK, Summary: "fine", Evidence: []finding.Evidence{{Signal: "wal fsync p99", Severity: finding.OK, Observed: "1 ms"}}},
			{Class: finding.ClassCPU, Severity: finding.Warn, Summary: "busy", Evidence: []finding.Evidence{
				{Signal: "server CPU", Severity: finding.Warn, Observed: "85%", Threshold: "warn ≥ 80%", Source: "s"},
				{Signal: "host CPU", Severity: finding.OK, Observed: "40%"}}},
		},
	}
	var quiet, loud bytes.Buffer
	if err := r.Write(&quiet, FormatSimple); err != nil {
		t.Fatal(err)
	}
	r.Verbose = true
	if err := r.Write(&loud, FormatSimple); err != nil {
		t.Fatal(err)
	}
	q, l := quiet.String(), loud.String()
	if !strings.HasPrefix(q, "PASS") || !strings.Contains(q, "[ok] disk (-v shows every signal)") || strings.Contains(q, "wal fsync") ||
		!strings.Contains(q, "server CPU") || strings.Contains(q, "host CPU") || !strings.Contains(q, "1 more signal") {
		t.Errorf("at a glance:\n%s", q)
	}
	for _, s := range []string{"wal fsync", "host CPU", "server CPU", "[ok] disk: fine"} {
		if !strings.Contains(l, s) {
			t.Errorf("verbose lacks %q:\n%s", s, l)
		}
	}
}
