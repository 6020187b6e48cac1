package drill

import (
	"context"
	"sync"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// scrapes are the members' /metrics at one instant, by member ID (hex).
type scrapes struct {
	at time.Time
	by map[string]*analyze.Snapshot
}

// leader is the member whose scrape says it leads (etcd_server_is_leader), or "".
func (s scrapes) leader() string {
	for id, snap := range s.by {
		if v, ok := snap.Value(metrics.IsLeader, nil); ok && v == 1 {
			return id
		}
	}
	return ""
}

// scrapeAll reads every member's /metrics concurrently; a member that does not
// answer is missing from the set (its figures are then unknown, never zero).
func (e *Env) scrapeAll(ctx context.Context, members []MemberInfo) scrapes {
	s := scrapes{at: time.Now(), by: map[string]*analyze.Snapshot{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range members {
		if m.ClientURL == "" {
			continue
		}
		url := e.metricsURL(m.ClientURL)
		if m.metricsURL != "" {
			url = m.metricsURL
		}
		wg.Go(func() {
			if snap := e.scrapeURL(ctx, url); snap != nil {
				mu.Lock()
				s.by[m.IDHex] = snap
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return s
}

func (e *Env) scrapeOne(ctx context.Context, clientURL string) *analyze.Snapshot {
	return e.scrapeURL(ctx, e.metricsURL(clientURL))
}

// scrapeURL reads one /metrics URL; nil when it does not answer.
func (e *Env) scrapeURL(ctx context.Context, url string) *analyze.Snapshot {
	if e.HTTP == nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, e.timeout())
	defer cancel()
	text, err := analyze.Fetch(cctx, e.HTTP, url)
	if err != nil {
		return nil
	}
	snap, err := analyze.Parse(text)
	if err != nil {
		return nil
	}
	return snap
}

// fillServer sets a phase's leader changes, heartbeat failures and the leader's
// peer traffic from the scrapes at its two ends.
func fillServer(p *Phase, a, b scrapes, leader string) {
	var changes, hb int64
	seen := false
	for id, sb := range b.by {
		sa := a.by[id]
		if d, ok := analyze.Between(sa, sb).CounterDelta(metrics.LeaderChanges, nil); ok {
			changes, seen = max(changes, int64(d)), true
		}
		if d, ok := analyze.Between(sa, sb).CounterDelta(metrics.HeartbeatFailures, nil); ok {
			hb += int64(d)
		}
	}
	if seen {
		p.LeaderChanges, p.HeartbeatSendFailures = &changes, &hb
	}
	if d, ok := analyze.Between(a.by[leader], b.by[leader]).CounterDelta(metrics.PeerSentBytes, nil); ok {
		if s := b.at.Sub(a.at).Seconds(); s > 0 {
			r := d / s
			p.LeaderPeerBytesPerS = &r
		}
	}
}

// clientOver sums the load's seconds of [start, end): requests, errors and the
// merged response-time histogram of every op. A second belongs to the span that
// holds its middle, so adjacent phases do not share seconds; a span that holds no
// second's middle (shorter than a second) gets the seconds it overlaps instead.
func clientOver(ops []results.Op, start, end time.Time) (Client, error) {
	mid := func(iv results.Interval) bool {
		m := iv.Start.Add(time.Second / 2)
		return !m.Before(start) && m.Before(end)
	}
	overlaps := func(iv results.Interval) bool {
		return iv.Start.Before(end) && iv.Start.Add(time.Second).After(start)
	}
	in := mid
	if !anyInterval(ops, mid) {
		in = overlaps
	}
	h := results.NewHist()
	var c Client
	for _, op := range ops {
		for _, iv := range op.Intervals {
			if !in(iv) {
				continue
			}
			c.Requests += iv.Requests
			c.Errors += iv.Errors
			ih, err := iv.Response.Decode()
			if err != nil {
				return c, err
			}
			h.Merge(ih)
		}
	}
	s := results.Summarize(h)
	c.P50Ms, c.P99Ms, c.MaxMs = s.P50, s.P99, s.Max
	return c, nil
}

func anyInterval(ops []results.Op, f func(results.Interval) bool) bool {
	for _, op := range ops {
		for _, iv := range op.Intervals {
			if f(iv) {
				return true
			}
		}
	}
	return false
}

// boundary is the start of a phase with the scrapes taken there.
type boundary struct {
	name   string
	member string
	s      scrapes
	note   string
	leader string // hex ID of the leader when the phase began
}

// phases turns consecutive boundaries (the last one only ends the previous
// phase) into phases, with the client figures from run and the server figures
// from the scrapes.
func phases(bs []boundary, run *results.Run) ([]Phase, error) {
	var out []Phase
	for i := 0; i+1 < len(bs); i++ {
		a, b := bs[i], bs[i+1]
		p := Phase{Name: a.name, Member: a.member, Start: a.s.at.UTC(), End: b.s.at.UTC(), DurationS: b.s.at.Sub(a.s.at).Seconds(), Note: a.note}
		if run != nil {
			c, err := clientOver(run.Ops, a.s.at, b.s.at)
			if err != nil {
				return nil, err
			}
			p.Client = c
		}
		// After a leader change the new leader sends most of the phase's traffic.
		leader := a.leader
		if b.leader != "" && b.leader != a.leader {
			leader = b.leader
		}
		fillServer(&p, a.s, b.s, leader)
		out = append(out, p)
	}
	return out, nil
}

// summarize compares the load before the first change (the before phase), during
// the changes (every phase between before and after) and after them.
func summarize(bs []boundary, run *results.Run) ClientSummary {
	var c ClientSummary
	if run == nil || len(bs) < 2 {
		return c
	}
	first, last := bs[0].s.at, bs[len(bs)-1].s.at
	during0, during1 := last, last
	for i, b := range bs {
		if i > 0 && during0.Equal(last) && b.name != "end" {
			during0 = b.s.at
		}
		if b.name == PhaseAfter {
			during1 = b.s.at
		}
	}
	span := func(a, b time.Time) Client {
		if !a.Before(b) {
			return Client{}
		}
		x, _ := clientOver(run.Ops, a, b)
		return x
	}
	c.Errors = span(first, last).Errors
	c.P99BeforeMs = span(first, during0).P99Ms
	c.P99DuringMs = span(during0, during1).P99Ms
	c.P99AfterMs = span(during1, last).P99Ms
	return c
}
