package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
)

// verdictLine is a command's first line: the status in capitals, the
// bottleneck, and the summary without the status it opens with ("pass: …").
// Every command that judges states its verdict there once; what follows only
// adds to it.
func verdictLine(v finding.Verdict) string {
	s := strings.TrimPrefix(v.Summary, string(v.Status)+": ")
	head := strings.ToUpper(string(v.Status)) + "  bottleneck: " + v.Bottleneck
	if s == "" {
		return head
	}
	return head + " — " + s
}

// invalidNote is the generator's reason a run is invalid, for the lines below
// the verdict; "" when the run is valid or the verdict's summary says it already.
func invalidNote(valid bool, reason string, v finding.Verdict) string {
	if valid || strings.Contains(v.Summary, reason) {
		return ""
	}
	return "run marked invalid by the generator: " + reason
}

// writeFindings writes the findings that warn or fail, one line each (with
// their advice when advice is set).
func writeFindings(w io.Writer, fs []finding.Finding, advice bool) {
	for _, f := range fs {
		if f.Severity == finding.Fail || f.Severity == finding.Warn {
			fmt.Fprintf(w, "  [%s] %s: %s\n", f.Severity, f.Class, f.Summary)
			if f.Risk != "" {
				fmt.Fprintf(w, "         risk, not the bottleneck: %s\n", f.Risk)
			}
			if advice && f.Advice != "" {
				fmt.Fprintf(w, "         advice: %s\n", f.Advice)
			}
		}
	}
}
