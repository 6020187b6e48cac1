package results

// Paced is the sum over a run's paced ops: those a pacer offered a rate to
// (TargetRPS > 0). Unpaced ops (a watch's events, a closed loop's requests, a
// LIST a caller judges apart) are not requests offered at a rate.
type Paced struct {
	TargetRPS     float64
	ThroughputRPS float64
	SentRPS       float64
	Requests      int64
	Errors        int64
	// P99Ms is the worst p99 response time over the paced ops.
	P99Ms float64
}

// Paced sums r's paced ops.
func (r *Run) Paced() Paced {
	var p Paced
	for _, op := range r.Ops {
		if op.TargetRPS <= 0 {
			continue
		}
		p.TargetRPS += op.TargetRPS
		p.ThroughputRPS += op.ThroughputRPS
		p.SentRPS += op.SentRPS
		p.Requests += op.Requests
		p.Errors += op.Errors
		p.P99Ms = max(p.P99Ms, op.Latency.P99)
	}
	return p
}
