package analyze

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
)

// "Old version of etcd?" is one of the classic causes of a slow cluster: every
// verdict names each member's release, flags releases past their end of support
// and the known problems of the running release, and says when the members run
// mixed versions (an upgrade in progress).

// Release support: etcd maintains release branches for the current minor version
// and the previous one (op-guide/versioning.md: "when v3.6 is released, v3.4 goes
// out of support"). latestMinor is the newest minor release; keep it current.
const (
	latestMinor   = "3.7" // go.etcd.io/etcd/server/v3 v3.7.3 is released
	srcVersioning = "etcd op-guide/versioning.md (the current and the previous minor release are supported)"
)

// KnownProblem is a documented performance problem of a range of etcd releases:
// affected are From ≤ version < Fixed. Correctness bugs are left out on purpose:
// this table explains slowness.
type KnownProblem struct {
	From, Fixed string
	Summary     string
	// Source is the changelog entry or issue that documents it.
	Source string
}

// knownProblems is the table, shared with inspect; keep it current.
var knownProblems = []KnownProblem{
	{From: "3.0.0", Fixed: "3.4.0", Summary: "a long read blocks writes: read transactions are not concurrent before 3.4",
		Source: "etcd CHANGELOG-3.4 (fully concurrent reads, https://github.com/etcd-io/etcd/pull/10523)"},
	{From: "3.2.0", Fixed: "3.6.0", Summary: "--snapshot-count defaults to 100,000: the raft log holds ten times the entries of 3.6's default in memory (higher RSS, longer restarts)",
		Source: "etcd CHANGELOG-3.2 (https://github.com/etcd-io/etcd/pull/7160); CHANGELOG-3.6 (back to 10,000, https://github.com/etcd-io/etcd/pull/15408)"},
	{From: "3.5.0", Fixed: "3.5.8", Summary: "watch streams starve under heavy read load (gRPC and HTTP share one server; 3.5.8 adds --listen-client-http-urls and a random HTTP/2 frame scheduler)",
		Source: "https://github.com/etcd-io/etcd/issues/15402; CHANGELOG-3.5 v3.5.8"},
	{From: "3.5.16", Fixed: "3.5.19", Summary: "compaction blocks requests: every request sees a latency spike (seconds on large clusters) at each compaction",
		Source: "https://github.com/etcd-io/etcd/issues/19406; fix https://github.com/etcd-io/etcd/pull/19405 (CHANGELOG-3.5 v3.5.19)"},
}

// KnownProblems lists the known performance problems of version; ok is false
// when the version cannot be parsed.
func KnownProblems(version string) (found []KnownProblem, ok bool) {
	v, ok := semver(version)
	if !ok {
		return nil, false
	}
	for _, k := range knownProblems {
		from, _ := semver(k.From)
		fixed, _ := semver(k.Fixed)
		if cmpVersion(v, from) >= 0 && cmpVersion(v, fixed) < 0 {
			found = append(found, k)
		}
	}
	return found, true
}

// semver parses "3.6.16" (a pre-release suffix ignored) into comparable parts.
func semver(v string) ([3]int, bool) {
	var out [3]int
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

func cmpVersion(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// versionNotes is what the table says of one release: support and known problems.
func versionNotes(v string) []string {
	sv, ok := semver(v)
	if !ok {
		return nil
	}
	var notes []string
	latest, _ := semver(latestMinor)
	if sv[0] < latest[0] || (sv[0] == latest[0] && sv[1] < latest[1]-1) {
		notes = append(notes, fmt.Sprintf("%d.%d is past its end of support (supported: %d.%d and %d.%d): %s",
			sv[0], sv[1], latest[0], latest[1]-1, latest[0], latest[1], srcVersioning))
	}
	found, _ := KnownProblems(v)
	for _, k := range found {
		notes = append(notes, fmt.Sprintf("%s (fixed in %s; %s)", k.Summary, k.Fixed, k.Source))
	}
	return notes
}

// clusterVersion is the etcd_cluster_version label of a scrape, or "".
func clusterVersion(s *Snapshot) string {
	for _, v := range s.LabelValues(metrics.ClusterVersion, "cluster_version") {
		return v
	}
	return ""
}

// versionsOf lists every scraped member's release, with mixed versions noted.
func versionsOf(in *Input) []finding.MemberVersion {
	var out []finding.MemberVersion
	seen := map[string]bool{}
	for _, w := range in.Members {
		s := w.Last()
		if s == nil {
			continue
		}
		v := s.ServerVersion()
		if v == "" {
			continue
		}
		mv := finding.MemberVersion{Member: in.label(w), Version: v, ClusterVersion: clusterVersion(s), Notes: versionNotes(v)}
		if sv, ok := semver(v); ok && mv.ClusterVersion != "" {
			if cv, ok := semver(mv.ClusterVersion); ok && (cv[0] < sv[0] || cv[0] == sv[0] && cv[1] < sv[1]) {
				mv.Notes = append(mv.Notes, fmt.Sprintf("cluster version %s is below this member's %d.%d: an upgrade in progress (the cluster keeps the older version's behaviour until every member runs the newer one)", mv.ClusterVersion, sv[0], sv[1]))
			}
		}
		seen[v] = true
		out = append(out, mv)
	}
	if len(seen) > 1 {
		var vs []string
		for _, mv := range out {
			vs = append(vs, mv.Version)
		}
		for i := range out {
			out[i].Notes = append(out[i].Notes, "the members run mixed versions ("+strings.Join(vs, ", ")+"): an upgrade in progress; compare runs only at one version")
		}
	}
	return out
}

// versionRule grades a member's release: a warning (context, never the bottleneck)
// past end of support or with a known problem.
func versionRule(in *Input, _ Limits) Observation {
	if in.W == nil || in.W.Last() == nil {
		return unknown("no /metrics scrape of the member")
	}
	s := in.W.Last()
	v := s.ServerVersion()
	if v == "" {
		return unknown("%s absent", metrics.ServerVersion)
	}
	obs := v
	if cv := clusterVersion(s); cv != "" {
		obs += " (cluster version " + cv + ")"
	}
	if notes := versionNotes(v); len(notes) > 0 {
		return Observation{Severity: finding.Warn, Observed: obs + "; " + strings.Join(notes, "; ")}
	}
	return Observation{Severity: finding.OK, Observed: obs + "; supported, no known problem listed"}
}
