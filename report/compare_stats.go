package report

import (
	"math"
	"sort"
)

// mannWhitney tests whether b's values tend to be larger or smaller than a's
// (two-sided Mann-Whitney U test, normal approximation with tie correction and
// continuity correction). It returns the p-value and the direction of the shift:
// +1 when b tends to be larger, -1 when smaller, 0 when neither. The test uses
// ranks only, so one stalled second moves it no more than any other high second,
// and it assumes nothing about the shape of the distributions.
func mannWhitney(a, b []float64) (p float64, dir int) {
	na, nb := float64(len(a)), float64(len(b))
	if na == 0 || nb == 0 {
		return 1, 0
	}
	type obs struct {
		v    float64
		inA  bool
		rank float64
	}
	all := make([]obs, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, obs{v: v, inA: true})
	}
	for _, v := range b {
		all = append(all, obs{v: v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	n := na + nb
	var tieSum float64 // Σ (t³ - t) over groups of tied values
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1..j, averaged
		for k := i; k < j; k++ {
			all[k].rank = avg
		}
		t := float64(j - i)
		tieSum += t*t*t - t
		i = j
	}
	var ra float64
	for _, o := range all {
		if o.inA {
			ra += o.rank
		}
	}
	ua := ra - na*(na+1)/2 // pairs where a's value is the larger (ties count half)
	mean := na * nb / 2
	variance := na * nb / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if variance <= 0 {
		return 1, 0 // every value equal: no evidence of a shift
	}
	d := ua - mean
	switch {
	case d < 0:
		dir = 1 // a ranks low, so b tends to be larger
	case d > 0:
		dir = -1
	}
	z := math.Max(math.Abs(d)-0.5, 0) / math.Sqrt(variance)
	return math.Erfc(z / math.Sqrt2), dir
}
