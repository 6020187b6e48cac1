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
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
	Err       error
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
	if err := CheckPrefix(ctx, cfg.KV, cfg.Prefix, cfg.Force); err != nil {
		if l := lost(); l != nil {
			return l
		}
		return err
	}
	defer func() {
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
		if ops[i], err = e.rec.result(i, k.Name, window); err != nil {
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

// engine is the state of one run.
type engine struct {
	cfg   Config
	kinds []OpKind
	rec   *recorder
	t0    time.Time
	// measureStart is the wall clock (unix ns) where the measured window begins;
	// events emitted by watchers read it concurrently.
	measureStart atomic.Int64
	recDone      chan struct{}
	lag          *results.Summary
	lagN         int64 // the pacer's wake-ups behind lag
	cpu0, cpu1   time.Duration
	maxRSS       int64
	stopped      time.Duration // when the workers returned, since t0
	sched        schedule      // open loop: where the schedule ended, since t0
	pacer        Pacer
}

func (e *engine) since() time.Duration { return time.Since(e.t0) }

// drive runs the load until its bounds or ctx end it, leaving the recorder open
// for events still in flight.
func (e *engine) drive(ctx context.Context, w Workload) {
	cfg := e.cfg
	if cfg.Warmup == 0 && cfg.WindowStart != nil {
		cfg.WindowStart()
	}
	e.t0 = time.Now()
	// Room for a few polls' worth of samples at tens of thousands of requests a second.
	e.rec = newRecorder(len(e.kinds), e.t0, cfg.Warmup, 1<<14)
	e.recDone = make(chan struct{})
	go func() { e.rec.run(); close(e.recDone) }()
	e.measureStart.Store(e.t0.Add(cfg.Warmup).UnixNano())
	b := bounds{warmup: cfg.Warmup, total: cfg.Total, grace: EndGrace}
	if cfg.Duration > 0 {
		b.end = cfg.Warmup + cfg.Duration
	}

	var wg sync.WaitGroup
	var lag chan *results.Summary
	if cfg.Rate > 0 {
		p := Pacer{Rate: cfg.Rate}
		e.pacer = p
		tickets := make(chan ticket, cfg.Workers)
		lag = make(chan *results.Summary, 1)
		go func() {
			sched, h := dispatch(ctx, p, b, e.since, tickets)
			e.sched = sched // read after <-lag
			s := results.Summarize(h)
			e.lagN = h.TotalCount() // read after <-lag
			lag <- &s
		}()
		for id := range cfg.Workers {
			op := w.Worker(id)
			wctx, cancel := workerContext(ctx)
			wg.Go(func() { defer cancel(); e.openWorker(wctx, op, p.Tolerance(), b, tickets) })
		}
	} else {
		var next, measured atomic.Uint64
		for id := range cfg.Workers {
			op := w.Worker(id)
			wctx, cancel := workerContext(ctx)
			wg.Go(func() { defer cancel(); e.closedWorker(wctx, op, b, &next, &measured) })
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	stopProgress := e.progress()
	e.cpu0, _ = rusage()
	if cfg.Warmup > 0 {
		t := time.NewTimer(cfg.Warmup)
		select {
		case <-t.C:
			e.cpu0, _ = rusage()
			if cfg.WindowStart != nil {
				cfg.WindowStart()
			}
		case <-done:
		}
		t.Stop()
	}
	<-done
	e.stopped = e.since()
	e.cpu1, e.maxRSS = rusage()
	stopProgress()
	if lag != nil {
		e.lag = <-lag
		e.chargeUnsent()
	}
}

// chargeUnsent records the requests the dispatcher held back because every
// worker was busy: their response time runs from their due time to the moment
// the run stopped, a lower bound of what a user sending them would have waited.
// Their op kind follows the workload's shares (the kind of a request is only
// known once a worker runs it): an equidistributed sequence over the cumulative
// shares, so n unsent requests split like n sent ones would.
func (e *engine) chargeUnsent() {
	var total float64
	for _, k := range e.kinds {
		total += k.Share
	}
	for seq := e.sched.unsentFrom; seq < e.sched.unsentTo; seq++ {
		due := e.pacer.Due(seq)
		if due < e.cfg.Warmup {
			continue
		}
		kind, x := 0, math.Mod(float64(seq)*goldenFrac, 1)*total
		for i, k := range e.kinds {
			if k.Share > 0 {
				kind = i
				if x < k.Share {
					break
				}
				x -= k.Share
			}
		}
		e.rec.in <- sample{start: int64(e.stopped), done: int64(e.stopped), resp: int64(e.stopped - due), kind: uint8(kind), unsent: true, paced: true}
	}
}

// goldenFrac is the fractional part of the golden ratio: multiples of it mod 1
// spread as evenly as any sequence can.
const goldenFrac = 0.6180339887498949

// progress reports to cfg.Progress until the returned stop is called.
func (e *engine) progress() (stop func()) {
	if e.cfg.Progress == nil {
		return func() {}
	}
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				el := e.since()
				e.cfg.Progress(Progress{Elapsed: el, Measured: max(el-e.cfg.Warmup, 0), Requests: e.rec.count.Load(),
					Errors: e.rec.errs.Load(), Rate: float64(e.rec.lastRate.Load()), P99: time.Duration(e.rec.p99Us.Load()) * time.Microsecond})
			}
		}
	}()
	return func() { close(quit); <-exited }
}

// workerContext gives a worker a context of its own. gRPC derives a cancelable
// context for every call, which registers with its parent under the parent's
// lock: with one shared parent, every request of every worker takes that lock.
func workerContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// openWorker runs tickets from the dispatcher. Response time counts from the
// ticket's due time, service time from the actual send.
func (e *engine) openWorker(ctx context.Context, op Op, tolerance time.Duration, b bounds, tickets <-chan ticket) {
	for t := range tickets {
		start := e.since()
		out := op(ctx, t.seq)
		done := e.since()
		if t.due < b.warmup || stoppedBy(ctx, out.Err) {
			continue
		}
		e.rec.in <- sample{
			start: int64(start), done: int64(done), resp: int64(done - t.due), svc: int64(done - start),
			sent: out.Sent, recv: out.Recv, keys: out.Keys, conflicts: out.Conflicts,
			kind: uint8(out.Kind), code: codeOf(out.Err), late: start-t.due > tolerance, paced: true,
		}
	}
}

// closedWorker sends its next request as soon as the last one returned.
func (e *engine) closedWorker(ctx context.Context, op Op, b bounds, next, measured *atomic.Uint64) {
	for {
		select {
		case <-ctx.Done():
			return
		default:
		}
		start := e.since()
		if b.end > 0 && start >= b.end {
			return
		}
		inWindow := start >= b.warmup
		if inWindow && b.total > 0 && measured.Add(1) > b.total {
			return
		}
		out := op(ctx, next.Add(1)-1)
		done := e.since()
		if !inWindow || stoppedBy(ctx, out.Err) {
			continue
		}
		e.rec.in <- sample{
			start: int64(start), done: int64(done), resp: int64(done - start), svc: int64(done - start),
			sent: out.Sent, recv: out.Recv, keys: out.Keys, conflicts: out.Conflicts,
			kind: uint8(out.Kind), code: codeOf(out.Err), paced: true,
		}
	}
}

// stoppedBy tells a request cut short by the end of the run, which is no result.
func stoppedBy(ctx context.Context, err error) bool { return err != nil && ctx.Err() != nil }

func codeOf(err error) uint8 {
	if err == nil {
		return uint8(codes.OK) // without the errors.As below, whose target escapes: no allocation per request
	}
	c := status.Code(err)
	// etcd's client turns the errors of its server into EtcdErrors, which keep
	// the gRPC code but not the status: "request timed out" is Unavailable.
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		c = ee.Code()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		c = codes.DeadlineExceeded
	}
	if int(c) >= numCodes {
		c = codes.Unknown
	}
	return uint8(c)
}

// emit is the Emit given to Preparers.
func (e *engine) emit(kind int, sent, arrived time.Time, err error) {
	ms := e.measureStart.Load()
	if ms < 0 || sent.UnixNano() < ms {
		return
	}
	lat := int64(arrived.Sub(sent))
	e.rec.in <- sample{done: int64(arrived.Sub(e.t0)), resp: lat, svc: lat, kind: uint8(kind), code: codeOf(err)}
}

// closeRecorder ends the recording once the workers and the Finisher are done.
func (e *engine) closeRecorder() {
	e.rec.padTo = int64(e.stopped)
	close(e.rec.in)
	<-e.recDone
}

// window is the measured window, from the end of warm-up to:
//   - in an open loop, the end of the schedule, or the last send when the
//     generator fell behind it; the tail of the last responses is not part of
//     it, so a run that kept up achieves its rate exactly;
//   - in a closed loop, the last completion, or the end of the duration when
//     that is later (a run that completes nothing still lasted);
//   - on interruption, the stop.
//
// It reads the recorder, so it is called after closeRecorder.
func (e *engine) window(ctx context.Context) time.Duration {
	var end time.Duration
	switch {
	case ctx.Err() != nil:
		end = e.stopped
	case e.cfg.Rate > 0:
		end = max(e.sched.end, time.Duration(e.rec.lastSent))
	default:
		end = time.Duration(e.rec.lastDone)
		if e.cfg.Duration > 0 {
			end = max(end, min(e.cfg.Warmup+e.cfg.Duration, e.stopped))
		}
	}
	return max(end-e.cfg.Warmup, 0)
}

// fill writes the run's measured results; ctx is the caller's, done when the run
// was interrupted.
func (e *engine) fill(ctx context.Context, run *results.Run, ops []results.Op, window time.Duration) {
	cfg := e.cfg
	run.Ops = ops
	run.WarmupS = cfg.Warmup.Seconds()
	run.DurationS = window.Seconds()
	run.StartedAt = e.t0.UTC()
	run.EndedAt = e.t0.Add(cfg.Warmup + window).UTC()
	run.Client = results.Client{
		CPUSeconds:  (e.cpu1 - e.cpu0).Seconds(),
		MaxRSSBytes: e.maxRSS,
		Cores:       runtime.GOMAXPROCS(0),
	}
	if e.lag != nil {
		run.Client.PacingLagP99Ms, run.Client.PacingWakeups = e.lag.P99, e.lagN
	}
	run.Interrupted = ctx.Err() != nil
	run.Valid, run.InvalidReason = true, ""
	// Validity is about the generator producing the load: requests sent and
	// completed, successes and errors alike. Errors are the server's answer and
	// fail the verdict (with their codes); they do not make the run invalid.
	r := e.rec
	var unsent int64
	for _, op := range ops {
		unsent += op.Unsent
	}
	switch {
	case r.pacedReq == 0 && unsent == 0:
		run.Valid, run.InvalidReason = false, "no request completed in the measured window"
	case cfg.Rate > 0 && window > 0:
		achieved := float64(r.pacedReq) / window.Seconds()
		if !results.RateKept(achieved, cfg.Rate) {
			run.Valid = false
			run.InvalidReason = fmt.Sprintf("sent %.0f req/s of %.0f target (%.0f%%)", achieved, cfg.Rate, 100*achieved/cfg.Rate)
			if unsent > 0 {
				run.InvalidReason += fmt.Sprintf("; %d requests due were never sent: all %d clients were waiting on replies", unsent, cfg.Workers)
			}
		}
	}
}
