package measure

import (
	"context"
	"fmt"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/etcdperf/etcdperf/results"
)

// PingEvery is how often, on average (the gaps are jittered), each endpoint is PINGed over the run's load
// connections together: 10 a second, a 17-byte frame each way (a 9-byte
// header and the 8-byte payload), 340 B/s per endpoint, and no work in etcd
// (gRPC-go's transport answers it). The PINGs never draw a GOAWAY
// too_many_pings, at any rate (see leanrpc's ping.go).
const PingEvery = 100 * time.Millisecond

// Pinger is a load connection that PINGs its endpoints through the run
// (leanrpc.Conn.Ping): record gets each PING's endpoint index and round trip,
// or, with answered false, how long it had waited when it was given up.
type Pinger interface {
	Ping(ctx context.Context, interval time.Duration, record func(endpoint int, rtt time.Duration, answered bool))
}

// Pingers are the connections of conns that PING; the others (gRPC-go's) do not.
func Pingers[C any](conns []C) []Pinger {
	var out []Pinger
	for _, c := range conns {
		if p, ok := any(c).(Pinger); ok {
			out = append(out, p)
		}
	}
	return out
}

// pings is the PINGing of a run's measured window: one histogram per endpoint
// of every connection's round trips to it.
type pings struct {
	stopPings context.CancelFunc
	wg        sync.WaitGroup
	mu        sync.Mutex
	hists     []*hdr.Histogram // by endpoint index
	answered  []int64
	lost      []int64
}

// startPings PINGs every endpoint over ps until stop, PingEvery in all: each
// connection every PingEvery × len(ps). nil when none PINGs.
func startPings(ctx context.Context, ps []Pinger) *pings {
	if len(ps) == 0 {
		return nil
	}
	p := &pings{}
	ctx, p.stopPings = context.WithCancel(ctx)
	every := PingEvery * time.Duration(len(ps))
	for _, c := range ps {
		p.wg.Go(func() { c.Ping(ctx, every, p.record) })
	}
	return p
}

func (p *pings) record(ep int, rtt time.Duration, answered bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.hists) <= ep {
		p.hists = append(p.hists, results.NewHist())
		p.answered = append(p.answered, 0)
		p.lost = append(p.lost, 0)
	}
	if !answered {
		p.lost[ep]++
		return
	}
	p.answered[ep]++
	us := min(max(rtt.Microseconds(), results.HistMinUs), results.HistMaxUs)
	_ = p.hists[ep].RecordValue(us)
}

// stop ends the PINGing; the PINGs still unanswered count as such.
func (p *pings) stop() {
	if p == nil {
		return
	}
	p.stopPings()
	p.wg.Wait()
}

// fill writes the round trips into run's endpoint loads, endpoints named as
// the run's target lists them.
func (p *pings) fill(run *results.Run) error {
	if p == nil {
		return nil
	}
	for i, h := range p.hists {
		name := fmt.Sprintf("#%d", i)
		if i < len(run.Target.Endpoints) {
			name = run.Target.Endpoints[i]
		}
		e := run.FindEndpoint(name)
		if e == nil {
			run.EndpointLoads = append(run.EndpointLoads, results.EndpointLoad{Endpoint: name})
			e = &run.EndpointLoads[len(run.EndpointLoads)-1]
		}
		e.Pings, e.PingsUnanswered = p.answered[i], p.lost[i]
		if h.TotalCount() == 0 {
			continue
		}
		s := results.Summarize(h)
		var err error
		if e.PingHist, err = results.EncodeHist(h); err != nil {
			return err
		}
		e.PingMs = &s
	}
	return nil
}
