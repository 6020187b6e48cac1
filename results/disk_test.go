package results

import (
	"testing"
)

func TestEtcdBuckets(t *testing.T) {
	if n := len(EtcdDiskBucketBounds); n != 14 || EtcdDiskBucketBounds[0] != 0.001 || EtcdDiskBucketBounds[13] != 8.192 {
		t.Fatalf("bounds = %v, want 0.001 × 2^k for k = 0..13", EtcdDiskBucketBounds)
	}
	h := NewHist()
	// microseconds: below, on (counted in it, as with Prometheus' le) and above bounds, and beyond the last
	for _, us := range []int64{200, 999, 1000, 1001, 3000, 9999, 10_000, 16_000, 9_000_000} {
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
	}
	want := map[float64]int64{
		0.001: 3, // 200, 999, 1000
		0.002: 4, // + 1001
		0.004: 5, // + 3000
		0.008: 5,
		0.016: 8, // + 9999, 10000, 16000
		8.192: 8, // 9 s is only in +Inf
	}
	got := EtcdBuckets(h)
	if len(got) != 14 {
		t.Fatalf("%d buckets, want 14", len(got))
	}
	for _, b := range got {
		if w, ok := want[b.LE]; ok && b.Count != w {
			t.Errorf("le=%g: %d, want %d", b.LE, b.Count, w)
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i].Count < got[i-1].Count {
			t.Errorf("not cumulative at le=%g", got[i].LE)
		}
	}
}
