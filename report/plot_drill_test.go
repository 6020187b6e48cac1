package report

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

func TestWriteDrill(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC()
	op := results.Op{Op: "put"}
	for i := range 12 {
		h := results.NewHist()
		for j := range 100 {
			_ = h.RecordValue(int64(1000 + 100*j + 5000*i))
		}
		enc, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		op.Intervals = append(op.Intervals, results.Interval{Start: t0.Add(time.Duration(i) * time.Second), Requests: 100, Errors: int64(i % 2), Response: enc})
	}
	run := &results.Run{Ops: []results.Op{op}}
	spans := []Span{
		{Name: "before", Start: t0, End: t0.Add(5 * time.Second)},
		{Name: "snapshot", Start: t0.Add(5 * time.Second), End: t0.Add(5300 * time.Millisecond)},
		{Name: "catch-up", Start: t0.Add(5300 * time.Millisecond), End: t0.Add(5400 * time.Millisecond)},
		{Name: "after", Start: t0.Add(5400 * time.Millisecond), End: t0.Add(12 * time.Second)},
	}
	dir := t.TempDir()
	if err := WriteDrill(dir, map[string]string{"drill": "replace-member"}, run, spans, "drill replace-member"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"drill.json", "drill-timeline.png", "drill-timeline.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := DrillTimelineFigure("x", &results.Run{}, spans); err == nil {
		t.Error("a load without latency was plotted")
	}
}
