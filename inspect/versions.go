package inspect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
)

// knownIssue is a performance problem of a range of etcd releases, fixed in a later
// one. Correctness bugs are left out on purpose: this table explains slowness.
type knownIssue struct {
	from, fixed string // affected: from ≤ version < fixed
	summary     string
	source      string
}

// knownIssues, each with the changelog entry or issue that documents it.
var knownIssues = []knownIssue{
	{
		from: "3.5.0", fixed: "3.5.8",
		summary: "watch streams starve under heavy read load (gRPC and HTTP share one server; 3.5.8 adds --listen-client-http-urls and a random HTTP/2 frame scheduler)",
		source:  "https://github.com/etcd-io/etcd/issues/15402; CHANGELOG-3.5 v3.5.8",
	},
	{
		from: "3.5.16", fixed: "3.5.19",
		summary: "compaction blocks requests: every request sees a latency spike (seconds on large clusters) at each compaction",
		source:  "https://github.com/etcd-io/etcd/issues/19406; fix https://github.com/etcd-io/etcd/pull/19405 (CHANGELOG-3.5 v3.5.19)",
	},
}

// parseVersion reads "3.5.17" (a "v" prefix and a pre-release suffix are ignored).
func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	s = strings.TrimPrefix(s, "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// issuesOf lists the known performance problems of version; ok is false when the
// version cannot be parsed.
func issuesOf(version string) (found []knownIssue, ok bool) {
	v, ok := parseVersion(version)
	if !ok {
		return nil, false
	}
	for _, k := range knownIssues {
		from, _ := parseVersion(k.from)
		fixed, _ := parseVersion(k.fixed)
		if !less(v, from) && less(v, fixed) {
			found = append(found, k)
		}
	}
	return found, true
}

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
		f.Evidence = []finding.Evidence{{Signal: "server version", Observed: version, Threshold: "outside the known-issue ranges", Source: "etcdperf known-issue table (inspect/versions.go)", Severity: finding.OK}}
		return f, true
	}
	f.Severity = finding.Warn
	f.Summary = fmt.Sprintf("etcd %s has %d known performance problem(s) fixed in later releases", version, len(found))
	var fixes []string
	for _, k := range found {
		f.Evidence = append(f.Evidence, finding.Evidence{Signal: "server version", Observed: version + ": " + k.summary,
			Threshold: fmt.Sprintf("< %s or ≥ %s", k.from, k.fixed), Source: k.source, Severity: finding.Warn})
		fixes = append(fixes, k.fixed)
	}
	f.Advice = "upgrade to the latest patch release of the same minor version (at least " + strings.Join(fixes, ", ") + ")"
	return f, true
}
