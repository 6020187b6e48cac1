// Package stats holds the rank tests etcdperf decides "more than noise" with:
// compare's regressions, the scenario matrix's "no effect", make compare's
// fidelity. Pure functions on samples, no I/O.
package stats

import (
	"math"
	"sort"
)

// exactMaxN is the largest pooled sample for which MannWhitney computes the
// exact distribution; past it the normal approximation is within ~1e-3 of it.
const exactMaxN = 50

// MannWhitney tests whether b's values tend to be larger or smaller than a's
// (two-sided Mann-Whitney U test): exact for small samples (see exactRankSum),
// the normal approximation otherwise. It returns the p-value and the direction
// of the shift: +1 when b tends to be larger, -1 when smaller, 0 when neither.
func MannWhitney(a, b []float64) (p float64, dir int) {
	if len(a) == 0 || len(b) == 0 {
		return 1, 0
	}
	if len(a)+len(b) > exactMaxN {
		return mannWhitneyNormal(a, b)
	}
	return exactRankSum(a, b)
}

// exactRankSum is the exact two-sided Mann-Whitney test: the p-value is the
// share of all C(n, na) ways to split the pooled values' ranks into samples of
// na and nb whose rank sum for A is as extreme as observed (midranks for ties,
// so the distribution is the permutation distribution given the ties), doubled
// as R's wilcox.test does. Ranks are doubled to integers and the ways counted
// by dynamic programming over (values picked, rank sum).
func exactRankSum(a, b []float64) (p float64, dir int) {
	ranks, _ := midranks(a, b)
	na, n := len(a), len(a)+len(b)
	r2 := make([]int, n) // doubled ranks
	obs, maxSum := 0, 0
	for i, r := range ranks {
		r2[i] = int(math.Round(2 * r))
		if i < na {
			obs += r2[i]
		}
		maxSum += r2[i]
	}
	// ways[k][s]: subsets of k of the ranks seen so far with doubled sum s.
	ways := make([][]float64, na+1)
	for k := range ways {
		ways[k] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for _, r := range r2 {
		for k := na; k >= 1; k-- {
			prev, cur := ways[k-1], ways[k]
			for s := maxSum; s >= r; s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	var le, ge, total float64
	for s, w := range ways[na] {
		total += w
		if s <= obs {
			le += w
		}
		if s >= obs {
			ge += w
		}
	}
	mean := float64(na) * float64(n+1) // doubled
	switch d := float64(obs) - mean; {
	case d < 0:
		dir = 1 // a ranks low, so b tends to be larger
	case d > 0:
		dir = -1
	}
	if le == total && ge == total {
		return 1, 0 // every value equal
	}
	return math.Min(1, 2*math.Min(le, ge)/total), dir
}

// MinExactP is the smallest two-sided p-value the exact test can give for
// samples of na and nb (complete separation, no ties): 2 / C(na+nb, na). When
// it is not below the significance level, no change whatever can be detected.
func MinExactP(na, nb int) float64 {
	c := 1.0
	for i := 1; i <= na; i++ {
		c = c * float64(nb+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// SecondsNeeded is the fewest seconds each of two equal runs needs for the
// exact test to be able to reach p < alpha at all.
func SecondsNeeded(alpha float64) int {
	n := 1
	for MinExactP(n, n) >= alpha && n < 1000 {
		n++
	}
	return n
}

// powerZ is z at 80% power, the conventional target for a smallest detectable change.
const powerZ = 0.8416212335729143

// Detectable is the smallest shift of the per-second values that the test finds
// at alpha with 80% power, in units of the values: the t-test's
// (z[1-α/2] + z[0.8])·σ·√(1/na + 1/nb), divided by √(3/π), the Mann-Whitney
// test's efficiency relative to it on normal data (Lehmann, Nonparametrics,
// 1975). σ is robust (1.4826 × the pooled median absolute deviation, each sample
// about its own median), so a stalled second does not hide every smaller change.
// ok is false when the exact test cannot reach alpha with these sample sizes.
func Detectable(a, b []float64, alpha float64) (shift float64, ok bool) {
	if len(a) < 2 || len(b) < 2 || MinExactP(len(a), len(b)) >= alpha {
		return 0, false
	}
	var dev []float64
	for _, xs := range [][]float64{a, b} {
		m := Median(xs)
		for _, x := range xs {
			dev = append(dev, math.Abs(x-m))
		}
	}
	sigma := 1.4826 * Median(dev)
	zAlpha := math.Sqrt2 * math.Erfinv(1-alpha)
	se := math.Sqrt(1/float64(len(a)) + 1/float64(len(b)))
	return (zAlpha + powerZ) * sigma * se / math.Sqrt(3/math.Pi), true
}

// Median is the middle value of xs (the mean of the two middle ones for an even
// count); xs is not changed.
func Median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Shift is the Hodges-Lehmann estimate of how much b's values lie above a's:
// the median of every difference b[j] − a[i]. It is the effect size that goes
// with the Mann-Whitney test (the shift the test's ranks estimate), and like
// the test one outlying value moves it little.
func Shift(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	d := make([]float64, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			d = append(d, y-x)
		}
	}
	return Median(d)
}

// midranks returns the ranks of a's then b's values in the pooled sample (ties
// share their mean rank) and Σ(t³ − t) over the groups of ties.
func midranks(a, b []float64) (ranks []float64, tieSum float64) {
	n := len(a) + len(b)
	idx := make([]int, n)
	val := func(i int) float64 {
		if i < len(a) {
			return a[i]
		}
		return b[i-len(a)]
	}
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return val(idx[i]) < val(idx[j]) })
	ranks = make([]float64, n)
	for i := 0; i < n; {
		j := i
		for j < n && val(idx[j]) == val(idx[i]) {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1..j, averaged
		for k := i; k < j; k++ {
			ranks[idx[k]] = avg
		}
		t := float64(j - i)
		tieSum += t*t*t - t
		i = j
	}
	return ranks, tieSum
}

// mannWhitneyNormal is the two-sided Mann-Whitney U test by the normal
// approximation with tie correction and continuity correction. It returns the p-value and the direction of the shift:
// +1 when b tends to be larger, -1 when smaller, 0 when neither. The test uses
// ranks only, so one stalled second moves it no more than any other high second,
// and it assumes nothing about the shape of the distributions.
func mannWhitneyNormal(a, b []float64) (p float64, dir int) {
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
