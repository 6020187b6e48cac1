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
	sev := func(kv ...string) map[finding.Class]finding.Severity {
		m := map[finding.Class]finding.Severity{}
		for i := 0; i < len(kv); i += 2 {
			m[finding.Class(kv[i])] = finding.Severity(kv[i+1])
		}
		return m
	}
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
		{"mild none within noise", outcome{sc: mild, status: "pass", bottleneck: "none", bad: sev(), p99: 10.5, base: baseRun{p99: 10, verdicts: []baseVerdict{{"none", "pass"}}}}, true, ""},
		{"mild none over noise", outcome{sc: mild, status: "pass", bottleneck: "none", bad: sev(), p99: 11.5, base: baseRun{p99: 10, verdicts: []baseVerdict{{"none", "pass"}}}}, false, "over the baseline"},
		{"mild none within the baseline's own spread", outcome{sc: mild, status: "pass", bottleneck: "none", bad: sev(), p99: 11.5, base: baseRun{p99: 10, spread: 0.2, verdicts: []baseVerdict{{"none", "pass"}}}}, true, ""},
		{"mild none over the baseline's own spread", outcome{sc: mild, status: "pass", bottleneck: "none", bad: sev(), p99: 12.5, base: baseRun{p99: 10, spread: 0.2, verdicts: []baseVerdict{{"none", "pass"}}}}, false, "over the baseline"},
		{"mild none without a baseline", outcome{sc: mild, status: "pass", bottleneck: "none", bad: sev(), p99: 10}, false, "no baseline"},
		{"mild, the baseline's own warning within noise", outcome{sc: mild, status: "pass", bottleneck: "network", bad: sev("network", "warn"), p99: 10.5, base: baseRun{p99: 10, verdicts: []baseVerdict{{"network", "pass"}}}}, true, ""},
		{"mild, the baseline's own warning over noise", outcome{sc: mild, status: "pass", bottleneck: "network", bad: sev("network", "warn"), p99: 15, base: baseRun{p99: 10, verdicts: []baseVerdict{{"network", "pass"}}}}, false, "over the baseline"},
		{"mild, the warning of one of the baseline's two runs", outcome{sc: mild, status: "pass", bottleneck: "network", bad: sev("network", "warn"), p99: 10, base: baseRun{p99: 10, verdicts: []baseVerdict{{"none", "pass"}, {"network", "pass"}}}}, true, ""},
		{"mild, a class neither baseline run had", outcome{sc: mild, status: "pass", bottleneck: "cpu", bad: sev("cpu", "warn"), p99: 10, base: baseRun{p99: 10, verdicts: []baseVerdict{{"none", "pass"}, {"network", "pass"}}}}, false, "expected disk"},
		{"mild, another class than the baseline's", outcome{sc: mild, status: "pass", bottleneck: "network", bad: sev("network", "warn"), p99: 10, base: baseRun{p99: 10, verdicts: []baseVerdict{{"none", "pass"}}}}, false, "expected disk"},
		{"mild named at warn", outcome{sc: mild, status: "pass", bottleneck: "disk", bad: sev("disk", "warn")}, true, ""},
		{"false alarm", outcome{sc: disk, status: "fail", bottleneck: "disk", bad: sev("disk", "fail", "memory", "fail")}, false, "memory fail"},
		{"a consequence is no false alarm", outcome{sc: cpu, status: "fail", bottleneck: "cpu", bad: sev("cpu", "fail", "disk", "fail")}, true, ""},
		{"stall named", outcome{sc: stall, status: "fail", bottleneck: "stall", bad: sev("stall", "fail", "health", "fail")}, true, ""},
		{"stall charged to cluster health", outcome{sc: stall, status: "fail", bottleneck: "none", bad: sev("health", "fail")}, false, "expected stall (fail)"},
		{"stall named a resource", outcome{sc: stall, status: "fail", bottleneck: "cpu", bad: sev("stall", "fail", "cpu", "fail")}, false, "cpu fail"},
		{"also ranked", outcome{sc: both, status: "fail", bottleneck: "disk", ranked: []string{"disk", "value-size"}, bad: sev("disk", "fail", "value-size", "warn")}, true, ""},
		{"also missing", outcome{sc: both, status: "fail", bottleneck: "disk", ranked: []string{"disk"}, bad: sev("disk", "fail")}, false, "also"},
		{"re-analysis disagreed", outcome{sc: disk, status: "fail", bottleneck: "disk", bad: sev("disk", "fail"), err: "analyze RUNFILE disagrees"}, false, "disagrees"},
		{"skip where the feature is missing", outcome{sc: disk, skipped: "no blkio"}, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, why, alarms := c.o.judge()
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
	v := func(status, bottleneck string, ranked []string, fs ...finding.Finding) *verdictOut {
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

// TestSlowDisk: a miss that named the disk of a row whose fault is elsewhere
// runs again; a disk row's, or one whose second class is the disk, does not.
func TestSlowDisk(t *testing.T) {
	network := &scenario{name: "network", class: finding.ClassNetwork, mild: true}
	disk := &scenario{name: "disk", class: finding.ClassDisk}
	valueDisk := &scenario{name: "value-size+disk", class: finding.ClassValueSize, also: finding.ClassDisk}
	for _, tc := range []struct {
		sc    *scenario
		named string
		want  bool
	}{
		{network, "disk", true},
		{network, "network", false},
		{network, "none", false},
		{disk, "disk", false},
		{valueDisk, "disk", false},
	} {
		if got := (&outcome{sc: tc.sc, bottleneck: tc.named}).slowDisk(); got != tc.want {
			t.Errorf("%s named %s: slowDisk %v, want %v", tc.sc.name, tc.named, got, tc.want)
		}
	}
}
