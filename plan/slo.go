// Ramp drives a step function (one load run at one rate) from a start rate,
// doubling until a step breaks, then bisects between the last good and the first
// broken rate; Judge decides whether a step held; NewResult builds the verdict,
// the knee, the headroom and the curve. The datascale projections live here too.

package plan

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// PercentileBound is one percentile bound of an SLO.
type PercentileBound struct {
	Name  string  `json:"percentile"` // p50, p90, p99, p999
	MaxMs float64 `json:"max_ms"`
}

// ParseSLO parses "p99=25ms" or "p50=5ms,p99=25ms" (p99.9 is read as p999).
func ParseSLO(s string) ([]PercentileBound, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("--slo is required, e.g. --slo p99=25ms")
	}
	var out []PercentileBound
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("--slo %q: want PERCENTILE=DURATION such as p99=25ms", s)
		}
		switch k {
		case "p50", "p90", "p99", "p999":
		case "p99.9":
			k = "p999"
		default:
			return nil, fmt.Errorf("--slo %q: percentile %q: want p50, p90, p99 or p999", s, k)
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("--slo %q: %q is not a positive duration such as 25ms", s, v)
		}
		out = append(out, PercentileBound{Name: k, MaxMs: float64(d) / float64(time.Millisecond)})
	}
	return out, nil
}

// Percentile reads a named percentile (p50, p90, p99, p999) from a summary.
func Percentile(s results.Summary, name string) float64 {
	switch name {
	case "p50":
		return s.P50
	case "p90":
		return s.P90
	case "p999":
		return s.P999
	}
	return s.P99
}
