package analyze

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
)

// TestTruthFixtures grades the /metrics pairs recorded from `make truth` runs
// (go test ./internal/truth -args -truth -record analyze/testdata/truth): the faulty
// member's scrapes before and after the load, graded as bare dumps, must name the
// scenario's class from the server's metrics alone, and a baseline must read none
// or, where a p99's bucket straddles its threshold (bare dumps have no disk probe
// to settle it), pass with that warning alone.
func TestTruthFixtures(t *testing.T) {
	dir := filepath.Join("testdata", "truth")
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixtures []struct {
		Scenario    string  `json:"scenario"`
		Class       string  `json:"class"`
		Before      string  `json:"before"`
		After       string  `json:"after"`
		Seconds     float64 `json:"seconds"`
		Cores       float64 `json:"cores"`
		MemoryBytes int64   `json:"memory_bytes"`
	}
	if err := json.Unmarshal(b, &fixtures); err != nil {
		t.Fatal(err)
	}
	if len(fixtures) == 0 {
		t.Fatal("no fixtures in the manifest")
	}
	for _, f := range fixtures {
		t.Run(f.Scenario, func(t *testing.T) {
			rep, err := Dumps(readFixture(t, "truth/"+f.Before), readFixture(t, "truth/"+f.After),
				Options{WindowSeconds: f.Seconds, Cores: f.Cores, MemoryBytes: f.MemoryBytes})
			if err != nil {
				t.Fatal(err)
			}
			want := f.Class
			if want == "" {
				want = finding.BottleneckNone
			}
			if want == finding.BottleneckNone && rep.Verdict.Status == finding.StatusPass && onlyStraddles(rep) {
				return
			}
			if rep.Verdict.Bottleneck != want {
				t.Errorf("bottleneck %s, want %s: %s", rep.Verdict.Bottleneck, want, rep.Verdict.Summary)
			}
		})
	}
}

// onlyStraddles reports whether every warn or fail evidence of rep is a quantile
// whose bucket straddles its threshold.
func onlyStraddles(rep Result) bool {
	n := 0
	for _, f := range rep.Findings {
		for _, e := range f.Evidence {
			if e.Severity.Bad() {
				if !strings.Contains(e.Observed, StraddleNote) {
					return false
				}
				n++
			}
		}
	}
	return n > 0
}
