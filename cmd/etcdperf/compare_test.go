package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// scaleHist multiplies every value of x by f.
func scaleHist(t *testing.T, x results.Hist, f float64) (results.Hist, *hdr.Histogram) {
	t.Helper()
	h, err := x.Decode()
	if err != nil {
		t.Fatal(err)
	}
	out := results.NewHist()
	for _, bar := range h.Distribution() {
		if bar.Count > 0 {
			if err := out.RecordValues(int64(float64(bar.To)*f), bar.Count); err != nil {
				t.Fatal(err)
			}
		}
	}
	enc, err := results.EncodeHist(out)
	if err != nil {
		t.Fatal(err)
	}
	return enc, out
}

// slowerRun writes a copy of the fixture run whose put latencies are f times longer.
func slowerRun(t *testing.T, f float64) string {
	t.Helper()
	run, err := results.ReadFile(fixture(t, "run-fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	op := &run.Ops[0]
	whole := results.NewHist()
	for i := range op.Intervals {
		var h *hdr.Histogram
		op.Intervals[i].Response, h = scaleHist(t, op.Intervals[i].Response, f)
		whole.Merge(h)
	}
	op.Latency = results.Summarize(whole)
	if op.ResponseHist, err = results.EncodeHist(whole); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "slower.json")
	if err := results.WriteFile(path, run); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCompareCommand(t *testing.T) {
	a := fixture(t, "run-fixture.json")
	r := runBin(t, nil, "compare", a, a)
	if r.code != ExitOK || !strings.Contains(r.stdout, "0 regression(s)") {
		t.Errorf("same run twice: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	slower := slowerRun(t, 1.5)
	r = runBin(t, nil, "compare", a, slower)
	if r.code != ExitFail || !strings.Contains(r.stdout, "regression") || r.stderr != "" {
		t.Errorf("50%% slower puts: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A threshold above the change turns the regression into a small change.
	if r = runBin(t, nil, "compare", a, slower, "--threshold", "60%"); r.code != ExitOK {
		t.Errorf("--threshold 60%%: exit %d\n%s", r.code, r.stdout)
	}
	// The baseline is the slower run: the change is an improvement, not a regression.
	if r = runBin(t, nil, "compare", slower, a); r.code != ExitOK || !strings.Contains(r.stdout, "improvement") {
		t.Errorf("reversed: exit %d\n%s", r.code, r.stdout)
	}
	r = runBin(t, nil, "compare", a, slower, "-w", "json")
	var out report.Comparison
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != ExitFail || out.Regressions == 0 || len(out.Rows) != 10 {
		t.Errorf("-w json: exit %d, %v, %d regressions, %d rows", r.code, err, out.Regressions, len(out.Rows))
	}
}

func TestCompareBadInput(t *testing.T) {
	a := fixture(t, "run-fixture.json")
	run, err := results.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	run.Ops = run.Ops[:1]
	putOnly := filepath.Join(t.TempDir(), "put-only.json")
	if err := results.WriteFile(putOnly, run); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"different ops", []string{"compare", a, putOnly}, "not comparable"},
		{"missing run file", []string{"compare", a, filepath.Join(t.TempDir(), "nope.json")}, "no such file"},
		{"bad threshold", []string{"compare", a, a, "--threshold", "ten"}, "--threshold"},
		{"bad alpha", []string{"compare", a, a, "--alpha", "2"}, "--alpha"},
		{"one run", []string{"compare", a}, "arg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, nil, tc.args...)
			assertCleanError(t, r)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, tc.want)
			}
		})
	}
}
