package truth

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
)

// TestJudge pins down the judge's strictness without running a scenario.
func TestJudge(t *testing.T) {
	disk := &scenario{name: "disk/1m/iops=80", class: finding.ClassDisk, status: finding.StatusFail}
	diskWarn := &scenario{name: "disk/warn", class: finding.ClassDisk}
	mild := &scenario{name: "disk/1m/iops=1000", class: finding.ClassDisk, mild: true}
	stall := &scenario{name: "stall", class: finding.ClassStall, status: finding.StatusFail}
	both := &scenario{name: "disk+value-size", class: finding.ClassDisk, status: finding.StatusFail, also: finding.ClassValueSize}
	cpu := &scenario{name: "cpu", class: finding.ClassCPU, status: finding.StatusFail}
	base := &scenario{name: "baseline"}
	follower := &scenario{name: "disk/3m/follower", class: finding.ClassDisk, risk: true}
	sev := func(kv ...string) map[finding.Class]finding.Severity {
		m := map[finding.Class]finding.Severity{}
		for i := 0; i < len(kv); i += 2 {
			m[finding.Class(kv[i])] = finding.Severity(kv[i+1])
		}
		return m
	}
	noEffect := &effect{p: 0.4, shiftMs: 0.1, baseMs: 5, n: 10, m: 10}
	anEffect := &effect{p: 0.001, shiftMs: 2, baseMs: 5, n: 10, m: 10}
	for _, c := range []struct {
		name string
		o    outcome
		ok   bool
		why  string // a part of the reason, for a miss
	}{
		{"baseline pass none", outcome{sc: base, status: "pass", bottleneck: "none", bad: sev()}, true, ""},
		{"baseline with a warning", outcome{sc: base, status: "pass", bottleneck: "disk", bad: sev("disk", "warn")}, false, "baseline"},
		{"baseline busy host is no excuse", outcome{sc: base, status: "fail", bottleneck: "cpu", bad: sev("cpu", "fail"), pressure: 0.95}, false, "baseline"},
		{"fault named at its status", outcome{sc: disk, status: "fail", bottleneck: "disk", bad: sev("disk", "fail")}, true, ""},
		{"fault named at the wrong status", outcome{sc: disk, status: "pass", bottleneck: "disk", bad: sev("disk", "warn")}, false, "expected disk (fail)"},
		{"warn row failing", outcome{sc: diskWarn, status: "fail", bottleneck: "disk", bad: sev("disk", "fail")}, false, "expected disk (pass)"},
		{"fault unnamed", outcome{sc: disk, status: "pass", bottleneck: "none", bad: sev()}, false, "expected disk"},
		{"fault named cpu on a busy host", outcome{sc: disk, status: "fail", bottleneck: "cpu", bad: sev("cpu", "fail", "disk", "warn"), pressure: 0.9}, false, "false alarms"},
		{"mild none, no effect", outcome{sc: mild, status: "pass", bottleneck: "none", bad: sev()}, true, ""},
		{"mild none, an effect", outcome{sc: mild, status: "pass", bottleneck: "none", bad: sev()}, false, "raised the clients' latency"},
		{"mild none without a baseline", outcome{sc: mild, status: "pass", bottleneck: "none", bad: sev()}, false, "no baseline"},
		{"mild, another class at warn", outcome{sc: mild, status: "pass", bottleneck: "network", bad: sev("network", "warn")}, false, "expected disk"},
		{"mild none with a warning", outcome{sc: mild, status: "pass", bottleneck: "none", bad: sev("cpu", "warn")}, false, "expected disk"},
		{"mild named at warn", outcome{sc: mild, status: "pass", bottleneck: "disk", bad: sev("disk", "warn")}, true, ""},
		{"false alarm", outcome{sc: disk, status: "fail", bottleneck: "disk", bad: sev("disk", "fail", "memory", "fail")}, false, "memory fail"},
		{"a consequence is no false alarm", outcome{sc: cpu, status: "fail", bottleneck: "cpu", bad: sev("cpu", "fail", "disk", "fail")}, true, ""},
		{"stall named", outcome{sc: stall, status: "fail", bottleneck: "stall", bad: sev("stall", "fail", "health", "fail")}, true, ""},
		{"stall charged to cluster health", outcome{sc: stall, status: "fail", bottleneck: "none", bad: sev("health", "fail")}, false, "expected stall (fail)"},
		{"stall named a resource", outcome{sc: stall, status: "fail", bottleneck: "cpu", bad: sev("stall", "fail", "cpu", "fail")}, false, "cpu fail"},
		{"also ranked", outcome{sc: both, status: "fail", bottleneck: "disk", ranked: []string{"disk", "value-size"}, bad: sev("disk", "fail", "value-size", "warn")}, true, ""},
		{"also missing", outcome{sc: both, status: "fail", bottleneck: "disk", ranked: []string{"disk"}, bad: sev("disk", "fail")}, false, "also"},
		{"re-analysis disagreed", outcome{sc: disk, status: "fail", bottleneck: "disk", bad: sev("disk", "fail"), err: "analyze RUNFILE disagrees"}, false, "disagrees"},
		{"a follower's disk a risk", outcome{sc: follower, status: "pass", bottleneck: "none", risks: []string{"disk"}, bad: sev("disk", "warn")}, true, ""},
		{"a follower's disk the bottleneck", outcome{sc: follower, status: "pass", bottleneck: "disk", bad: sev("disk", "warn")}, false, "a risk"},
		{"a follower's disk unnamed", outcome{sc: follower, status: "pass", bottleneck: "none", bad: sev()}, false, "a risk"},
		{"skip where the feature is missing", outcome{sc: disk, skipped: "no blkio"}, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			eff := noEffect
			switch {
			case strings.Contains(c.name, "an effect"):
				eff = anEffect
			case strings.Contains(c.name, "without a baseline"):
				eff = nil
			}
			ok, why, alarms := c.o.judge(eff)
			if ok != c.ok {
				t.Fatalf("judge = %v (%s, alarms %v), want %v", ok, why, alarms, c.ok)
			}
			if !ok && !strings.Contains(why+" "+strings.Join(alarms, " "), c.why) {
				t.Errorf("why = %q, alarms %v; want it to say %q", why, alarms, c.why)
			}
		})
	}
}

func TestDisagreement(t *testing.T) {
	v := func(status finding.Status, bottleneck string, ranked []string, fs ...finding.Finding) *verdictOut {
		return &verdictOut{Verdict: finding.Verdict{Status: status, Bottleneck: bottleneck, Ranked: ranked}, Findings: fs}
	}
	f := func(c, s string) finding.Finding {
		return finding.Finding{Class: finding.Class(c), Severity: finding.Severity(s)}
	}
	run := v("fail", "disk", []string{"disk", "network"}, f("disk", "fail"), f("network", "warn"), f("cpu", "ok"))
	for _, c := range []struct {
		name  string
		again *verdictOut
		want  string
	}{
		{"same", v("fail", "disk", []string{"disk", "network"}, f("disk", "fail"), f("network", "warn"), f("cpu", "ok")), ""},
		{"status and bottleneck", v("pass", "none", nil, f("disk", "ok"), f("network", "ok"), f("cpu", "ok")),
			"status fail, analyze pass; bottleneck disk, analyze none; ranked [disk network], analyze []; disk fail, analyze ok; network warn, analyze ok"},
		{"ranking", v("fail", "disk", []string{"disk"}, f("disk", "fail"), f("network", "warn"), f("cpu", "ok")), "ranked [disk network], analyze [disk]"},
		{"a class gone", v("fail", "disk", []string{"disk", "network"}, f("disk", "fail"), f("network", "warn")), "cpu ok, analyze absent"},
	} {
		if got := disagreement(run, c.again); got != c.want {
			t.Errorf("%s: disagreement = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSelected(t *testing.T) {
	all := []*scenario{{name: "disk/1m/iops=100"}, {name: "disk/1m/iops=1000"}, {name: "disk/3m/leader/iops=80"}, {name: "cpu/1m/quota=0.10"}}
	for _, c := range []struct {
		spec string
		want []string
		err  bool
	}{
		{"", []string{"disk/1m/iops=100", "disk/1m/iops=1000", "disk/3m/leader/iops=80", "cpu/1m/quota=0.10"}, false},
		{"disk/1m/iops=100", []string{"disk/1m/iops=100"}, false}, // exact: not iops=1000 too
		{"disk/3m", []string{"disk/3m/leader/iops=80"}, false},
		{"disk/*/iops=1000,cpu", []string{"disk/1m/iops=1000", "cpu/1m/quota=0.10"}, false},
		{"dis", nil, true}, // a prefix counts up to a slash only
		{"cpu,nosuch", nil, true},
	} {
		got, err := selected(all, c.spec)
		if (err != nil) != c.err {
			t.Errorf("%q: err %v, want error %v", c.spec, err, c.err)
			continue
		}
		var names []string
		for _, sc := range got {
			names = append(names, sc.name)
		}
		if strings.Join(names, " ") != strings.Join(c.want, " ") {
			t.Errorf("%q: selected %v, want %v", c.spec, names, c.want)
		}
	}
}

// TestRows checks the rows themselves: unique names, and an expected status
// that is a status.
func TestRows(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range scenarios() {
		if seen[sc.name] {
			t.Errorf("two rows named %s", sc.name)
		}
		seen[sc.name] = true
		if s := sc.wantStatus(); s != finding.StatusPass && s != finding.StatusFail {
			t.Errorf("%s: expected status %q", sc.name, s)
		}
		if sc.mild && sc.base == nil {
			t.Errorf("%s: mild without a baseline to measure its noise against", sc.name)
		}
		if sc.class == "" && sc.mild {
			t.Errorf("%s: a baseline cannot be mild", sc.name)
		}
		if sc.mild && sc.light {
			t.Errorf("%s: a mild row runs alone, its p99 against its baseline's", sc.name)
		}
	}
}

// TestRowJudge: every run counts by one rule, the baseline's too; a split vote
// fails; an effect needs significance and a rise.
func TestRowJudge(t *testing.T) {
	mild := &scenario{name: "quota/1m/64MiB", class: finding.ClassQuota, mild: true}
	mild.base = &scenario{name: "baseline-of/quota"}
	none := func(sc *scenario) *outcome {
		return &outcome{sc: sc, status: "pass", bottleneck: "none", bad: map[finding.Class]finding.Severity{}}
	}
	named := func(sc *scenario, c string) *outcome {
		return &outcome{sc: sc, status: "pass", bottleneck: c, bad: map[finding.Class]finding.Severity{finding.Class(c): finding.Warn}}
	}
	noEffect := &effect{p: 0.3, shiftMs: 0.2, baseMs: 8}
	for _, tc := range []struct {
		name string
		r    row
		ok   bool
		why  string
	}{
		{"none twice, no effect", row{sc: mild, runs: []*outcome{none(mild), none(mild)}, bases: []*outcome{none(mild.base), none(mild.base)}, effect: noEffect}, true, ""},
		{"named twice", row{sc: mild, runs: []*outcome{named(mild, "quota"), named(mild, "quota")}, bases: []*outcome{none(mild.base), none(mild.base)}, effect: noEffect}, true, ""},
		{"split vote", row{sc: mild, runs: []*outcome{none(mild), named(mild, "network")}, bases: []*outcome{none(mild.base), none(mild.base)}, effect: noEffect}, false, "split: right in 1 of 2"},
		{"the baseline's false alarm", row{sc: mild, runs: []*outcome{none(mild), none(mild)}, bases: []*outcome{none(mild.base), named(mild.base, "network")}, effect: noEffect}, false, "its baseline's run 2"},
		{"none with an effect", row{sc: mild, runs: []*outcome{none(mild), none(mild)}, bases: []*outcome{none(mild.base), none(mild.base)}, effect: &effect{p: 0.002, shiftMs: 1.5, baseMs: 8}}, false, "raised"},
		{"a significant rise under 1 ms is no effect", row{sc: mild, runs: []*outcome{none(mild), none(mild)}, bases: []*outcome{none(mild.base), none(mild.base)}, effect: &effect{p: 0.001, shiftMs: 0.5, baseMs: 2}}, true, ""},
		{"a significant fall is no effect", row{sc: mild, runs: []*outcome{none(mild), none(mild)}, bases: []*outcome{none(mild.base), none(mild.base)}, effect: &effect{p: 0.002, shiftMs: -1.5, baseMs: 8}}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why, _ := tc.r.judge()
			if ok != tc.ok || !strings.Contains(why, tc.why) {
				t.Errorf("judge = %v %q, want %v and a reason saying %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}

// TestMeasureEffect: the per-second p99s of the fault against the baseline's.
func TestMeasureEffect(t *testing.T) {
	secs := func(vs ...float64) *outcome { return &outcome{perSecond: vs} }
	same := measureEffect([]*outcome{secs(5, 6, 5, 7, 6), secs(6, 5, 6, 5, 7)}, []*outcome{secs(6, 5, 7, 5, 6), secs(5, 6, 6, 7, 5)})
	if same == nil || same.found() {
		t.Errorf("alike seconds: %v, want no effect", same)
	}
	up := measureEffect([]*outcome{secs(5, 6, 5, 7, 6), secs(6, 5, 6, 5, 7)}, []*outcome{secs(9, 8, 10, 9, 8), secs(9, 10, 8, 9, 11)})
	if up == nil || !up.found() || up.shiftMs < 2 {
		t.Errorf("seconds 3 ms slower: %v, want an effect of about +3 ms", up)
	}
	if e := measureEffect([]*outcome{secs(5)}, []*outcome{secs(9, 9)}); e != nil {
		t.Errorf("one baseline second: %v, want no test", e)
	}
}
