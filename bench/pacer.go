package bench

import (
	"context"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/etcdperf/etcdperf/results"
)

// MinLateTolerance is the least delay past its intended time after which a
// request counts as a late start. Go's timers wake up to a millisecond late on an
// idle Linux host (the netpoller sleeps in whole milliseconds), so a tighter bound
// would count the runtime's own granularity as the generator falling behind.
const MinLateTolerance = 2 * time.Millisecond

// Pacer is a constant-rate open-loop schedule: request i is due i/Rate after the
// start. The due time comes from the index, never from the clock, so a stall
// does not shift the schedule: the requests it held back are still due at their
// original times and their response time counts from there.
type Pacer struct {
	Rate float64 // requests per second; > 0
}

// Due is the intended start of request i, as an offset from the start.
func (p Pacer) Due(i uint64) time.Duration {
	return time.Duration(float64(i) * float64(time.Second) / p.Rate)
}

// Interval is the time between two requests.
func (p Pacer) Interval() time.Duration { return time.Duration(float64(time.Second) / p.Rate) }

// Tolerance is how late a request may start before it counts as a late start:
// 10% of the interval, but at least MinLateTolerance.
func (p Pacer) Tolerance() time.Duration { return max(MinLateTolerance, p.Interval()/10) }

// ticket is one paced request handed from the dispatcher to a worker.
type ticket struct {
	seq uint64
	due time.Duration // offset from the run's start
}

// EndGrace is how long after the end of a duration-bounded window the
// dispatcher still hands out requests that were due before the end while every
// worker is busy. A healthy run's backlog of a few milliseconds is sent (late,
// and charged from its due time), so it does not lower the achieved rate; a
// stalled server or an unreachable rate stretches the run by at most this much,
// and what is still unsent then is charged as unsent (see schedule).
const EndGrace = time.Second

// bounds says when the dispatcher stops: after the measured window (warm-up plus
// duration) or after total measured requests, whichever comes first.
type bounds struct {
	warmup time.Duration
	end    time.Duration // 0: no time bound
	total  uint64        // 0: no count bound
	grace  time.Duration // see EndGrace
}

// schedule is where a dispatcher stopped.
type schedule struct {
	// end is the due time of the request after the last one the schedule holds.
	end time.Duration
	// unsentFrom..unsentTo (exclusive) are the requests that were due before the
	// end (or the stop) but never handed to a worker: every worker was busy, past
	// the grace. They are charged as unsent from their due time to the moment the
	// run stops, so a server stalled over the end of a run shows in the
	// percentiles instead of vanishing from them.
	unsentFrom, unsentTo uint64
}

// unsent is the number of requests the dispatcher held back.
func (s schedule) unsent() uint64 { return s.unsentTo - s.unsentFrom }

// dueBefore is the number of requests due before t (the first index due at or after t).
func (p Pacer) dueBefore(t time.Duration) uint64 {
	if t <= 0 {
		return 0
	}
	i := uint64(float64(t) / float64(time.Second) * p.Rate)
	for i > 0 && p.Due(i-1) >= t {
		i--
	}
	for p.Due(i) < t {
		i++
	}
	return i
}

// dispatch feeds tickets to the workers on p's schedule until the bounds are
// reached or ctx is done, then closes out. It returns where the schedule ended
// and which requests it could not hand out, and how late it woke up against the
// schedule (microseconds): the client-saturation signal. Only wake-ups after a
// sleep count; when workers are all busy the dispatcher blocks on out, and the
// backlog it then hands out at once is the workers' lateness (late starts), not
// the pacer's.
//
// Every request due before the end is accounted for: handed out (on time or
// late) or, when the workers are still all busy b.grace after the end, returned
// as unsent. The hot path (a worker free to take the ticket) does not touch the
// timer.
func dispatch(ctx context.Context, p Pacer, b bounds, clock func() time.Duration, out chan<- ticket) (sched schedule, lag *hdr.Histogram) {
	defer close(out)
	lag = results.NewHist()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var measured uint64
	// held returns the schedule with requests i.. up to limit (a time) unsent.
	held := func(i uint64, end, limit time.Duration) schedule {
		to := p.dueBefore(limit)
		if b.total > 0 {
			// Count-bounded: nothing past the total was ever due.
			to = min(to, i+b.total-measured+1)
		}
		return schedule{end: end, unsentFrom: i, unsentTo: max(to, i)}
	}
	for i := uint64(0); ; i++ {
		due := p.Due(i)
		if b.end > 0 && due >= b.end {
			return schedule{end: b.end, unsentFrom: i, unsentTo: i}, lag
		}
		if due >= b.warmup {
			if b.total > 0 && measured >= b.total {
				return schedule{end: due, unsentFrom: i, unsentTo: i}, lag
			}
			measured++
		}
		now := clock()
		if b.end > 0 && now >= b.end+b.grace {
			// Behind schedule past the grace: the rest of the window is unsent.
			return held(i, b.end, b.end), lag
		}
		if wait := due - now; wait > 0 {
			if !sleepUntil(ctx, timer, wait, func() time.Duration { return due - clock() }) {
				return held(i, due, due), lag
			}
			_ = lag.RecordValue(max(int64((clock()-due)/time.Microsecond), results.HistMinUs))
		}
		t := ticket{seq: i, due: due}
		select {
		case out <- t:
			continue
		default:
		}
		// Every worker is busy. Without a time bound, wait for one; with one,
		// wait at most until the grace after the end.
		var deadline <-chan time.Time
		if b.end > 0 {
			timer.Reset(max(b.end+b.grace-clock(), 0))
			deadline = timer.C
		}
		select {
		case out <- t:
		case <-deadline:
			return held(i, b.end, b.end), lag
		case <-ctx.Done():
			stop := clock()
			if b.end > 0 {
				stop = min(stop, b.end)
			}
			return held(i, due, max(stop, due+1)), lag
		}
	}
}

// timerSlop is how late the runtime's timers may fire: on an idle Linux host the
// netpoller sleeps in whole milliseconds, so a timer wakes up to a millisecond
// late, and every late microsecond of the pacer counts in the response time.
const timerSlop = 2 * time.Millisecond

// fineMin is the shortest wait the kernel's timer sleeps: twice its default
// slack (50 µs). A shorter nanosleep would be mostly slack, and a generator
// whose requests are due that often is busy enough for the runtime's timers to
// fire on time (at 8,000 puts/s the kernel's timer cost 10% more client CPU for
// the same response-minus-service time).
const fineMin = 100 * time.Microsecond

// sleepUntil waits wait, or until ctx is done (false), reading left() for
// what remains after each sleep. The runtime's timer sleeps all but the last
// timerSlop, and any wait under fineMin, heeding ctx; the kernel's timer
// (nanosleep, within the thread's timer slack) sleeps the rest. On a 2-core
// Linux host at 150 wake-ups a second the runtime's timer alone woke a mean
// 0.6 ms late (p99 1.1 ms), the two together 0.1 ms (p99 0.15 ms); at 2,000
// puts/s the response time's excess over the service time fell from 0.34 to
// 0.11 ms.
func sleepUntil(ctx context.Context, timer *time.Timer, wait time.Duration, left func() time.Duration) bool {
	for wait > 0 {
		if wait < fineMin || wait > timerSlop {
			d := wait - timerSlop
			if wait < fineMin {
				d = wait
			}
			timer.Reset(d)
			select {
			case <-ctx.Done():
				return false
			case <-timer.C:
			}
		} else {
			ts := syscall.NsecToTimespec(int64(wait))
			_ = syscall.Nanosleep(&ts, nil) // EINTR: left() says what remains
		}
		wait = left()
	}
	return ctx.Err() == nil
}
