package plan

import "math"

// Ramp defaults: a few steps of 10 s each find the knee of most clusters in a
// couple of minutes; bisection stops when the bracket is within 5%.
const (
	DefaultMaxRate    = 50000
	DefaultBisections = 3
	BisectResolution  = 0.05
)

// RateFunc runs one step at rate and judges it (see Judge).
type RateFunc func(rate float64) (*RateStep, error)

// Ramp is the search: doubling from StartRate to MaxRate, then Bisections
// halvings of the bracket between the last good and the first broken rate, while
// the bracket is wider than BisectResolution.
type Ramp struct {
	StartRate, MaxRate float64
	Bisections         int
}

// Run drives step and returns every step in the order it ran, the highest that
// held (good, nil when even the first broke) and the lowest that broke (bad, nil
// when the SLO held up to MaxRate). It stops at the first error of step, with
// the steps that finished: a step that returns its result with the error (it
// measured, then lost the cluster) is judged and kept as the last one.
func (r Ramp) Run(step RateFunc) (steps []*RateStep, good, bad *RateStep, err error) {
	run := func(rate float64) error {
		s, err := step(rate)
		if s != nil {
			steps = append(steps, s)
			if s.OK && (good == nil || s.OfferedRPS > good.OfferedRPS) {
				good = s
			} else if !s.OK && (bad == nil || s.OfferedRPS < bad.OfferedRPS) {
				bad = s
			}
		}
		return err
	}
	for rate := r.StartRate; ; rate = min(rate*2, r.MaxRate) {
		if err := run(rate); err != nil {
			return steps, good, bad, err
		}
		if bad != nil || rate >= r.MaxRate {
			break
		}
	}
	for i := 0; i < r.Bisections && good != nil && bad != nil && (bad.OfferedRPS-good.OfferedRPS)/good.OfferedRPS > BisectResolution; i++ {
		if err := run(math.Round((good.OfferedRPS + bad.OfferedRPS) / 2)); err != nil {
			return steps, good, bad, err
		}
	}
	return steps, good, bad, nil
}
