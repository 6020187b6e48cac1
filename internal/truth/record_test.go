package truth

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// fixture describes one recorded /metrics pair for analyze's unit tests
// (analyze/testdata/truth): the scenario, the class it must name from the
// metrics alone, and what a bare pair does not say (window length, resources).
type fixture struct {
	Scenario    string  `json:"scenario"`
	Class       string  `json:"class"` // "" for a baseline
	Before      string  `json:"before"`
	After       string  `json:"after"`
	Seconds     float64 `json:"seconds"`
	Cores       float64 `json:"cores,omitempty"`
	MemoryBytes int64   `json:"memory_bytes,omitempty"`
}

// record writes the graded member's first "before" and first "after" scrape of
// the scenario's run file, and adds the pair to the manifest.
func record(dir string, sc *scenario, runFile, member string) error {
	if !sc.fixture {
		return nil
	}
	run, err := results.ReadFile(runFile)
	if err != nil {
		return err
	}
	var before, after *results.Scrape
	for i := range run.Scrapes {
		s := &run.Scrapes[i]
		if s.Error != "" || (member != "" && s.Member != member && len(run.Target.Members) > 1) {
			continue
		}
		switch s.Phase {
		case results.PhaseBefore:
			before = s
		case results.PhaseAfter:
			if after == nil {
				after = s
			}
		}
	}
	if before == nil || after == nil {
		return os.ErrNotExist
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := strings.NewReplacer("/", "-", "=", "-", ".", "_").Replace(sc.name)
	f := fixture{Scenario: sc.name, Class: string(sc.class), Before: base + "-before.txt", After: base + "-after.txt"}
	tb, _ := time.Parse(time.RFC3339Nano, before.Time)
	ta, _ := time.Parse(time.RFC3339Nano, after.Time)
	f.Seconds = ta.Sub(tb).Seconds()
	for _, m := range run.Target.Members {
		if m.CPUQuotaCores > 0 {
			f.Cores = m.CPUQuotaCores
		}
		if m.MemoryLimitBytes > 0 {
			f.MemoryBytes = m.MemoryLimitBytes
		}
	}
	if err := os.WriteFile(filepath.Join(dir, f.Before), []byte(before.Text), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, f.After), []byte(after.Text), 0o644); err != nil {
		return err
	}
	manifest := filepath.Join(dir, "manifest.json")
	var all []fixture
	if b, err := os.ReadFile(manifest); err == nil {
		_ = json.Unmarshal(b, &all)
	}
	kept := all[:0]
	for _, x := range all {
		if x.Scenario != f.Scenario {
			kept = append(kept, x)
		}
	}
	b, err := json.MarshalIndent(append(kept, f), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(manifest, append(b, '\n'), 0o644)
}
