package bench

import "testing"

func TestGCPercent(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{{0, 100}, {4 << 20, 400}, {16 << 20, 400}, {32 << 20, 200}, {64 << 20, 100}, {400 << 20, 100}} {
		if got := gcPercent(tc.live); got != tc.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}
