// Package bench is etcdperf's load generator: a pacer that stamps every request
// with its intended start time, workers that run a workload's requests, and a
// recorder that keeps bounded HdrHistograms per op type and per second.
//
// With a rate the load is an open loop: request i is due at start + i/rate and
// its response time counts from then, so a stalled server shows as the latency
// every user behind the stall saw (no coordinated omission). Without a rate, the
// workers run a closed loop as fast as they can. Run fills a results.Run.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/results"
)

// Op performs request seq for one worker and says what it moved. It runs on the
// hot path: it must not block on state shared with other workers.
type Op func(ctx context.Context, seq uint64) Outcome

// Outcome is what one request did.
type Outcome struct {
	Kind int   // index into Workload.Ops
	Sent int64 // payload bytes (keys and values) sent
	Recv int64 // payload bytes received
	Keys int64 // keys received
	// Conflicts counts compare failures the request retried (txn's GuaranteedUpdate shape).
	Conflicts int64
	// Endpoint is 1 + the index of the endpoint whose connection carried the
	// request (see invokerOf); 0 when the transport does not say.
	Endpoint int
	Err      error
}

// OpKind names an op type a workload reports.
type OpKind struct {
	Name string
	// Share is the fraction of the paced requests of this kind (its share of the
	// target rate); 0 for results that arrive on their own, such as watch events.
	Share float64
}

// Workload is a kind of load: the op types it reports and a request function per worker.
type Workload interface {
	Ops() []OpKind
	// Worker returns the request function of worker id; whatever state it keeps
	// is that worker's own. Run calls it once per worker, from one goroutine,
	// before the load starts.
	Worker(id int) Op
}

// Preparer is a workload that sets up before the load starts (fills keys, opens
// watches); nothing it does is measured. emit records results that arrive outside
// the workers' requests, such as watch events; it is valid until Finish returns.
type Preparer interface {
	Prepare(ctx context.Context, emit Emit) error
}

// Finisher is a workload that completes its results after the load stopped.
// Finish waits for results still in flight and stops what Prepare started; it
// is called whenever Prepare was (also when the run failed or was interrupted,
// with ctx done). Annotate then adds the workload's own fields to ops, indexed
// as Ops.
type Finisher interface {
	Finish(ctx context.Context)
	Annotate(ops []results.Op)
}

// Emit records a result that arrived on its own: op kind, when its cause was sent
// (wall clock), when it arrived, and its error. Results whose cause was sent during
// warm-up are not measured.
type Emit func(kind int, sent, arrived time.Time, err error)

// Progress is the state of a running benchmark, for progress bars.
type Progress struct {
	Elapsed  time.Duration // since the load started, warm-up included
	Measured time.Duration // of the measured window; 0 during warm-up
	Requests int64         // measured requests so far (watch events are not requests)
	Errors   int64         // of them, failed
	Rate     float64       // requests completed in the last full second
	P99      time.Duration // response time p99 of the window so far (the slowest op's), as of the last full second
}

// Config bounds and shapes a run.
type Config struct {
	Workers  int           // concurrent clients
	Rate     float64       // requests per second over all workers; 0 is a closed loop
	Total    uint64        // measured requests (warm-up excluded); 0: bounded by Duration
	Duration time.Duration // measured window; 0: bounded by Total
	Warmup   time.Duration // load before the measured window, not recorded

	// Prefix holds every key the workload writes. Run refuses to start when it
	// already holds keys, unless Force, and deletes it afterwards.
	Prefix string
	Force  bool
	KV     clientv3.KV // for the prefix check and the cleanup
	// OwnKeys says the workload writes only exact keys it manages itself (serve's
	// canary, which must never delete a key it did not write): Run neither checks
	// the prefix nor deletes it afterwards.
	OwnKeys bool

	// CommandTimeout bounds the prefix check, as etcdctl's --command-timeout
	// bounds a short command; zero is DefaultCommandTimeout. Without it the check
	// of a cluster that lost quorum waits minutes: etcd answers a read it cannot
	// serve with Unavailable after its request timeout, and clientv3 retries it.
	CommandTimeout time.Duration

	// Progress, when set, is called about four times a second.
	Progress func(Progress)

	// Connected, when set, says whether a connection to the cluster is up. A
	// run in which it says false for DialTimeout stops with ErrUnreachable: the
	// cluster went away, and requests would wait for it forever (etcd's client
	// waits for a connection to be ready).
	Connected   func() bool
	DialTimeout time.Duration

	// StartAt, when set, is the wall-clock time the load starts: Run prepares
	// (fills keys, opens watches) first and then waits for it, so the workers of
	// one run (--start-at) start their clocks together whatever their fill took.
	StartAt time.Time

	// WindowStart, when set, is called where the measured window begins: after
	// the setup, the wait for StartAt and the warm-up, before the first measured
	// request is due (with load already running when there is a warm-up).
	// LoadDone, when set, is called once the load stopped and its results
	// arrived, before the prefix is deleted. Scrapes taken in them bracket the
	// load and nothing else: not the prefix check, the fill or the cleanup.
	WindowStart, LoadDone func()
}

// ErrStartPassed is returned when the setup ended after Config.StartAt.
var ErrStartPassed = errors.New("the start time passed during the setup")

// ErrUnreachable ends a run that lost every connection to the cluster.
var ErrUnreachable = errors.New("lost the cluster")

// connectedPoll is how often Run asks Config.Connected.
const connectedPoll = 50 * time.Millisecond

// ErrPrefixInUse is returned when the prefix holds keys before the run and Force is not set.
var ErrPrefixInUse = errors.New("prefix already holds keys")

// SlowRequest is the time etcd expects a request to take at most: past it the
// server logs "apply request took too long" (its expected duration, 100 ms).
const SlowRequest = 100 * time.Millisecond

// DefaultCommandTimeout is etcdctl's default --command-timeout.
const DefaultCommandTimeout = 5 * time.Second

// CleanupTimeout bounds the deletion of the prefix after a run.
const CleanupTimeout = 30 * time.Second

func (c Config) check() error {
	switch {
	case c.Workers <= 0:
		return fmt.Errorf("clients must be at least 1, got %d", c.Workers)
	case c.Rate < 0:
		return fmt.Errorf("rate must not be negative, got %g", c.Rate)
	case c.Total == 0 && c.Duration <= 0:
		return errors.New("set a total number of requests or a duration")
	case c.Duration < 0 || c.Warmup < 0:
		return errors.New("duration and warm-up must not be negative")
	case c.Prefix == "":
		return errors.New("an empty prefix would cover every key; name one")
	case c.KV == nil:
		return errors.New("no client for the prefix check and cleanup")
	case c.Connected != nil && c.DialTimeout <= 0:
		return errors.New("a connection check needs a positive dial timeout")
	}
	return nil
}

// Run checks the prefix, prepares w, drives it, and fills run with the measured
// window: Ops (one per op kind), Client, Valid, WarmupS, DurationS, StartedAt (the
// start of the load, warm-up included) and EndedAt. The prefix is deleted
// afterwards, on errors and on cancellation too. When ctx is cancelled mid-run,
// Run stops promptly, fills run with the partial results, sets Interrupted and
// returns ctx's error. When the cluster goes away (see Config.Connected), Run
// stops likewise, marks the partial run invalid and returns ErrUnreachable.
func Run(parent context.Context, cfg Config, w Workload, run *results.Run) (err error) {
	if err := cfg.check(); err != nil {
		return err
	}
	ctx, stopWatch := watchConnection(parent, cfg)
	defer stopWatch()
	// lost is the cause when the run stopped because the cluster went away.
	lost := func() error {
		if cause := context.Cause(ctx); parent.Err() == nil && errors.Is(cause, ErrUnreachable) {
			return cause
		}
		return nil
	}
	if err := CheckPrefix(ctx, cfg.KV, cfg.Prefix, cfg.Force || cfg.OwnKeys, cfg.CommandTimeout); err != nil {
		if l := lost(); l != nil {
			return l
		}
		return err
	}
	defer func() {
		if cfg.OwnKeys {
			return
		}
		if l := lost(); l != nil && !cfg.Connected() {
			// Deleting would wait for a connection as long as it is allowed to.
			err = fmt.Errorf("%w; the keys under %q could not be deleted", err, cfg.Prefix)
			return
		}
		if cerr := Cleanup(cfg.KV, cfg.Prefix, ctx.Err() != nil); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	kinds := w.Ops()
	e := &engine{cfg: cfg, kinds: kinds}
	e.measureStart.Store(-1) // nothing is measured before the load starts
	fin, _ := w.(Finisher)
	setup := time.Now()
	if p, ok := w.(Preparer); ok {
		if err := p.Prepare(ctx, e.emit); err != nil {
			if fin != nil {
				fin.Finish(ctx)
			}
			if l := lost(); l != nil {
				return l
			}
			return fmt.Errorf("prepare: %w", err)
		}
	}
	run.SetupS = time.Since(setup).Seconds()
	// gRPC's per-call garbage made GC ~9% of the generator's CPU at the default
	// GOGC; a small heap (no latency slices) can trade a little memory for fewer
	// collections, leaving that CPU to the requests. Before waitStart: its
	// collection must not delay a coordinated start.
	restoreGC := loadGC()
	if err := waitStart(ctx, cfg.StartAt); err != nil {
		restoreGC()
		if fin != nil {
			fin.Finish(ctx)
		}
		if l := lost(); l != nil {
			return l
		}
		return err
	}
	e.drive(ctx, w)
	restoreGC()
	if fin != nil {
		fin.Finish(ctx)
	}
	e.closeRecorder()
	if cfg.LoadDone != nil {
		cfg.LoadDone()
	}
	window := e.window(ctx)
	ops := make([]results.Op, len(kinds))
	for i, k := range kinds {
		if ops[i], err = e.rec.result(i, k.Name, window, run.Target.Endpoints); err != nil {
			return err
		}
		// Rounded so a 0.8/0.2 split of 500/s reads 100, not 99.99999999999997.
		ops[i].TargetRPS = math.Round(cfg.Rate*k.Share*1e6) / 1e6
	}
	if fin != nil {
		fin.Annotate(ops)
	}
	e.fill(parent, run, ops, window)
	if e.rec.err != nil {
		return e.rec.err
	}
	if l := lost(); l != nil {
		run.Valid, run.InvalidReason = false, "stopped early: "+l.Error()
		return l
	}
	return ctx.Err()
}

// waitStart waits until at (when set); it fails when the setup already took
// past it, since this worker would start after the others.
func waitStart(ctx context.Context, at time.Time) error {
	if at.IsZero() {
		return nil
	}
	d := time.Until(at)
	if d < 0 {
		return fmt.Errorf("%w: it ended %s after %s; pick a later --start-at", ErrStartPassed, (-d).Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the start at %s: %w", at.UTC().Format(time.RFC3339Nano), context.Cause(ctx))
	}
}

// watchConnection returns a context that is cancelled with an ErrUnreachable
// cause once cfg.Connected has said false for cfg.DialTimeout, and a func that
// stops watching.
func watchConnection(ctx context.Context, cfg Config) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	if cfg.Connected == nil {
		return ctx, func() { cancel(nil) }
	}
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(connectedPoll)
		defer t.Stop()
		var downSince time.Time
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case now := <-t.C:
				switch {
				case cfg.Connected():
					downSince = time.Time{}
				case downSince.IsZero():
					downSince = now
				case now.Sub(downSince) >= cfg.DialTimeout:
					cancel(fmt.Errorf("%w: no connection to any endpoint for %s (--dial-timeout)", ErrUnreachable, cfg.DialTimeout))
					return
				}
			}
		}
	}()
	return ctx, func() { close(quit); <-exited; cancel(nil) }
}
