package results

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestMomentsExact(t *testing.T) {
	var m Moments
	for _, d := range []time.Duration{499_980 * time.Microsecond, 100 * time.Millisecond, 60 * time.Second, 61 * time.Second} {
		m.Add(d)
	}
	if m.Count != 4 || m.MaxMs() != 61_000 {
		t.Errorf("count %d max %g ms", m.Count, m.MaxMs())
	}
	// Population stddev, as etcd's pkg/report computes it.
	xs := []float64{499.98, 100, 60_000, 61_000}
	var mean, v float64
	for _, x := range xs {
		mean += x / 4
	}
	for _, x := range xs {
		v += (x - mean) * (x - mean) / 4
	}
	if got := m.StddevMs(); math.Abs(got-math.Sqrt(v)) > 1e-6 {
		t.Errorf("stddev %g ms, want %g", got, math.Sqrt(v))
	}
	// Σ ns² is past 64 bits here; the JSON round trip keeps all 128.
	if m.SumSqNs2.Hi == 0 {
		t.Fatal("test premise: a sum of squares over 64 bits")
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Moments
	if err := json.Unmarshal(b, &back); err != nil || back != m {
		t.Errorf("round trip %s: %+v, %v", b, back, err)
	}
	if err := json.Unmarshal([]byte(`{"sum_sq_ns2":"-1"}`), &back); err == nil {
		t.Error("negative sum of squares accepted")
	}
	if (Moments{}).StddevMs() != 0 || (Moments{}).MeanMs() != 0 {
		t.Error("empty moments")
	}
}
