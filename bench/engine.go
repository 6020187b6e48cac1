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
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/etcdperf/etcdperf/internal/leanrpc"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

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
	var retries leanrpc.Retries
	ctx = leanrpc.WithRetries(ctx, &retries)
	for t := range tickets {
		start := e.since()
		r0 := retries.Load()
		out := op(ctx, t.seq)
		done := e.since()
		if t.due < b.warmup {
			continue
		}
		if stoppedBy(ctx, out.Err) {
			// No result, but it waited until the stop: a stall over the end shows.
			e.rec.in <- sample{start: int64(start), done: int64(done), ep: epOf(out), paced: true, cut: true}
			continue
		}
		e.rec.in <- sample{
			start: int64(start), done: int64(done), resp: int64(done - t.due), svc: int64(done - start),
			sent: out.Sent, recv: out.Recv, keys: out.Keys, conflicts: out.Conflicts,
			kind: uint8(out.Kind), ep: epOf(out), code: codeOf(out.Err), late: start-t.due > tolerance, paced: true,
			retried: retries.Load() > r0,
		}
	}
}

// closedWorker sends its next request as soon as the last one returned.
func (e *engine) closedWorker(ctx context.Context, op Op, b bounds, next, measured *atomic.Uint64) {
	var retries leanrpc.Retries
	ctx = leanrpc.WithRetries(ctx, &retries)
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
		r0 := retries.Load()
		out := op(ctx, next.Add(1)-1)
		done := e.since()
		if !inWindow {
			continue
		}
		if stoppedBy(ctx, out.Err) {
			e.rec.in <- sample{start: int64(start), done: int64(done), ep: epOf(out), paced: true, cut: true}
			continue
		}
		e.rec.in <- sample{
			start: int64(start), done: int64(done), resp: int64(done - start), svc: int64(done - start),
			sent: out.Sent, recv: out.Recv, keys: out.Keys, conflicts: out.Conflicts,
			kind: uint8(out.Kind), ep: epOf(out), code: codeOf(out.Err), paced: true,
			retried: retries.Load() > r0,
		}
	}
}

// stoppedBy tells a request cut short by the end of the run, which is no result.
func stoppedBy(ctx context.Context, err error) bool { return err != nil && ctx.Err() != nil }

// epOf is the sample's endpoint of out: 0 (not known) past what a sample holds.
func epOf(out Outcome) uint8 {
	if out.Endpoint < 0 || out.Endpoint > math.MaxUint8 {
		return 0
	}
	return uint8(out.Endpoint)
}

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
	run.Stall = e.rec.stall()
	run.EndpointLoads = e.rec.endpointLoads(run.Target.Endpoints)
	run.WarmupS = cfg.Warmup.Seconds()
	run.DurationS = window.Seconds()
	run.StartedAt = e.t0.UTC()
	run.EndedAt = e.t0.Add(cfg.Warmup + window).UTC()
	run.Client = results.Client{
		CPUSeconds:  (e.cpu1 - e.cpu0).Seconds(),
		MaxRSSBytes: e.maxRSS,
		Cores:       runtime.GOMAXPROCS(0),
		Transport:   run.Client.Transport, // the caller's: it opened the connections
	}
	if e.lag != nil {
		run.Client.PacingLagP99Ms, run.Client.PacingWakeups = e.lag.P99, e.lagN
	}
	run.Interrupted = ctx.Err() != nil
	run.Valid, run.InvalidReason = true, ""
	// Validity is about the generator producing the load: requests sent and
	// completed, successes and errors alike. Errors are the server's answer and
	// fail the verdict (with their codes); they do not make the run invalid.
	// Requests that were due while every client waited on a stalled server
	// (unsent, behind a span of results.StallSeconds with no reply) are the
	// server's shortfall, not the generator's: they are charged from
	// their due times and the run stays valid, failing on the latency and the
	// stall they show. A generator too busy to send is the client class's to
	// call (its CPU, its pacing lag), which makes the verdict invalid.
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
		// Where the server's slowness kept every client waiting, requests sent
		// late and held back past the grace alike count, over the schedule they
		// were due in (late sends within the grace may outlast it).
		kept := results.RateKept(achieved, cfg.Rate)
		// Only where the server was slower than etcd's own slow-request bound:
		// the clients could carry the rate at that bound (4 clients at 20/s may
		// each wait 200 ms a request), or the measured mean service time was
		// past it (busy clients carry Workers/mean a second, Little's law); or
		// behind a stall, for the requests due while it lasted. Clients too few
		// for the rate at a latency etcd calls healthy (2 clients at 100,000/s)
		// are the generator's shortfall, and the run is invalid, stall or not.
		stalled := run.Stall != nil && run.Stall.Seconds >= results.StallSeconds
		budget := time.Duration(float64(cfg.Workers) / cfg.Rate * float64(time.Second))
		slow := budget >= SlowRequest || e.meanService() >= SlowRequest
		if sched := e.sched.end - cfg.Warmup; !kept && (stalled || slow) && sched > 0 {
			span := min(window, sched)
			held := unsent
			if !slow {
				held = min(unsent, int64(math.Ceil(cfg.Rate*stallOverlap(run.Stall, span))))
			}
			kept = results.RateKept(float64(r.pacedReq+held)/span.Seconds(), cfg.Rate)
		}
		if !kept {
			run.Valid = false
			run.InvalidReason = fmt.Sprintf("sent %.0f req/s of %.0f target (%.0f%%)", achieved, cfg.Rate, 100*achieved/cfg.Rate)
			if unsent > 0 {
				run.InvalidReason += fmt.Sprintf("; %d requests due were never sent because all %d clients were waiting on replies, and they do not make up the shortfall", unsent, cfg.Workers)
			}
			if !slow {
				run.InvalidReason += fmt.Sprintf("; %d clients at %g/s leave each request %s, under etcd's %s slow-request bound: raise --clients to %d or more",
					cfg.Workers, cfg.Rate, units.Duration(budget.Seconds()), units.Duration(SlowRequest.Seconds()), int(math.Ceil(cfg.Rate*SlowRequest.Seconds())))
			}
		}
	}
}

// meanService is the mean service time of the successful paced requests.
func (e *engine) meanService() time.Duration {
	var m results.Moments
	for i := range e.rec.ops {
		m.Merge(e.rec.ops[i].okSvc)
	}
	if m.Count == 0 {
		return 0
	}
	return time.Duration(m.SumNs / m.Count)
}

// stallOverlap is how many seconds of the measured schedule (span long) the
// stall covers: the requests due in them are the most it held back.
func stallOverlap(st *results.Stall, span time.Duration) float64 {
	return max(0, min(st.OffsetS+st.Seconds, span.Seconds())-max(st.OffsetS, 0))
}
