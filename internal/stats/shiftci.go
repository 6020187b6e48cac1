package stats

import (
	"math"
	"sort"
)

// ShiftCI is the distribution-free confidence interval of Shift (the
// Hodges-Lehmann estimate of how much b's values lie above a's) that goes
// with the Mann-Whitney test (Moses; Hollander & Wolfe, Nonparametric
// Statistical Methods, §4.3): the k-th smallest and k-th largest of the
// len(a)·len(b) differences b[j] − a[i], k the largest with
// P(U ≤ k−1) ≤ alpha/2 under the null (U's exact distribution, without
// ties, for samples of up to 50 each; the normal approximation past them).
// level is the interval's confidence, 1 − 2·P(U ≤ k−1), at least 1 − alpha;
// ok is false when the samples are too small for any such k (the interval is
// then the whole range of the differences, of level 1 − 2·P(U = 0)).
func ShiftCI(a, b []float64, alpha float64) (lo, hi, level float64, ok bool) {
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return 0, 0, 0, false
	}
	d := make([]float64, 0, m*n)
	for _, x := range a {
		for _, y := range b {
			d = append(d, y-x)
		}
	}
	sort.Float64s(d)
	cdf := uCDF(m, n)
	k := 0
	for k+1 <= m*n/2 && cdf(k) <= alpha/2 { // P(U ≤ (k+1)−1)
		k++
	}
	if k == 0 {
		return d[0], d[len(d)-1], 1 - 2*cdf(0), false
	}
	return d[k-1], d[len(d)-k], 1 - 2*cdf(k-1), true
}

// uCDF is P(U ≤ u) for the Mann-Whitney U of samples of m and n without ties.
func uCDF(m, n int) func(u int) float64 {
	if m > exactMaxN || n > exactMaxN {
		mean, sd := float64(m*n)/2, math.Sqrt(float64(m*n*(m+n+1))/12)
		return func(u int) float64 { return 0.5 * math.Erfc(-(float64(u)+0.5-mean)/sd/math.Sqrt2) }
	}
	// ways[j][u]: arrangements of i of a's and j of b's values with U = u,
	// i growing (c(i, j, u) = c(i−1, j, u−j) + c(i, j−1, u)).
	ways := make([][]float64, n+1)
	for j := range ways {
		ways[j] = make([]float64, m*n+1)
		ways[j][0] = 1 // i = 0
	}
	for i := 1; i <= m; i++ {
		next := make([][]float64, n+1)
		for j := range next {
			next[j] = make([]float64, m*n+1)
			for u := range next[j] {
				if u >= j {
					next[j][u] += ways[j][u-j]
				}
				if j > 0 {
					next[j][u] += next[j-1][u]
				}
			}
		}
		ways = next
	}
	var total float64
	for _, w := range ways[n] {
		total += w
	}
	cum := make([]float64, m*n+1)
	var s float64
	for u, w := range ways[n] {
		s += w
		cum[u] = s / total
	}
	return func(u int) float64 {
		if u < 0 {
			return 0
		}
		return cum[min(u, m*n)]
	}
}
