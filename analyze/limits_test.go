package analyze

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
)

func TestLimitsText(t *testing.T) {
	for _, tc := range []struct {
		l    Limits
		want string
	}{
		{Limits{Warn: 0.010, Fail: 0.020, Unit: UnitSeconds}, "ok < 10 ms; warn ≥ 10 ms; fail ≥ 20 ms"},
		{Limits{Warn: 0.100, Fail: 0.500, Unit: UnitSeconds}, "ok < 100 ms; warn ≥ 100 ms; fail ≥ 500 ms"},
		{Limits{Warn: 20, Fail: 100, Unit: UnitMs}, "ok < 20 ms; warn ≥ 20 ms; fail ≥ 100 ms"},
		{Limits{Warn: 0.8, Fail: 0.95, Unit: UnitRatio}, "ok < 80%; warn ≥ 80%; fail ≥ 95%"},
		{Limits{Warn: 64 * kib, Fail: 256 * kib, Unit: UnitBytes, Note: "(limit 1.5 MiB)"}, "ok < 64 KiB; warn ≥ 64 KiB; fail ≥ 256 KiB (limit 1.5 MiB)"},
		{Limits{Warn: 1_000, Fail: 10_000, Unit: UnitCount}, "ok < 1,000; warn ≥ 1,000; fail ≥ 10,000"},
		{Limits{Warn: 0, Fail: math.Inf(1), Unit: UnitCount, Strict: true}, "ok 0; warn > 0"},
		{Limits{Warn: 0, Fail: 0, Unit: UnitCount, Strict: true}, "ok 0; fail > 0"},
		{Limits{Warn: 8 * gib, Fail: math.Inf(1), Unit: UnitBytes, Strict: true}, "ok ≤ 8 GiB; warn > 8 GiB"},
		{Limits{Warn: 0.5, Fail: math.Inf(-1), Unit: UnitFraction, Below: true}, "ok ≥ 0.5; warn < 0.5"},
		{Limits{Warn: 2, Fail: 2, Unit: UnitCount}, "ok < 2; fail ≥ 2"},
	} {
		if got := tc.l.Text(); got != tc.want {
			t.Errorf("%+v: Text() = %q, want %q", tc.l, got, tc.want)
		}
	}
}

// compound rules grade with more than one value against two numbers, so they
// carry no Limits; each is named here with why, so a new rule without limits is
// a decision, not an omission.
var compound = map[string]string{
	"client round trip / client latency at p50 and p99 (HTTP/2 PINGs through the load, per endpoint; else the round trip before it)":                    "share of the client p50, with floors",
	"replication round / client p50 (multi-member writes; a linearizable read through each endpoint, beyond its round trip, median over the endpoints)": "share of the client p50, with floors and CPU",
	"follower link / client p50 (linearizable read through each endpoint, beyond its round trip)":                                                       "share of the client p50, with floors",
	"read round / client p99 (pairs of a linearizable and a serializable read through the load, per endpoint)":                                          "share of the requests' p99, with floors, the slowest disk, CPU and elections",
	"client p50 minus server-side p50 (run files without a measured round trip)":                                                                        "not graded: the rest is unexplained",
	"late starts / requests":                 "warns by share and by the generator's own state",
	"has leader (" + metrics.HasLeader + ")": "a flag in any scrape",
	"leader changes (" + metrics.LeaderChanges + " rises, the most any member saw; a restart's reset is none)": "a count against the mixin's rate, and what each change cost the clients",
	"members answering /metrics to the end of the run":                                                         "a member's scrapes that stopped",
	"watch delivery p99 / put service p99 (run)":                                                               "a ratio to the run's own put p99, with floors",
	"NOSPACE alarm (Maintenance API alarm list)":                                                               "a raised alarm",
	"server version (" + metrics.ServerVersion + ")":                                                           "a release against known problems",
	"requests by member: the slowest member's service p99 / the others' (run, lean transport)":                 "a ratio to the other members' p99, with a floor",
	"member waited for a CPU (schedstat run-queue delay / runnable time)":                                      "measured, not graded",
}

// TestRuleLimits walks the rule table: every rule cites a source and has a
// threshold; a rule with limits shows the text written from them, and its limits
// grade at their boundaries as the text says.
func TestRuleLimits(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if r.Source == "" || r.Threshold == "" {
			t.Errorf("%s: no source or threshold", r.Signal)
		}
		if r.Limits == nil {
			if _, ok := compound[r.Signal]; !ok {
				t.Errorf("%s: no Limits and not a compound rule", r.Signal)
			}
			seen[r.Signal] = true
			continue
		}
		l := *r.Limits
		if !strings.HasPrefix(r.Threshold, l.Text()) {
			t.Errorf("%s: threshold %q, but its limits read %q", r.Signal, r.Threshold, l.Text())
		}
		if l.Unit == 0 {
			t.Errorf("%s: limits without a unit", r.Signal)
		}
		// The first bad level, and a value just on the good side of it.
		first, firstSev := l.Warn, finding.Warn
		if !l.hasWarn() {
			first, firstSev = l.Fail, finding.Fail
		}
		eps := math.Max(math.Abs(first)*1e-9, 1e-12)
		good, bad := first-eps, first // above: the threshold itself is bad
		switch {
		case l.Below:
			good, bad = first, first-eps // below: the threshold itself is ok
		case l.Strict:
			good, bad = first, first+eps
		}
		if got := l.Grade(good); got != finding.OK {
			t.Errorf("%s: Grade(%g) = %s, want ok", r.Signal, good, got)
		}
		if got := l.Grade(bad); got != firstSev {
			t.Errorf("%s: Grade(%g) = %s, want %s", r.Signal, bad, got, firstSev)
		}
		if l.hasWarn() && !math.IsInf(l.Fail, 0) {
			if (l.Below && l.Fail >= l.Warn) || (!l.Below && l.Fail <= l.Warn) {
				t.Errorf("%s: fail %g is not beyond warn %g", r.Signal, l.Fail, l.Warn)
			}
			atFail := l.Fail
			if l.Strict {
				atFail += math.Max(l.Fail*1e-9, 1e-12)
			}
			if l.Below {
				atFail -= math.Max(math.Abs(l.Fail)*1e-9, 1e-12)
			}
			if got := l.Grade(atFail); got != finding.Fail {
				t.Errorf("%s: Grade(%g) = %s, want fail", r.Signal, atFail, got)
			}
		}
		if got := l.Grade(math.NaN()); got != finding.Unknown {
			t.Errorf("%s: Grade(NaN) = %s, want unknown", r.Signal, got)
		}
	}
	for s := range compound {
		if !seen[s] {
			t.Errorf("compound rule %q is not in the table (renamed?)", s)
		}
	}
}

// TestRulesGradeWithTheirLimits moves one rule's limits and sees its grade move:
// a rule must grade with the numbers its threshold text shows, not its own.
func TestRulesGradeWithTheirLimits(t *testing.T) {
	w := snapsAt(t, etcdBase().counter(metrics.CPUSeconds, 0).String(), etcdBase().counter(metrics.CPUSeconds, 10).String())
	i := &Input{W: w, Members: []*Window{w}, Leader: w, Cores: 2, CoresSource: "test"}
	r := ruleBy(t, "server CPU busy") // 10 CPU-s in 10 s on 2 cores = 50%
	got := map[float64]finding.Severity{}
	for _, warn := range []float64{0.4, 0.6} {
		l := *r.Limits
		l.Warn = warn
		r.Limits = &l
		got[warn] = r.check(i).Severity
	}
	if got[0.4] != finding.Warn || got[0.6] != finding.OK {
		t.Errorf("server CPU at 50%% graded %v with warn at 40%% and 60%%: the rule does not grade with its limits", got)
	}
}

// TestLimitsRow: a level the value never reaches is absent from the JSON row,
// which JSON could not encode as infinity.
func TestLimitsRow(t *testing.T) {
	for _, r := range RuleRows(Rules) {
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("%s: %v", r.Signal, err)
		}
	}
	row := limitsRow(&limAnyWarns)
	if row.Warn == nil || *row.Warn != 0 || row.Fail != nil || row.Unit != "count" || !row.Strict {
		t.Errorf("limAnyWarns row = %+v", row)
	}
	if row := limitsRow(&limAnyFails); row.Warn != nil || row.Fail == nil || *row.Fail != 0 {
		t.Errorf("limAnyFails row = %+v: want fail 0 and no warn level", row)
	}
	if limitsRow(nil) != nil {
		t.Error("a rule without limits has a limits row")
	}
}
