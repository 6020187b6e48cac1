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
		name       string
		rate       float64
		b          bounds
		now        time.Duration // 0: just short of the end, or far ahead without one
		wantN      int
		wantFirst  time.Duration
		wantLast   time.Duration
		wantEnd    time.Duration
		wantUnsent uint64
	}{
		{name: "duration", rate: 100, b: bounds{end: time.Second}, wantN: 100, wantLast: 990 * time.Millisecond, wantEnd: time.Second},
		{name: "warmup+duration", rate: 100, b: bounds{warmup: time.Second, end: 3 * time.Second}, wantN: 300, wantLast: 2990 * time.Millisecond, wantEnd: 3 * time.Second},
		{name: "total", rate: 1000, b: bounds{total: 50}, wantN: 50, wantLast: 49 * time.Millisecond, wantEnd: 50 * time.Millisecond},
		// The total counts measured requests only: warm-up ones come on top.
		{name: "warmup+total", rate: 1000, b: bounds{warmup: 100 * time.Millisecond, total: 50}, wantN: 150, wantLast: 149 * time.Millisecond, wantEnd: 150 * time.Millisecond},
		{name: "total before end", rate: 10, b: bounds{end: time.Hour, total: 5}, wantN: 5, wantLast: 400 * time.Millisecond, wantEnd: 500 * time.Millisecond},
		// Behind schedule at the end of the window, within the grace: every request
		// due before the end is still handed out (late).
		{name: "behind at the end", rate: 10, b: bounds{end: time.Second, grace: time.Second}, now: time.Second, wantN: 10, wantLast: 900 * time.Millisecond, wantEnd: time.Second},
		// Past the grace: none is sent, every one is unsent, none dropped.
		{name: "behind past the grace", rate: 10, b: bounds{end: time.Second, grace: time.Second}, now: 2 * time.Second, wantEnd: time.Second, wantUnsent: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := make(chan ticket, 1<<16)
			now := tc.now
			switch {
			case now > 0:
			case tc.b.end > 0:
				now = tc.b.end - 1
			default:
				now = 1000 * time.Hour
			}
			sched, lag := dispatch(context.Background(), Pacer{Rate: tc.rate}, tc.b, func() time.Duration { return now }, out)
			var got []ticket
			for tk := range out {
				got = append(got, tk)
			}
			if len(got) != tc.wantN {
				t.Fatalf("tickets = %d, want %d", len(got), tc.wantN)
			}
			if sched.end != tc.wantEnd || sched.unsent() != tc.wantUnsent || sched.unsentFrom != uint64(len(got)) {
				t.Errorf("schedule %+v, want end %v and %d unsent after the %d sent", sched, tc.wantEnd, tc.wantUnsent, len(got))
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

// TestDispatchChargesBlockedBacklog: every worker is busy (nobody receives) and
// the clock is past the end and its grace. Before the fix the dispatcher handed
// out nothing and said nothing of the requests due; now each is unsent.
func TestDispatchChargesBlockedBacklog(t *testing.T) {
	out := make(chan ticket) // no worker free
	p := Pacer{Rate: 2500}
	now := 10 * time.Second
	b := bounds{end: 9 * time.Second, grace: 500 * time.Millisecond}
	sched, _ := dispatch(context.Background(), p, b, func() time.Duration { return now }, out)
	if sched.unsentFrom != 0 || sched.unsentTo != 22500 {
		t.Errorf("unsent %d..%d, want 0..22500 (every request due in 9 s at 2,500/s)", sched.unsentFrom, sched.unsentTo)
	}
}

func TestPacerDueBefore(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		t    time.Duration
		want uint64
	}{
		{1000, 0, 0}, {1000, 1, 1}, {1000, time.Millisecond, 1}, {1000, time.Millisecond + 1, 2},
		{3, time.Second, 3}, {3, time.Second + 1, 4}, {2500, 9 * time.Second, 22500},
	} {
		p := Pacer{Rate: tc.rate}
		if got := p.dueBefore(tc.t); got != tc.want {
			t.Errorf("Pacer{%g}.dueBefore(%v) = %d, want %d", tc.rate, tc.t, got, tc.want)
		}
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

// TestSleepUntil: the kernel's timer and the runtime's each sleep at least the
// wait (no upper bound is asserted: a busy machine may wake any of them late),
// and a cancelled context ends a long wait at once with false.
func TestSleepUntil(t *testing.T) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for _, wait := range []time.Duration{fineMin / 2, fineMin, timerSlop, timerSlop + 3*time.Millisecond} {
		start := time.Now()
		due := wait
		if !sleepUntil(context.Background(), timer, wait, func() time.Duration { return due - time.Since(start) }) {
			t.Fatalf("sleepUntil(%v) = false with a live context", wait)
		}
		if got := time.Since(start); got < wait {
			t.Errorf("sleepUntil(%v) returned after %v", wait, got)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if sleepUntil(ctx, timer, time.Hour, func() time.Duration { return time.Hour }) {
		t.Error("sleepUntil = true with a cancelled context")
	}
	if got := time.Since(start); got > time.Minute {
		t.Errorf("a cancelled context waited %v", got)
	}
}
