package bench

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/grpc/codes"

	"github.com/etcdperf/etcdperf/results"
)

// sample is one measured request (or watch event), as a worker hands it to the
// recorder. It is a fixed-size value so the hot path does not allocate.
type sample struct {
	start     int64 // actual send, ns since the run's start
	done      int64 // completion, ns since the run's start: picks the interval
	resp, svc int64 // response and service time, ns
	sent      int64 // payload bytes sent
	recv      int64 // payload bytes received
	keys      int64 // keys received
	conflicts int64 // compare failures retried
	kind      uint8 // index into the workload's ops
	ep        uint8 // 1 + the index of the endpoint whose connection carried it; 0 when not known
	code      uint8 // gRPC status code; codes.OK for a success
	late      bool  // started later than the pacing tolerance
	paced     bool  // issued by a worker (not an event emitted by a watcher)
	unsent    bool  // due but never sent (see Op.Unsent): resp only
	cut       bool  // cut short by the end of the run: no result, but it was waiting (see noteWait)
	retried   bool  // made again by the transport's retry policy (leanrpc.Retries)
}

// numCodes bounds the gRPC status codes counted per op (codes.Unauthenticated is the last).
const numCodes = int(codes.Unauthenticated) + 1

// opRec is the recorder's state of one op type.
type opRec struct {
	resp, svc   *hdr.Histogram // whole measured window
	iresp, isvc *hdr.Histogram // the current second, reset after it is encoded
	ireq, ierr  int64
	iunsent     int64
	requests    int64
	codes       [numCodes]int64
	late        int64
	unsent      int64
	overMax     int64 // response times past the histograms' range
	okSvc       results.Moments
	sent, recv  int64
	keys        int64
	conflicts   int64
	retried     int64
	intervals   []results.Interval
	// members are the requests by endpoint, indexed as sample.ep-1; grown when
	// an endpoint first appears.
	members []memberRec
}

// memberRec is the part of an op one endpoint's connection carried.
type memberRec struct {
	resp, svc        *hdr.Histogram
	requests, errors int64
}

// recorder owns every live histogram. Workers send it samples on a channel, so
// they share no lock with each other, and it keeps two histograms per op for the
// window and two for the current second, whatever the number of workers. Each
// second is encoded as soon as a sample of a later second arrives; a sample that
// arrives after its second was closed (scheduling skew between workers, a few
// µs) goes into the current one.
type recorder struct {
	in     chan sample
	t0Unix int64 // wall clock of the run's start, ns
	ops    []opRec
	cur    int64 // unix second being filled
	// from is where the measured window starts (ns since the run's start): the
	// first interval is that second's, and covers it from there.
	from int64
	// lastSent and lastDone are the latest send and completion of a paced sample:
	// where the measured window ends.
	lastSent, lastDone int64
	pacedReq           int64 // paced samples
	paced              int64 // successful paced samples, for the achieved rate
	count              atomic.Int64
	// errs, lastRate and p99Us are for the progress bar: failed requests so far,
	// requests in the last closed second, the window's response p99 at its end.
	errs     atomic.Int64
	lastRate atomic.Int64
	p99Us    atomic.Int64
	err      error
	// padTo, set before in is closed, is when the load stopped (ns since the
	// run's start): the seconds up to it get intervals, empty ones too, so a run
	// whose requests all hung until it stopped shows those seconds.
	padTo int64
	// lastAny is the latest completion of any sample, events included.
	lastAny int64
	// wait is the longest span in which a request waited with no answer, and
	// epWaits the same of each endpoint's requests, indexed as sample.ep-1.
	wait    waitSpan
	epWaits []waitSpan
}

// waitSpan follows the answers to paced requests (see note).
type waitSpan struct {
	// lastReply is the latest answer of the server to a paced request, and
	// stallFrom and stallNs the longest span in which a request waited with no
	// answer; unanswered, when set, is where the wait of requests that ended
	// without an answer since lastReply began.
	lastReply, stallFrom, stallNs, unanswered int64
	// replies are the completion times of the latest answers (a ring, answers
	// counting them all), so that the longest stretch without any answer is
	// found inside a request's whole wait, not only after the last answer.
	replies [replyRing]int64
	answers int
}

// replyRing is how many answers a waitSpan keeps: more than the requests a
// resumed member answers before the oldest waiting one is recorded (workers
// and streams outstanding at once).
const replyRing = 512

// newRecorder records from the measured window's start, from (ns after t0), on.
func newRecorder(nops int, t0 time.Time, from time.Duration, buffer int) *recorder {
	r := &recorder{in: make(chan sample, buffer), t0Unix: t0.UnixNano(), ops: make([]opRec, nops), from: int64(from)}
	r.cur = (r.t0Unix + r.from) / int64(time.Second)
	for i := range r.ops {
		o := &r.ops[i]
		o.resp, o.svc, o.iresp, o.isvc = results.NewHist(), results.NewHist(), results.NewHist(), results.NewHist()
	}
	return r
}

// drainEvery is how often the recorder empties its channel. It polls instead of
// waiting on the channel, so that a worker's send lands in the buffer without
// waking a parked goroutine: one wake-up per poll rather than one per request.
const drainEvery = 5 * time.Millisecond

// run consumes samples until in is closed, then closes the last second.
func (r *recorder) run() {
	t := time.NewTicker(drainEvery)
	defer t.Stop()
	for {
		n := 0
	drain:
		for {
			select {
			case s, ok := <-r.in:
				if !ok {
					end := r.t0Unix + max(r.padTo, r.lastAny, r.from)
					for last := (end - 1) / int64(time.Second); r.cur < last; r.cur++ {
						r.closeSecond(end)
					}
					r.closeSecond(end)
					return
				}
				r.add(s)
				n++
			default:
				break drain
			}
		}
		// Under a flood that fills a quarter of the buffer between polls, keep draining.
		if n < cap(r.in)/4 {
			<-t.C
		}
	}
}

func (r *recorder) add(s sample) {
	if s.paced && !s.unsent {
		r.wait.note(s, r.from)
		if s.ep > 0 {
			for len(r.epWaits) < int(s.ep) {
				r.epWaits = append(r.epWaits, waitSpan{})
			}
			r.epWaits[s.ep-1].note(s, r.from)
		}
		if s.cut {
			return
		}
	}
	sec := (r.t0Unix + s.done) / int64(time.Second)
	// Seconds without any completion (a stalled server) still get an interval,
	// with zero requests, so time series show the gap.
	for r.cur < sec {
		r.closeSecond(math.MaxInt64)
		r.cur++
	}
	r.lastAny = max(r.lastAny, s.done)
	o := &r.ops[s.kind]
	resp := usec(s.resp)
	if s.resp/int64(time.Microsecond) > results.HistMaxUs {
		o.overMax++
	}
	if s.unsent {
		// Never sent: a response time (the wait up to the end), no service time.
		o.unsent++
		o.iunsent++
		_ = o.resp.RecordValue(resp)
		_ = o.iresp.RecordValue(resp)
		return
	}
	o.requests++
	o.ireq++
	if s.late {
		o.late++
	}
	o.conflicts += s.conflicts
	if s.retried {
		o.retried++
	}
	if s.code != uint8(codes.OK) {
		o.codes[s.code]++
		o.ierr++
		r.errs.Add(1)
	} else {
		o.sent += s.sent
		o.recv += s.recv
		o.keys += s.keys
		if s.paced {
			r.paced++
			o.okSvc.Add(time.Duration(s.svc))
		}
	}
	if s.paced {
		r.pacedReq++
		r.lastSent = max(r.lastSent, s.start)
		r.lastDone = max(r.lastDone, s.done)
	}
	// Failed requests are timed too: a timeout is a latency the user saw.
	svc := usec(s.svc)
	_ = o.resp.RecordValue(resp)
	_ = o.svc.RecordValue(svc)
	_ = o.iresp.RecordValue(resp)
	_ = o.isvc.RecordValue(svc)
	if s.ep > 0 {
		for len(o.members) < int(s.ep) {
			o.members = append(o.members, memberRec{})
		}
		m := &o.members[s.ep-1]
		if m.resp == nil {
			m.resp, m.svc = results.NewHist(), results.NewHist()
		}
		m.requests++
		if s.code != uint8(codes.OK) {
			m.errors++
		}
		_ = m.resp.RecordValue(resp)
		_ = m.svc.RecordValue(svc)
	}
	if s.paced {
		r.count.Add(1)
	}
}

// note measures the longest span in which a request was outstanding and no
// answer came: the longest stretch between answers (to any request) inside its
// wait, from the later of its send and from (the window's start) to its
// completion. A member that resumes after a stop answers its waiting requests
// in any order, often a late send first: that answer ends the stall for every
// request waiting since before it, and is found among the answers kept. A
// failure that is the client's own verdict on the wait (a deadline, a cancel, a
// connection given up on: Unavailable) is no answer: it ends its request's
// wait but not the stall, which then runs from where that request's wait began.
func (w *waitSpan) note(s sample, from int64) {
	lo := max(s.start, from)
	if w.unanswered > 0 {
		lo = min(lo, w.unanswered)
	}
	if s.done-lo > w.stallNs { // only a wait longer than the longest span can hold a longer one
		if at, gap := w.longestGap(lo, s.done); gap > w.stallNs {
			w.stallFrom, w.stallNs = at, gap
		}
	}
	switch {
	case !s.cut && answered(codes.Code(s.code)):
		w.replies[w.answers%replyRing] = s.done
		w.answers++
		if s.done > w.lastReply {
			w.lastReply, w.unanswered = s.done, 0
		}
	case w.unanswered == 0:
		w.unanswered = max(lo, w.lastReply)
	}
}

// longestGap is the longest stretch in (lo, hi) with no answer kept in the
// ring, and where it began, where that is longer than the longest span so far
// (otherwise a shorter one: the caller keeps only a longer). The ring holds answers in the order they were recorded,
// which is their completion order but for the µs between a worker's completion
// and its send on the channel: one recorded out of order is passed over, which
// can only change a stretch by that much. Where the ring has dropped answers
// newer than lo, the stretch before its oldest one is not known and not
// counted. It walks back from the newest answer and stops at lo, or where what
// is left of (lo, hi) is no longer than the longest span: the answers inside a
// request's wait, not the whole ring, on every request of a busy run.
func (w *waitSpan) longestGap(lo, hi int64) (at, gap int64) {
	if w.answers > replyRing {
		lo = max(lo, w.replies[uint(w.answers)%replyRing])
	}
	next, floor := hi, w.stallNs
	replies, oldest := &w.replies, max(w.answers-replyRing, 0)
	for j := w.answers - 1; j >= oldest && next-lo > floor; j-- {
		r := replies[uint(j)%replyRing]
		if r >= next {
			continue
		}
		if r <= lo {
			break
		}
		if next-r > gap {
			at, gap = r, next-r
			floor = max(floor, gap)
		}
		next = r
	}
	if next-lo > gap {
		at, gap = lo, next-lo
	}
	return at, gap
}

// answered tells a reply of the server from the client giving up on one.
func answered(c codes.Code) bool {
	switch c {
	case codes.DeadlineExceeded, codes.Canceled, codes.Unavailable:
		return false
	}
	return true
}

// stall is the longest span without an answer, nil when no request was timed.
func (r *recorder) stall() *results.Stall { return r.span(r.wait) }

// span is w's longest span without an answer, nil when none was timed.
func (r *recorder) span(w waitSpan) *results.Stall {
	if w.stallNs <= 0 {
		return nil
	}
	at := time.Unix(0, r.t0Unix+w.stallFrom).UTC()
	return &results.Stall{At: at, OffsetS: roundMs(time.Duration(w.stallFrom - r.from)), Seconds: roundMs(time.Duration(w.stallNs))}
}

// endpointLoads are the stalls of each endpoint's requests, named by
// endpoints (an index past it is named by its number).
func (r *recorder) endpointLoads(endpoints []string) []results.EndpointLoad {
	var out []results.EndpointLoad
	for i, w := range r.epWaits {
		out = append(out, results.EndpointLoad{Endpoint: endpointName(endpoints, i), Stall: r.span(w)})
	}
	return out
}

// endpointName is endpoint i of endpoints, or "#i" past them.
func endpointName(endpoints []string, i int) string {
	if i < len(endpoints) {
		return endpoints[i]
	}
	return fmt.Sprintf("#%d", i)
}

// roundMs is d in seconds to the millisecond.
func roundMs(d time.Duration) float64 { return math.Round(d.Seconds()*1e3) / 1e3 }

// usec converts ns to µs, clamped to the histogram's range so no sample is lost.
func usec(ns int64) int64 {
	return min(max(ns/int64(time.Microsecond), results.HistMinUs), results.HistMaxUs)
}

// closeSecond encodes the current second of every op and resets it. end (unix
// ns) is where the recording ends, or later: the interval covers its second from
// the window's start to end, so a partial first or last second is not read as a
// slow one.
func (r *recorder) closeSecond(end int64) {
	start := time.Unix(r.cur, 0).UTC()
	lo, hi := max(r.cur*int64(time.Second), r.t0Unix+r.from), min((r.cur+1)*int64(time.Second), end)
	covered := math.Round(float64(max(hi-lo, int64(time.Millisecond)))/1e6) / 1e3 // ms precision
	var secReq, p99 int64
	for i := range r.ops {
		secReq += r.ops[i].ireq
		// Once a second, not per request: a scan of the histogram's counts.
		p99 = max(p99, r.ops[i].resp.ValueAtQuantile(99))
	}
	r.lastRate.Store(secReq)
	r.p99Us.Store(p99)
	for i := range r.ops {
		o := &r.ops[i]
		iv := results.Interval{Start: start, Seconds: covered, Requests: o.ireq, Errors: o.ierr, Unsent: o.iunsent}
		if o.ireq+o.iunsent > 0 {
			var err error
			if iv.Response, err = results.EncodeHist(o.iresp); err != nil && r.err == nil {
				r.err = err
			}
			if iv.Service, err = results.EncodeHist(o.isvc); err != nil && r.err == nil {
				r.err = err
			}
			o.iresp.Reset()
			o.isvc.Reset()
		}
		o.intervals = append(o.intervals, iv)
		o.ireq, o.ierr, o.iunsent = 0, 0, 0
	}
}

// result turns op i's state into its results.Op; window is the measured
// window, endpoints name the endpoints of the members' parts.
func (r *recorder) result(i int, name string, window time.Duration, endpoints []string) (results.Op, error) {
	o := &r.ops[i]
	op := results.Op{
		Op:             name,
		Requests:       o.requests,
		LateStarts:     o.late,
		Unsent:         o.unsent,
		OverMaxLatency: o.overMax,
		Latency:        results.Summarize(o.resp),
		Service:        results.Summarize(o.svc),
		Intervals:      o.intervals,
		BytesSent:      o.sent,
		BytesReceived:  o.recv,
		KeysReceived:   o.keys,
		Conflicts:      o.conflicts,
		Retried:        o.retried,
	}
	if o.okSvc.Count > 0 {
		m := o.okSvc
		op.ServiceOK = &m
	}
	for c, n := range o.codes {
		if n == 0 {
			continue
		}
		if op.ErrorsByCode == nil {
			op.ErrorsByCode = map[string]int64{}
		}
		op.ErrorsByCode[codes.Code(c).String()] = n
		op.Errors += n
	}
	if window > 0 {
		op.ThroughputRPS = float64(op.Requests-op.Errors) / window.Seconds()
		op.SentRPS = float64(op.Requests) / window.Seconds()
	}
	var err error
	if op.ResponseHist, err = results.EncodeHist(o.resp); err != nil {
		return op, err
	}
	if op.ServiceHist, err = results.EncodeHist(o.svc); err != nil {
		return op, err
	}
	for j, m := range o.members {
		if m.resp == nil {
			continue
		}
		mo := results.MemberOp{Endpoint: endpointName(endpoints, j), Requests: m.requests, Errors: m.errors,
			Latency: results.Summarize(m.resp), Service: results.Summarize(m.svc)}
		if mo.ResponseHist, err = results.EncodeHist(m.resp); err != nil {
			return op, err
		}
		if mo.ServiceHist, err = results.EncodeHist(m.svc); err != nil {
			return op, err
		}
		op.Members = append(op.Members, mo)
	}
	return op, nil
}
