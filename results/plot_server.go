package results

import (
	"math"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Server-side histograms the timeline plots, and the p99 etcd's guidance grades them by.
const (
	walFsyncFamily      = "etcd_disk_wal_fsync_duration_seconds"
	backendCommitFamily = "etcd_disk_backend_commit_duration_seconds"
)

// This is a deliberately small reading of the scrapes, for drawing only: package
// analyze owns grading, with its own parser and its checks of malformed data.

// serverSeries is one member's p99 of one histogram family, per interval between
// consecutive scrapes.
type serverSeries struct {
	Member string
	Family string
	Points []serverPoint
}

// serverPoint is the p99 of the observations made in (From, To].
type serverPoint struct {
	From, To time.Time
	P99Ms    float64
}

// histSnapshot is a histogram family at one scrape: cumulative counts per finite
// upper bound (seconds), and the total count (which includes the +Inf bucket).
type histSnapshot struct {
	Time   time.Time
	Bounds []float64
	Counts []float64
	Total  float64
}

// serverP99Series computes, for each member and each family, the p99 over each
// interval between consecutive successful scrapes. Scrapes that failed, do not
// parse, or lack the family are skipped: a plot shows what can be shown.
func serverP99Series(scrapes []Scrape, families ...string) []serverSeries {
	byMember := map[string][]Scrape{}
	for _, s := range scrapes {
		if s.Error == "" && s.Text != "" {
			byMember[s.Member] = append(byMember[s.Member], s)
		}
	}
	members := make([]string, 0, len(byMember))
	for m := range byMember {
		members = append(members, m)
	}
	sort.Strings(members)

	var out []serverSeries
	for _, m := range members {
		snaps := map[string][]histSnapshot{}
		for _, s := range byMember[m] {
			t, err := time.Parse(time.RFC3339Nano, s.Time)
			if err != nil {
				continue
			}
			parsed := parseHistograms(s.Text, families)
			for fam, h := range parsed {
				h.Time = t
				snaps[fam] = append(snaps[fam], h)
			}
		}
		for _, fam := range families {
			ss := snaps[fam]
			sort.Slice(ss, func(i, j int) bool { return ss[i].Time.Before(ss[j].Time) })
			series := serverSeries{Member: m, Family: fam}
			for i := 1; i < len(ss); i++ {
				if q, ok := deltaQuantile(ss[i-1], ss[i], 0.99); ok {
					series.Points = append(series.Points, serverPoint{From: ss[i-1].Time, To: ss[i].Time, P99Ms: q * 1000})
				}
			}
			if len(series.Points) > 0 {
				out = append(out, series)
			}
		}
	}
	return out
}

// parseHistograms returns the named histogram families of one exposition text,
// summed over their label sets.
func parseHistograms(text string, families []string) map[string]histSnapshot {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil
	}
	out := map[string]histSnapshot{}
	for _, name := range families {
		mf := fams[name]
		if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
			continue
		}
		var h histSnapshot
		for _, m := range mf.GetMetric() {
			mh := m.GetHistogram()
			if mh == nil {
				continue
			}
			i := 0
			for _, b := range mh.GetBucket() {
				if math.IsInf(b.GetUpperBound(), 1) {
					continue
				}
				c := float64(b.GetCumulativeCount()) + b.GetCumulativeCountFloat()
				if i == len(h.Bounds) {
					h.Bounds = append(h.Bounds, b.GetUpperBound())
					h.Counts = append(h.Counts, 0)
				}
				h.Counts[i] += c
				i++
			}
			h.Total += float64(mh.GetSampleCount()) + mh.GetSampleCountFloat()
		}
		if h.Total > 0 || len(h.Bounds) > 0 {
			out[name] = h
		}
	}
	return out
}

// deltaQuantile estimates quantile q of the observations made between scrapes a
// and b, as Prometheus's histogram_quantile does: find the bucket holding the rank,
// interpolate linearly inside it (from 0 for the first bucket), and answer the
// highest finite bound when the rank falls in the +Inf bucket. It reports false
// when nothing was observed, or when a counter went down (the member restarted).
func deltaQuantile(a, b histSnapshot, q float64) (float64, bool) {
	if len(a.Bounds) != len(b.Bounds) || len(b.Bounds) == 0 {
		return 0, false
	}
	total := b.Total - a.Total
	if total <= 0 {
		return 0, false
	}
	rank := q * total
	lower, prev := 0.0, 0.0
	for i, le := range b.Bounds {
		if a.Bounds[i] != le {
			return 0, false
		}
		c := b.Counts[i] - a.Counts[i]
		if c < prev {
			return 0, false
		}
		if c >= rank { // c > prev here, since the rank was above the previous bucket
			return lower + (le-lower)*(rank-prev)/(c-prev), true
		}
		lower, prev = le, c
	}
	return b.Bounds[len(b.Bounds)-1], true
}
