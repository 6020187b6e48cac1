package results

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"time"
)

// Moments are exact figures of a set of latencies: count, maximum, sum and sum of
// squares, in integer nanoseconds, so they merge exactly (addition of integers is
// associative, unlike floating point) and give the true slowest request and
// standard deviation where a histogram gives only its bucket's bounds. etcdctl
// check perf grades exactly these (pkg/report: Slowest, and the population
// Stddev over the successful requests' durations).
type Moments struct {
	Count int64 `json:"count"`
	MaxNs int64 `json:"max_ns"`
	SumNs int64 `json:"sum_ns"`
	// SumSqNs2 is Σ ns², 128 bits wide: one 60 s request alone is 3.6e21 ns².
	SumSqNs2 Uint128 `json:"sum_sq_ns2"`
}

// Add adds one latency. It does not allocate.
func (m *Moments) Add(d time.Duration) {
	ns := max(int64(d), 0)
	m.Count++
	m.MaxNs = max(m.MaxNs, ns)
	m.SumNs += ns
	hi, lo := bits.Mul64(uint64(ns), uint64(ns))
	m.SumSqNs2 = m.SumSqNs2.add(Uint128{Hi: hi, Lo: lo})
}

// Merge adds o into m exactly.
func (m *Moments) Merge(o Moments) {
	m.Count += o.Count
	m.MaxNs = max(m.MaxNs, o.MaxNs)
	m.SumNs += o.SumNs
	m.SumSqNs2 = m.SumSqNs2.add(o.SumSqNs2)
}

// MaxMs is the slowest latency in milliseconds.
func (m Moments) MaxMs() float64 { return float64(m.MaxNs) / 1e6 }

// MeanMs is the mean latency in milliseconds; 0 for no latencies.
func (m Moments) MeanMs() float64 {
	if m.Count == 0 {
		return 0
	}
	return float64(m.SumNs) / float64(m.Count) / 1e6
}

// StddevMs is the population standard deviation in milliseconds (divided by the
// count, as etcd's pkg/report does); 0 for no latencies. The variance is
// (n·Σx² − (Σx)²) / n², computed in integers, so it does not cancel out.
func (m Moments) StddevMs() float64 {
	if m.Count == 0 {
		return 0
	}
	n := big.NewInt(m.Count)
	num := new(big.Int).Mul(n, m.SumSqNs2.big())
	s := big.NewInt(m.SumNs)
	num.Sub(num, s.Mul(s, s))
	if num.Sign() <= 0 {
		return 0
	}
	v, _ := new(big.Float).Quo(new(big.Float).SetInt(num), new(big.Float).SetInt(n.Mul(n, n))).Float64()
	return math.Sqrt(v) / 1e6
}

// Uint128 is an unsigned 128-bit integer; JSON carries it as a decimal string.
type Uint128 struct{ Hi, Lo uint64 }

func (u Uint128) add(v Uint128) Uint128 {
	lo, c := bits.Add64(u.Lo, v.Lo, 0)
	hi, _ := bits.Add64(u.Hi, v.Hi, c)
	return Uint128{Hi: hi, Lo: lo}
}

func (u Uint128) big() *big.Int {
	b := new(big.Int).SetUint64(u.Hi)
	return b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(u.Lo))
}

// MarshalJSON writes u as a decimal string.
func (u Uint128) MarshalJSON() ([]byte, error) { return json.Marshal(u.big().String()) }

// UnmarshalJSON reads a decimal string (or a plain number) of at most 128 bits.
func (u *Uint128) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		s = string(b)
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() < 0 || v.BitLen() > 128 {
		return fmt.Errorf("sum of squares %q: want an unsigned 128-bit decimal", s)
	}
	mask := new(big.Int).SetUint64(math.MaxUint64)
	u.Lo = new(big.Int).And(v, mask).Uint64()
	u.Hi = new(big.Int).Rsh(v, 64).Uint64()
	return nil
}
