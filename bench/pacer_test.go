package bench

import (
	"context"
	"testing"
	"time"
)

func TestPacerDue(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		i    uint64
		want time.Duration
	}{
		{1000, 0, 0},
		{1000, 1, time.Millisecond},
		{1000, 1500, 1500 * time.Millisecond},
		{3, 1, 333333333},
		{3, 3, time.Second},
		{0.5, 2, 4 * time.Second},
		// Far into a long run the index, not accumulated intervals, gives the time.
		{20000, 10_000_000_000, 500_000 * time.Second},
	} {
		if got := (Pacer{Rate: tc.rate}).Due(tc.i); got != tc.want {
			t.Errorf("Pacer{%g}.Due(%d) = %v, want %v", tc.rate, tc.i, got, tc.want)
		}
	}
}

func TestPacerTolerance(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want time.Duration
	}{
		{20000, MinLateTolerance},
		{500, MinLateTolerance},
		{10, 10 * time.Millisecond},
		{1, 100 * time.Millisecond},
	} {
		if got := (Pacer{Rate: tc.rate}).Tolerance(); got != tc.want {
			t.Errorf("Pacer{%g}.Tolerance() = %v, want %v", tc.rate, got, tc.want)
		}
	}
}

// TestDispatchBounds runs the dispatcher against a clock that is always past the
// schedule but short of the window's end, so it never sleeps: the test checks
// which tickets it hands out, not when.
func TestDispatchBounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rate      float64
		b         bounds
		wantN     int
		wantFirst time.Duration
		wantLast  time.Duration
		wantEnd   time.Duration
	}{
		{"duration", 100, bounds{end: time.Second}, 100, 0, 990 * time.Millisecond, time.Second},
		{"warmup+duration", 100, bounds{warmup: time.Second, end: 3 * time.Second}, 300, 0, 2990 * time.Millisecond, 3 * time.Second},
		{"total", 1000, bounds{total: 50}, 50, 0, 49 * time.Millisecond, 50 * time.Millisecond},
		// The total counts measured requests only: warm-up ones come on top.
		{"warmup+total", 1000, bounds{warmup: 100 * time.Millisecond, total: 50}, 150, 0, 149 * time.Millisecond, 150 * time.Millisecond},
		{"total before end", 10, bounds{end: time.Hour, total: 5}, 5, 0, 400 * time.Millisecond, 500 * time.Millisecond},
		// Far behind schedule at the end of the window: it stops there.
		{"behind at the end", 10, bounds{end: time.Second}, 0, 0, 0, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := make(chan ticket, 1<<16)
			now := 1000 * time.Hour
			switch {
			case tc.wantN == 0:
				now = tc.b.end
			case tc.b.end > 0:
				now = tc.b.end - 1
			}
			end, lag := dispatch(context.Background(), Pacer{Rate: tc.rate}, tc.b, func() time.Duration { return now }, out)
			var got []ticket
			for tk := range out {
				got = append(got, tk)
			}
			if len(got) != tc.wantN {
				t.Fatalf("tickets = %d, want %d", len(got), tc.wantN)
			}
			if end != tc.wantEnd {
				t.Errorf("schedule ends at %v, want %v", end, tc.wantEnd)
			}
			if len(got) == 0 {
				return
			}
			for i, tk := range got {
				if tk.seq != uint64(i) {
					t.Fatalf("ticket %d has seq %d", i, tk.seq)
				}
			}
			if got[0].due != tc.wantFirst || got[len(got)-1].due != tc.wantLast {
				t.Errorf("due %v..%v, want %v..%v", got[0].due, got[len(got)-1].due, tc.wantFirst, tc.wantLast)
			}
			if lag.TotalCount() != 0 {
				t.Errorf("lag recorded %d wake-ups; a dispatcher that never slept has none", lag.TotalCount())
			}
		})
	}
}

func TestDispatchStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan ticket) // nobody receives: the dispatcher blocks until cancelled
	done := make(chan struct{})
	go func() {
		dispatch(ctx, Pacer{Rate: 1e6}, bounds{end: time.Hour}, func() time.Duration { return time.Hour }, out)
		close(done)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("dispatcher did not stop on cancel")
	}
	if _, ok := <-out; ok {
		t.Error("tickets channel not closed")
	}
}
