package results

import (
	"fmt"
	"slices"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// MemberOp is the part of an op that one endpoint's load connection carried:
// the requests that member served (or failed), timed as the op's are, so a
// slow or frozen member shows beside the others instead of in the cluster's
// tail alone.
type MemberOp struct {
	// Endpoint is the endpoint the requests went to, as the run's target lists it.
	Endpoint string `json:"endpoint"`
	Requests int64  `json:"requests"`
	Errors   int64  `json:"errors"`
	// Latency and Service digest ResponseHist and ServiceHist, as the op's own.
	Latency      Summary `json:"latency_ms"`
	Service      Summary `json:"service_ms"`
	ResponseHist Hist    `json:"response_hist"`
	ServiceHist  Hist    `json:"service_hist"`
}

// EndpointLoad is what the load connections to one endpoint measured beside
// the requests' times: the longest wait with no reply on them, and the round
// trips of the HTTP/2 PINGs sent on them through the measured window.
type EndpointLoad struct {
	Endpoint string `json:"endpoint"`
	// Stall is the longest span in which a request sent to this endpoint was
	// outstanding and none sent to it was answered (see Stall); nil when none
	// of its requests was timed.
	Stall *Stall `json:"stall,omitempty"`
	// Pings counts the PINGs answered in the measured window; 0 when none was
	// sent (a transport that does not ping: grpc).
	Pings int64 `json:"pings,omitempty"`
	// PingsUnanswered counts the PINGs still unanswered when the window ended.
	PingsUnanswered int64 `json:"pings_unanswered,omitempty"`
	// PingMs digests PingHist; nil when no PING was answered.
	PingMs *Summary `json:"ping_ms,omitempty"`
	// PingHist is the PINGs' round trips (microseconds).
	PingHist Hist `json:"ping_hist,omitempty"`
	// ReadRounds counts the pairs of reads answered in the measured window (see
	// ReadRoundHist); 0 when none was sent (one endpoint).
	ReadRounds int64 `json:"read_rounds,omitempty"`
	// ReadRoundsUnanswered counts the pairs that failed or were still waiting
	// when the window ended.
	ReadRoundsUnanswered int64 `json:"read_rounds_unanswered,omitempty"`
	// ReadRoundMs digests ReadRoundHist; nil when no pair was answered.
	ReadRoundMs *Summary `json:"read_round_ms,omitempty"`
	// ReadRoundHist is, for each pair of reads of one key sent together on one
	// connection to this endpoint through the measured window, the linearizable
	// read's time beyond the serializable one's (microseconds): the read index
	// round, in which the leader confirms its leadership with a heartbeat to a
	// quorum of members (a follower asks the leader first), and the wait for the
	// member to apply up to it. The client link, which both reads cross, is not
	// in it.
	ReadRoundHist Hist `json:"read_round_hist,omitempty"`
}

// FindEndpoint is the run's load figures of endpoint; nil when it has none.
func (r *Run) FindEndpoint(endpoint string) *EndpointLoad {
	i := slices.IndexFunc(r.EndpointLoads, func(e EndpointLoad) bool { return e.Endpoint == endpoint })
	if i < 0 {
		return nil
	}
	return &r.EndpointLoads[i]
}

// mergeMembers merges the per-endpoint parts of op name over the runs,
// endpoint by endpoint in the order they first appear.
func mergeMembers(name string, runs []*Run) ([]MemberOp, error) {
	type acc struct {
		out MemberOp
		hs  [2][]Hist // response, service
	}
	var order []string
	parts := map[string]*acc{}
	for _, r := range runs {
		o := r.FindOp(name)
		if o == nil {
			continue
		}
		for _, m := range o.Members {
			a := parts[m.Endpoint]
			if a == nil {
				a = &acc{out: MemberOp{Endpoint: m.Endpoint}}
				parts[m.Endpoint] = a
				order = append(order, m.Endpoint)
			}
			a.out.Requests += m.Requests
			a.out.Errors += m.Errors
			a.hs[0] = append(a.hs[0], m.ResponseHist)
			a.hs[1] = append(a.hs[1], m.ServiceHist)
		}
	}
	var out []MemberOp
	for _, ep := range order {
		a := parts[ep]
		resp, err := sumHists(a.hs[0])
		if err != nil {
			return nil, fmt.Errorf("op %s endpoint %s: %w", name, ep, err)
		}
		svc, err := sumHists(a.hs[1])
		if err != nil {
			return nil, fmt.Errorf("op %s endpoint %s: %w", name, ep, err)
		}
		m := a.out
		if m.ResponseHist, m.Latency, err = encodeSummarized(resp); err != nil {
			return nil, err
		}
		if m.ServiceHist, m.Service, err = encodeSummarized(svc); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// mergeEndpoints merges the runs' per-endpoint figures: the longest stall,
// the PINGs' and the read rounds' histograms bucket by bucket.
func mergeEndpoints(runs []*Run) ([]EndpointLoad, error) {
	var out []EndpointLoad
	pings, rounds := map[string][]Hist{}, map[string][]Hist{}
	for _, r := range runs {
		for _, e := range r.EndpointLoads {
			i := slices.IndexFunc(out, func(x EndpointLoad) bool { return x.Endpoint == e.Endpoint })
			if i < 0 {
				out = append(out, EndpointLoad{Endpoint: e.Endpoint})
				i = len(out) - 1
			}
			o := &out[i]
			o.Stall = Longer(o.Stall, e.Stall)
			o.Pings += e.Pings
			o.PingsUnanswered += e.PingsUnanswered
			if e.PingHist != "" {
				pings[e.Endpoint] = append(pings[e.Endpoint], e.PingHist)
			}
			o.ReadRounds += e.ReadRounds
			o.ReadRoundsUnanswered += e.ReadRoundsUnanswered
			if e.ReadRoundHist != "" {
				rounds[e.Endpoint] = append(rounds[e.Endpoint], e.ReadRoundHist)
			}
		}
	}
	for i := range out {
		o := &out[i]
		var err error
		if o.PingHist, o.PingMs, err = mergedHist(pings[o.Endpoint]); err != nil {
			return nil, fmt.Errorf("endpoint %s pings: %w", o.Endpoint, err)
		}
		if o.ReadRoundHist, o.ReadRoundMs, err = mergedHist(rounds[o.Endpoint]); err != nil {
			return nil, fmt.Errorf("endpoint %s read rounds: %w", o.Endpoint, err)
		}
	}
	return out, nil
}

// mergedHist is the sum of hs, encoded and digested; empty for none.
func mergedHist(hs []Hist) (Hist, *Summary, error) {
	if len(hs) == 0 {
		return "", nil, nil
	}
	h, err := sumHists(hs)
	if err != nil {
		return "", nil, err
	}
	x, s, err := encodeSummarized(h)
	if err != nil {
		return "", nil, err
	}
	return x, &s, nil
}

// sumHists is the sum of encoded histograms.
func sumHists(hs []Hist) (*hdr.Histogram, error) {
	h := NewHist()
	for _, x := range hs {
		if err := addHist(h, x); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// encodeSummarized is h encoded for the run file and digested.
func encodeSummarized(h *hdr.Histogram) (Hist, Summary, error) {
	x, err := EncodeHist(h)
	return x, Summarize(h), err
}
