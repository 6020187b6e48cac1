package report

import (
	"testing"

	"github.com/etcdperf/etcdperf/finding"
)

func TestVerdictLine(t *testing.T) {
	for _, tc := range []struct {
		v    finding.Verdict
		want string
	}{
		{finding.Verdict{Status: "pass", Bottleneck: "none", Summary: "pass: the cluster kept up"}, "PASS  bottleneck: none — the cluster kept up"},
		{finding.Verdict{Status: "fail", Bottleneck: "disk", Summary: "fail: bottleneck disk (fail) — wal fsync p99 30 ms"}, "FAIL  bottleneck: disk — bottleneck disk (fail) — wal fsync p99 30 ms"},
		{finding.Verdict{Status: "invalid", Bottleneck: "client"}, "INVALID  bottleneck: client"},
	} {
		if got := verdictLine(tc.v); got != tc.want {
			t.Errorf("verdictLine(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestInvalidNote(t *testing.T) {
	reason := "sent 150 req/s of 200 target (75%)"
	for _, tc := range []struct {
		name    string
		valid   bool
		summary string
		want    string
	}{
		{"valid", true, "pass: the cluster kept up", ""},
		{"the verdict says it", false, "invalid: " + reason, ""},
		{"another cause named", false, "fail: bottleneck quota (fail) — NOSPACE", "run marked invalid by the generator: " + reason},
	} {
		if got := invalidNote(tc.valid, reason, finding.Verdict{Summary: tc.summary}); got != tc.want {
			t.Errorf("%s: invalidNote = %q, want %q", tc.name, got, tc.want)
		}
	}
}
