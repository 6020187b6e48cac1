package inspect

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
)

// issuesOf lists the known performance problems of version (analyze's table, the
// one every verdict uses); ok is false when the version cannot be parsed.
func issuesOf(version string) ([]analyze.KnownProblem, bool) { return analyze.KnownProblems(version) }

func versionFinding(version string) (finding.Finding, bool) {
	if version == "" {
		return finding.Finding{}, false
	}
	found, ok := issuesOf(version)
	if !ok {
		return finding.Finding{}, false
	}
	f := finding.Finding{Class: finding.ClassHealth, Severity: finding.OK, Summary: fmt.Sprintf("etcd %s has no known performance problem in etcdperf's table", version)}
	if len(found) == 0 {
		f.Evidence = []finding.Evidence{{Signal: "server version", Observed: version, Threshold: "outside the known-issue ranges", Source: "etcdperf known-problem table (analyze/versions.go)", Severity: finding.OK}}
		return f, true
	}
	f.Severity = finding.Warn
	f.Summary = fmt.Sprintf("etcd %s has %d known performance problem(s) fixed in later releases", version, len(found))
	var fixes []string
	for _, k := range found {
		f.Evidence = append(f.Evidence, finding.Evidence{Signal: "server version", Observed: version + ": " + k.Summary,
			Threshold: fmt.Sprintf("< %s or ≥ %s", k.From, k.Fixed), Source: k.Source, Severity: finding.Warn})
		fixes = append(fixes, k.Fixed)
	}
	f.Advice = "upgrade to the latest patch release of the same minor version (at least " + strings.Join(fixes, ", ") + ")"
	return f, true
}
