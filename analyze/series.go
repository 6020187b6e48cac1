package analyze

import (
	"sort"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// Series is one member's quantile of one histogram, per interval between
// consecutive successful scrapes.
type Series struct {
	Member string
	Metric string
	Points []SeriesPoint
}

// SeriesPoint is the quantile, in seconds, of the observations made in (From, To].
type SeriesPoint struct {
	From, To time.Time
	Value    float64
}

// IntervalQuantiles computes, for each member (sorted) and each metric (in the
// order given), quantile q of each interval between consecutive scrapes, with the
// same parser and histogram_quantile the rules grade by. Scrapes that failed, do
// not parse or have no time are skipped, and so are intervals with nothing
// observed: a plot shows what can be shown.
func IntervalQuantiles(scrapes []results.Scrape, q float64, metrics ...string) []Series {
	byMember := map[string][]*Snapshot{}
	for _, sc := range scrapes {
		if sc.Error != "" || sc.Text == "" {
			continue
		}
		t := parseTime(sc.Time)
		s, err := Parse(sc.Text)
		if err != nil || t.IsZero() {
			continue
		}
		s.Member, s.Time = sc.Member, t
		byMember[sc.Member] = append(byMember[sc.Member], s)
	}
	members := make([]string, 0, len(byMember))
	for m := range byMember {
		members = append(members, m)
	}
	sort.Strings(members)
	var out []Series
	for _, m := range members {
		snaps := byMember[m]
		sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].Time.Before(snaps[j].Time) })
		for _, metric := range metrics {
			se := Series{Member: m, Metric: metric}
			for i := 1; i < len(snaps); i++ {
				w := Window{Member: m, Snaps: snaps[i-1 : i+1]}
				h, ok := w.HistDelta(metric, nil)
				if !ok {
					continue
				}
				if v, ok := h.Quantile(q); ok {
					se.Points = append(se.Points, SeriesPoint{From: snaps[i-1].Time, To: snaps[i].Time, Value: v.Value})
				}
			}
			if len(se.Points) > 0 {
				out = append(out, se)
			}
		}
	}
	return out
}
