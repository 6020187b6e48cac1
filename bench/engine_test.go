package bench

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/results"
)

// fakeKV answers the prefix check and the cleanup without a server.
type fakeKV struct{ clientv3.KV }

func (fakeKV) Get(context.Context, string, ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	return &clientv3.GetResponse{}, nil
}

func (fakeKV) Delete(context.Context, string, ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	return &clientv3.DeleteResponse{}, nil
}

// fakeWorkload runs op in every worker.
type fakeWorkload struct{ op Op }

func (f fakeWorkload) Ops() []OpKind { return []OpKind{{Name: "fake", Share: 1}} }
func (f fakeWorkload) Worker(int) Op { return f.op }

// TestLateStarts paces 20 requests 5 ms apart to one worker whose requests take
// at least 20 ms: request i cannot start before 20·i ms, 15·i ms after its due
// time. Only lower bounds are asserted, which a slow machine can only exceed.
func TestLateStarts(t *testing.T) {
	slow := func(context.Context, uint64) Outcome { time.Sleep(20 * time.Millisecond); return Outcome{} }
	var run results.Run
	cfg := Config{Workers: 1, Rate: 200, Total: 20, Prefix: DefaultPrefix, KV: fakeKV{}}
	if err := Run(context.Background(), cfg, fakeWorkload{slow}, &run); err != nil {
		t.Fatal(err)
	}
	op := run.Ops[0]
	if op.Requests != 20 || op.LateStarts < 19 {
		t.Errorf("%d requests, %d late starts; want 20 and at least 19", op.Requests, op.LateStarts)
	}
	// The last request is due at 95 ms and cannot end before 400 ms.
	if op.Latency.Max < 300 {
		t.Errorf("max response time %g ms: must count from the intended start", op.Latency.Max)
	}
	if op.Service.Max >= op.Latency.Max || op.Service.P50 < 20 {
		t.Errorf("service %+v vs response %+v", op.Service, op.Latency)
	}
	// 20 requests in at least 400 ms is at most 50/s of a 200/s target.
	if run.Valid || run.InvalidReason == "" {
		t.Errorf("valid %v (%q): a generator that cannot keep the rate makes an invalid run", run.Valid, run.InvalidReason)
	}
}

// TestOnTimeStarts paces a fast op slowly (one request every 20 ms, a 2 ms
// tolerance) and checks the generator calls no start late that was not: every
// late start it counts must be one the op itself saw begin more than the
// tolerance after its due time on the run's schedule. The op's own clock reads
// after the engine's, so the engine can count fewer, never more. On an idle
// machine the op sees every start on time, so this asks for (almost) no late
// start; on a loaded one the scheduler may really start a few late, which the
// generator must then count and the test does not hold against it.
func TestOnTimeStarts(t *testing.T) {
	const total = 25
	var called [total]time.Time // written by one worker each, read after Run
	fast := func(_ context.Context, seq uint64) Outcome {
		if seq < total {
			called[seq] = time.Now()
		}
		return Outcome{}
	}
	var run results.Run
	cfg := Config{Workers: 2, Rate: 50, Total: total, Prefix: DefaultPrefix, KV: fakeKV{}}
	begin := time.Now()
	if err := Run(context.Background(), cfg, fakeWorkload{fast}, &run); err != nil {
		t.Fatal(err)
	}
	op := run.Ops[0]
	if op.Requests != total {
		t.Fatalf("%d requests of %d", op.Requests, total)
	}
	// The run's start on the monotonic clock: StartedAt carries only the wall
	// clock, so take the short set-up from it and add that to begin, which has
	// both (a wall-clock difference over the whole run could be off by the
	// clock's slew).
	t0 := begin.Add(run.StartedAt.Sub(begin))
	p := Pacer{Rate: cfg.Rate}
	var seen int64
	var worst time.Duration
	for i, at := range called {
		late := at.Sub(t0) - p.Due(uint64(i))
		worst = max(worst, late)
		if late > p.Tolerance() {
			seen++
		}
	}
	t.Logf("late starts: %d counted, %d seen by the op (worst %v), pacer lag p99 %g ms", op.LateStarts, seen, worst, run.Client.PacingLagP99Ms)
	if op.LateStarts > seen {
		t.Errorf("%d late starts counted of %d requests, but the op saw only %d start more than %v late: on-time starts counted late",
			op.LateStarts, total, seen, p.Tolerance())
	}
}

// BenchmarkEngineClosedLoop is the generator's own cost per request: the loop,
// two clock reads and the hand-off to the recorder, around an op that does nothing.
func BenchmarkEngineClosedLoop(b *testing.B) {
	nop := func(context.Context, uint64) Outcome { return Outcome{} }
	cfg := Config{Workers: 16, Total: uint64(b.N), Prefix: DefaultPrefix, KV: fakeKV{}}
	b.ReportAllocs()
	b.ResetTimer()
	var run results.Run
	if err := Run(context.Background(), cfg, fakeWorkload{nop}, &run); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEngineOpenLoop adds the dispatcher: at a rate no run reaches it never
// sleeps, so this is the cost of handing out a ticket.
func BenchmarkEngineOpenLoop(b *testing.B) {
	nop := func(context.Context, uint64) Outcome { return Outcome{} }
	cfg := Config{Workers: 16, Rate: 1e12, Total: uint64(b.N), Prefix: DefaultPrefix, KV: fakeKV{}}
	b.ReportAllocs()
	b.ResetTimer()
	var run results.Run
	if err := Run(context.Background(), cfg, fakeWorkload{nop}, &run); err != nil {
		b.Fatal(err)
	}
}

// TestStallAtEndIsCharged: the server stops answering 200 ms into a 500 ms run
// at 200 req/s and answers again only well after the end and its grace. Every
// one of the 100 requests due before the end must be charged, sent late or
// unsent, from its due time; before the fix the ~55 the dispatcher never handed
// out vanished and the p90 stayed at the healthy figure. The run is valid: what
// it did not send was due while every client waited on the server. Only counts
// and lower bounds are asserted, which a slow machine can only exceed.
func TestStallAtEndIsCharged(t *testing.T) {
	release := make(chan struct{})
	op := func(ctx context.Context, seq uint64) Outcome {
		if seq >= 40 {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return Outcome{}
	}
	go func() { time.Sleep(500*time.Millisecond + EndGrace + 500*time.Millisecond); close(release) }()
	var run results.Run
	cfg := Config{Workers: 2, Rate: 200, Duration: 500 * time.Millisecond, Prefix: DefaultPrefix, KV: fakeKV{}}
	if err := Run(context.Background(), cfg, fakeWorkload{op}, &run); err != nil {
		t.Fatal(err)
	}
	o := run.Ops[0]
	if o.Requests+o.Unsent != 100 {
		t.Fatalf("%d sent + %d unsent of the 100 due before the end", o.Requests, o.Unsent)
	}
	if h, _ := o.ResponseHist.Decode(); h.TotalCount() != 100 {
		t.Errorf("response histogram holds %d of 100", h.TotalCount())
	}
	// 60 of the 100 were due by 500 ms and waited until at least 2 s.
	if o.Latency.P90 < 1000 {
		t.Errorf("p90 %g ms: the stall over the end does not show", o.Latency.P90)
	}
	// The shortfall is requests due while every client waited on the server:
	// the run stays valid, and the stall over the end is measured.
	if !run.Valid {
		t.Errorf("invalid (%s) with %d sent and %d held back while every client waited", run.InvalidReason, o.Requests, o.Unsent)
	}
	if run.Stall == nil || run.Stall.Seconds < 1 {
		t.Errorf("stall %+v: the requests waited from 200 ms to past the end and its grace", run.Stall)
	}
}

// TestStallExcusesOnlyItsOwnShortfall: two clients whose requests take 1 ms
// each (2,000/s at most) cannot carry 20,000/s, stall or not. A 1.2 s stall in
// the 3 s window held back at most the requests due while it lasted, so the run
// stays invalid; before the fix any stall of a second made every request held
// back the server's (CI: bench put --rate 100000 --clients 2 exited 1, not 3,
// behind a stall of a second on a busy host). Only lower bounds of time are
// relied on, which a slow machine can only exceed.
func TestStallExcusesOnlyItsOwnShortfall(t *testing.T) {
	var t0 atomic.Int64
	op := func(ctx context.Context, _ uint64) Outcome {
		now := time.Now().UnixNano()
		t0.CompareAndSwap(0, now)
		switch since := time.Duration(now - t0.Load()); {
		case since >= 500*time.Millisecond && since < 1700*time.Millisecond:
			time.Sleep(1700*time.Millisecond - since) // both clients wait: no reply for 1.2 s
		default:
			time.Sleep(time.Millisecond)
		}
		return Outcome{}
	}
	var run results.Run
	cfg := Config{Workers: 2, Rate: 20000, Duration: 3 * time.Second, Prefix: DefaultPrefix, KV: fakeKV{}}
	if err := Run(context.Background(), cfg, fakeWorkload{op}, &run); err != nil {
		t.Fatal(err)
	}
	if run.Stall == nil || run.Stall.Seconds < results.StallSeconds {
		t.Fatalf("stall %+v: both clients waited 1.2 s", run.Stall)
	}
	if run.Valid {
		o := run.Ops[0]
		t.Errorf("valid with %d sent and %d held back: two clients cannot carry 20,000/s, and a %.1f s stall explains at most %.0f of them",
			o.Requests, o.Unsent, run.Stall.Seconds, cfg.Rate*run.Stall.Seconds)
	}
}

// TestErrorsKeepTheRunValid: a server that answers every request with an error
// got the load the generator was asked for; the run is valid (and the verdict
// fails on the errors), not invalid as before the fix ("all 20 requests failed").
func TestErrorsKeepTheRunValid(t *testing.T) {
	failing := func(context.Context, uint64) Outcome {
		return Outcome{Err: status.Error(codes.ResourceExhausted, "etcdserver: mvcc: database space exceeded")}
	}
	var run results.Run
	cfg := Config{Workers: 2, Rate: 100, Duration: 500 * time.Millisecond, Prefix: DefaultPrefix, KV: fakeKV{}}
	if err := Run(context.Background(), cfg, fakeWorkload{failing}, &run); err != nil {
		t.Fatal(err)
	}
	o := run.Ops[0]
	if o.Errors != o.Requests || o.ErrorsByCode["ResourceExhausted"] != o.Requests || o.Requests < 45 {
		t.Fatalf("%d requests, errors %v", o.Requests, o.ErrorsByCode)
	}
	if !run.Valid {
		t.Errorf("invalid (%s): errors are the server's answer, the generator produced the load", run.InvalidReason)
	}
	if o.ThroughputRPS != 0 || o.ServiceOK != nil {
		t.Errorf("throughput %g, exact figures %+v: both count successes only", o.ThroughputRPS, o.ServiceOK)
	}
}

// slowSetup is a workload whose setup (a fill) takes a while.
type slowSetup struct {
	fakeWorkload
	took     time.Duration
	prepared time.Time
}

func (s *slowSetup) Prepare(context.Context, Emit) error {
	time.Sleep(s.took)
	s.prepared = time.Now()
	return nil
}

// TestStartAtAfterSetup: coordinated workers fill first and then wait for the
// common start, so a worker with a slow fill still starts its clock at
// --start-at (before the fix the wait came first and the fill after it).
func TestStartAtAfterSetup(t *testing.T) {
	nop := func(context.Context, uint64) Outcome { return Outcome{} }
	begin := time.Now()
	at := begin.Add(600 * time.Millisecond)
	w := &slowSetup{fakeWorkload: fakeWorkload{nop}, took: 200 * time.Millisecond}
	var run results.Run
	var windowAt time.Time
	cfg := Config{Workers: 1, Rate: 100, Total: 5, Prefix: DefaultPrefix, KV: fakeKV{}, StartAt: at,
		WindowStart: func() { windowAt = time.Now() }}
	if err := Run(context.Background(), cfg, w, &run); err != nil {
		t.Fatal(err)
	}
	if !w.prepared.Before(at) || run.StartedAt.Before(at) || windowAt.Before(at) || windowAt.After(run.StartedAt) {
		t.Errorf("setup ended %s, window hook %s, load started %s; want setup < start-at %s <= hook <= load start",
			w.prepared.Sub(begin), windowAt.Sub(begin), run.StartedAt.Sub(begin), at.Sub(begin))
	}
	if run.SetupS < 0.2 {
		t.Errorf("setup took %gs, recorded %gs", w.took.Seconds(), run.SetupS)
	}

	// A setup that takes past the start fails instead of starting out of step.
	w.took = 0
	cfg.StartAt = time.Now().Add(-time.Millisecond)
	if err := Run(context.Background(), cfg, w, &run); !errors.Is(err, ErrStartPassed) {
		t.Errorf("start passed: %v", err)
	}
	// Ctrl-C while waiting: the context's error comes back (exit 130).
	cfg.StartAt = time.Now().Add(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := Run(ctx, cfg, w, &run); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
}

// TestHotLoopAllocationFree: a successful request costs the engine no
// allocation (codeOf used to allocate on every call, errors.As's target escaping).
func TestHotLoopAllocationFree(t *testing.T) {
	if n := testing.AllocsPerRun(1000, func() { _ = codeOf(nil) }); n != 0 {
		t.Errorf("codeOf(nil) allocates %g times", n)
	}
}

// stuckKV is a cluster that lost quorum: a read waits for as long as it may.
type stuckKV struct{ fakeKV }

func (stuckKV) Get(ctx context.Context, _ string, _ ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestCheckPrefixBounded: the prefix check of a cluster that cannot answer
// gives up after the command timeout and says so; a cancelled run's does not
// blame the timeout.
func TestCheckPrefixBounded(t *testing.T) {
	err := CheckPrefix(context.Background(), stuckKV{}, "/p/", false, 20*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "command timeout (20ms)") {
		t.Errorf("stuck check: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := CheckPrefix(ctx, stuckKV{}, "/p/", false, time.Hour); !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "command timeout") {
		t.Errorf("cancelled check: %v", err)
	}
	if err := CheckPrefix(context.Background(), stuckKV{}, "/p/", true, 0); err != nil {
		t.Errorf("forced check: %v", err)
	}
}

// TestSlowServerShortfall: two clients at 10/s may each wait 200 ms a request,
// past etcd's slow-request bound. A server slower than that makes requests
// late (300 ms: sent late within the grace) or holds them back past it (500 ms),
// with replies coming all the while (no stall). The shortfall is the server's:
// the run stays valid, and every request due is charged.
func TestSlowServerShortfall(t *testing.T) {
	for _, took := range []time.Duration{300 * time.Millisecond, 500 * time.Millisecond} {
		t.Run(took.String(), func(t *testing.T) {
			slow := func(context.Context, uint64) Outcome { time.Sleep(took); return Outcome{} }
			var run results.Run
			cfg := Config{Workers: 2, Rate: 10, Duration: 2 * time.Second, Prefix: DefaultPrefix, KV: fakeKV{}}
			if err := Run(context.Background(), cfg, fakeWorkload{slow}, &run); err != nil {
				t.Fatal(err)
			}
			o := run.Ops[0]
			if o.LateStarts == 0 || !run.Valid {
				t.Errorf("valid %v (%s), %d sent (%d late), %d held back: the server's shortfall keeps the run valid", run.Valid, run.InvalidReason, o.Requests, o.LateStarts, o.Unsent)
			}
			if h, _ := o.ResponseHist.Decode(); h.TotalCount() != o.Requests+o.Unsent {
				t.Errorf("response histogram holds %d of %d sent and held back", h.TotalCount(), o.Requests+o.Unsent)
			}
		})
	}
}

// TestFewClientsShortfall: two clients at 40/s may each wait 50 ms, under
// etcd's slow-request bound. A server answering in 150 ms (past the bound, as
// the service times measure) held them back: the run stays valid. One answering
// in 30 ms is healthy, and the two clients are too few: invalid, saying how many
// would carry the rate.
func TestFewClientsShortfall(t *testing.T) {
	for _, c := range []struct {
		took  time.Duration
		rate  float64
		valid bool
	}{{150 * time.Millisecond, 40, true}, {30 * time.Millisecond, 100, false}} {
		t.Run(c.took.String(), func(t *testing.T) {
			op := func(context.Context, uint64) Outcome { time.Sleep(c.took); return Outcome{} }
			var run results.Run
			cfg := Config{Workers: 2, Rate: c.rate, Duration: 2 * time.Second, Prefix: DefaultPrefix, KV: fakeKV{}}
			if err := Run(context.Background(), cfg, fakeWorkload{op}, &run); err != nil {
				t.Fatal(err)
			}
			if run.Valid != c.valid {
				t.Errorf("valid %v (%s), want %v", run.Valid, run.InvalidReason, c.valid)
			}
			if !c.valid && !strings.Contains(run.InvalidReason, "raise --clients to 10") {
				t.Errorf("reason %q: should say how many clients carry 100/s at 100 ms", run.InvalidReason)
			}
		})
	}
}
