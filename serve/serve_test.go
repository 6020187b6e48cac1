package serve

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

func TestScheduleNext(t *testing.T) {
	for _, c := range []struct {
		s        Schedule
		failures int
		want     time.Duration
	}{
		{Schedule{Every: time.Minute}, 0, time.Minute},
		{Schedule{Every: time.Minute}, 1, 2 * time.Minute},
		{Schedule{Every: time.Minute}, 2, 4 * time.Minute},
		{Schedule{Every: time.Minute}, 3, 8 * time.Minute},
		{Schedule{Every: time.Minute}, 50, 8 * time.Minute},
		{Schedule{Every: time.Minute, MaxBackoff: 3 * time.Minute}, 1, 2 * time.Minute},
		{Schedule{Every: time.Minute, MaxBackoff: 3 * time.Minute}, 2, 3 * time.Minute},
		{Schedule{Every: time.Minute, MaxBackoff: 30 * time.Second}, 2, time.Minute}, // never under Every
	} {
		if got := c.s.Next(c.failures); got != c.want {
			t.Errorf("%+v.Next(%d) = %s, want %s", c.s, c.failures, got, c.want)
		}
	}
}

// ranResult is a probe that sent load and got verdict status, with errs failed requests.
func ranResult(status finding.Status, errs int64) Result {
	return Result{HasLeader: true, LeaderKnown: true, Verdict: finding.Verdict{Status: status, Bottleneck: finding.BottleneckNone},
		Run: &results.Run{Ops: []results.Op{{Op: "put", Requests: 10, Errors: errs, TargetRPS: 10}}}}
}

// TestRunNeverOverlaps: a probe longer than the period delays the next one
// instead of running beside it, and the schedule stops after Probes ticks.
func TestRunNeverOverlaps(t *testing.T) {
	var running, most, calls atomic.Int32
	probe := func(ctx context.Context) Result {
		calls.Add(1)
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(30 * time.Millisecond) // three periods
		return ranResult(finding.StatusPass, 0)
	}
	var got []Result
	Run(context.Background(), Schedule{Every: 10 * time.Millisecond, Probes: 4}, probe, func(r Result) { got = append(got, r) })
	if most.Load() != 1 || calls.Load() != 4 || len(got) != 4 {
		t.Errorf("at most %d probes at once, %d calls, %d results: want 1, 4, 4", most.Load(), calls.Load(), len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Start.Before(got[i-1].End) {
			t.Errorf("probe %d started %s before probe %d ended", i, got[i-1].End.Sub(got[i].Start), i-1)
		}
	}
}

// TestRunBacksOff: failing probes space out (doubling), a good one restores
// the period. Gaps are only compared with each other, never with a bound a busy
// machine could miss.
func TestRunBacksOff(t *testing.T) {
	outcomes := []Result{
		{Skipped: SkipNoLeader, LeaderKnown: true}, {Skipped: SkipUnreachable, Err: errors.New("down")},
		ranResult(finding.StatusFail, 3), ranResult(finding.StatusPass, 0), ranResult(finding.StatusPass, 0),
	}
	var starts []time.Time
	i := 0
	probe := func(context.Context) Result {
		starts = append(starts, time.Now())
		r := outcomes[i]
		i++
		return r
	}
	every := 20 * time.Millisecond
	Run(context.Background(), Schedule{Every: every, Probes: len(outcomes)}, probe, func(Result) {})
	gap := func(k int) time.Duration { return starts[k+1].Sub(starts[k]) }
	// After 1, 2, 3 failures the waits are at least 2, 4, 8 periods; after a success one period.
	for k, want := range []time.Duration{2 * every, 4 * every, 8 * every} {
		if gap(k) < want {
			t.Errorf("wait after failure %d: %s, want at least %s", k+1, gap(k), want)
		}
	}
	if gap(3) >= gap(2) {
		t.Errorf("wait after a good probe %s is not shorter than the back-off before it %s", gap(3), gap(2))
	}
}

// TestRunStopsOnCancel: cancelling stops the probe in progress (it sees its
// context done) and records nothing that measured nothing.
func TestRunStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var sawCancel atomic.Bool
	probe := func(ctx context.Context) Result {
		close(started)
		<-ctx.Done()
		sawCancel.Store(true)
		return Result{Err: ctx.Err()}
	}
	var mu sync.Mutex
	var recorded int
	done := make(chan struct{})
	go func() {
		Run(ctx, Schedule{Every: time.Hour}, probe, func(Result) { mu.Lock(); recorded++; mu.Unlock() })
		close(done)
	}()
	<-started
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if !sawCancel.Load() || recorded != 0 {
		t.Errorf("probe saw cancel %v, %d results recorded: want true, 0", sawCancel.Load(), recorded)
	}
}

func TestFailing(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Result
		want bool
	}{
		{"pass", ranResult(finding.StatusPass, 0), false},
		{"fail verdict, every request served", ranResult(finding.StatusFail, 0), false},
		{"request errors", ranResult(finding.StatusFail, 1), true},
		{"no leader", Result{Skipped: SkipNoLeader}, true},
		{"error", Result{Err: errors.New("x")}, true},
	} {
		if got := c.r.Failing(); got != c.want {
			t.Errorf("%s: Failing() = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTinyProfile(t *testing.T) {
	p, err := TinyProfile()
	if err != nil {
		t.Fatal(err)
	}
	load := time.Duration(p.Duration + p.Warmup)
	// "A few requests per second for a few seconds": the canary must not load production.
	if p.Rate > 20 || p.Clients > 4 || load > 10*time.Second || float64(p.Rate)*load.Seconds() > 100 {
		t.Errorf("tiny is %g req/s from %d clients for %s: not tiny", p.Rate, p.Clients, load)
	}
}

func TestValidate(t *testing.T) {
	p, err := TinyProfile()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		prefix string
		every  time.Duration
		ok     bool
	}{
		{"/etcdperf/serve/", time.Minute, true},
		{"/etcdperf/serve/", 10 * time.Second, true},
		{"/etcdperf/serve/", 9 * time.Second, false}, // 5 s of load needs 10 s
		{"", time.Minute, false},
		{"/", time.Minute, false},
	} {
		pr := &Prober{Profile: p, ID: Identity{Prefix: c.prefix, Instance: "a"}}
		if err := pr.Validate(c.every); (err == nil) != c.ok {
			t.Errorf("prefix %q every %s: %v, want ok=%v", c.prefix, c.every, err, c.ok)
		}
	}
}
