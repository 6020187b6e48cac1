package bench

import (
	"context"
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

// bounds says when the dispatcher stops: after the measured window (warm-up plus
// duration) or after total measured requests, whichever comes first.
type bounds struct {
	warmup time.Duration
	end    time.Duration // 0: no time bound
	total  uint64        // 0: no count bound
}

// dispatch feeds tickets to the workers on p's schedule until the bounds are
// reached or ctx is done, then closes out. It returns where the schedule ended
// (the due time of the request after the last one sent) and how late it woke up
// against the schedule (microseconds): the client-saturation signal. Only
// wake-ups after a sleep count; when workers are all busy the dispatcher blocks
// on out, and the backlog it then hands out at once is the workers' lateness
// (late starts), not the pacer's.
func dispatch(ctx context.Context, p Pacer, b bounds, clock func() time.Duration, out chan<- ticket) (end time.Duration, lag *hdr.Histogram) {
	defer close(out)
	lag = results.NewHist()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var measured uint64
	for i := uint64(0); ; i++ {
		due := p.Due(i)
		if b.end > 0 && due >= b.end {
			return b.end, lag
		}
		if due >= b.warmup {
			if b.total > 0 && measured >= b.total {
				return due, lag
			}
			measured++
		}
		now := clock()
		// A dispatcher behind schedule stops at the end of the window all the
		// same: the requests it did not send lower the achieved rate, and the
		// run does not go on for as long as an unreachable rate would take.
		if b.end > 0 && now >= b.end {
			return b.end, lag
		}
		if wait := due - now; wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return due, lag
			case <-timer.C:
			}
			_ = lag.RecordValue(max(int64((clock()-due)/time.Microsecond), results.HistMinUs))
		}
		select {
		case out <- ticket{seq: i, due: due}:
		case <-ctx.Done():
			return due, lag
		}
	}
}
