package analyze

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// TestDumpFiles: the dumps' modification times are the window unless given.
func TestDumpFiles(t *testing.T) {
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.txt"), filepath.Join(dir, "after.txt")
	at := time.Unix(1800000000, 0)
	for path, src := range map[string]string{before: "testdata/etcd-3.6-before.txt", after: "testdata/etcd-3.6-after.txt"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(before, at, at); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(after, at.Add(30*time.Second), at.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	bs, _ := os.ReadFile(before)
	as, _ := os.ReadFile(after)
	for _, window := range []float64{0, 10} {
		got, err := DumpFiles(before, after, Options{WindowSeconds: window})
		if err != nil {
			t.Fatal(err)
		}
		w := window
		if w == 0 {
			w = 30
		}
		want, err := Dumps(string(bs), string(as), Options{WindowSeconds: w})
		if err != nil {
			t.Fatal(err)
		}
		if got.Verdict.Summary != want.Verdict.Summary || len(got.Findings) != len(want.Findings) {
			t.Errorf("window %v: DumpFiles %+v, Dumps over %v s %+v", window, got.Verdict, w, want.Verdict)
		}
	}
	if _, err := DumpFiles(filepath.Join(dir, "none.txt"), after, Options{}); err == nil {
		t.Error("a missing dump was read")
	}
}

// TestPrometheusWindow: the window is the user's (ErrWindow) before any query.
func TestPrometheusWindow(t *testing.T) {
	at := time.Unix(1800000000, 0)
	p := &Prometheus{URL: "http://127.0.0.1:1"}
	run := &results.Run{StartedAt: at, EndedAt: at}
	for _, c := range []struct {
		run      *results.Run
		from, to time.Time
	}{
		{nil, time.Time{}, time.Time{}},
		{nil, at, at},
		{nil, at, at.Add(-time.Second)},
		{run, time.Time{}, time.Time{}}, // the run's own window is empty
	} {
		if _, err := p.PrometheusRun(context.Background(), c.run, c.from, c.to, results.Tool{}); !errors.Is(err, ErrWindow) {
			t.Errorf("run %v, %v..%v: %v, want ErrWindow", c.run != nil, c.from, c.to, err)
		}
	}
	// A good window reaches the server (here: refused), not the window check.
	if _, err := p.PrometheusRun(context.Background(), nil, time.Now().Add(-time.Minute), time.Time{}, results.Tool{}); err == nil || errors.Is(err, ErrWindow) {
		t.Errorf("from alone (to: now): %v, want the server's refusal", err)
	}
}

// TestMergedAndRunFile: a merged run carries its own diagnosis, the one grading its file
// gives when it grades the merged file again; unlike runs are refused.
func TestMergedAndRunFile(t *testing.T) {
	h := results.NewHist()
	for i := int64(1); i <= 100; i++ {
		if err := h.RecordValue(i * 1000); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1800000000, 0).UTC()
	worker := func(cmd string) *results.Run {
		return &results.Run{Version: results.Version, Command: cmd, Valid: true, StartedAt: at, EndedAt: at.Add(10 * time.Second), DurationS: 10,
			Ops: []results.Op{{Op: "put", Requests: 100, ThroughputRPS: 10, Latency: results.Summarize(h), ResponseHist: enc, ServiceHist: enc}}}
	}
	merged, rep, err := Merged([]*results.Run{worker("bench put"), worker("bench put")}, []string{"w0", "w1"})
	if err != nil {
		t.Fatal(err)
	}
	if merged.Diagnosis == nil || merged.Diagnosis.Verdict == nil || merged.Diagnosis.Verdict.Status != rep.Verdict.Status || merged.Ops[0].Requests != 200 {
		t.Fatalf("merged: %+v, diagnosis %+v", merged.Ops, merged.Diagnosis)
	}
	path := filepath.Join(t.TempDir(), "merged.json")
	if err := results.WriteFile(path, merged); err != nil {
		t.Fatal(err)
	}
	again, err := gradeFile(path)
	if err != nil || again.Verdict.Status != rep.Verdict.Status || again.Verdict.Bottleneck != rep.Verdict.Bottleneck {
		t.Errorf("grading the merged file: %+v, %v; merged %+v", again.Verdict, err, rep.Verdict)
	}
	if _, _, err := Merged([]*results.Run{worker("bench put"), worker("bench range")}, nil); !errors.Is(err, results.ErrUnlike) {
		t.Errorf("unlike runs: %v, want results.ErrUnlike", err)
	}

}

// gradeFile grades the run file at path again, as analyze RUNFILE does.
func gradeFile(path string) (Result, error) {
	run, err := results.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	return Run(run, Options{})
}
