package analyze

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
)

// exposition rebuilds the text one member's /metrics would have shown from the
// series Prometheus stored for it. The samples carry no type: each family takes
// the one the metadata API gives (types). A family the metadata does not know (a
// target no longer scraped, a store that keeps no metadata) falls back to its
// shape: _bucket series with le make a histogram, a name ending in _total a
// counter, anything else a gauge. Target labels (instance, job) are dropped, as
// the member's own /metrics has none.
func exposition(series []*model.Sample, types map[string]v1.MetricType) (string, error) {
	shapeHist := map[string]bool{}
	for _, s := range series {
		if base, ok := strings.CutSuffix(string(s.Metric[model.MetricNameLabel]), "_bucket"); ok && s.Metric["le"] != "" {
			shapeHist[base] = true
		}
	}
	fams := map[string]*dto.MetricFamily{}
	family := func(name string, t dto.MetricType) *dto.MetricFamily {
		if f, ok := fams[name]; ok {
			return f
		}
		f := &dto.MetricFamily{Name: proto.String(name), Type: t.Enum()}
		fams[name] = f
		return f
	}
	// Series of one histogram or summary are told apart by their labels without
	// le or quantile.
	type groupKey struct{ family, labels string }
	hists := map[groupKey]*dto.Histogram{}
	sums := map[groupKey]*dto.Summary{}
	for _, s := range series {
		name := string(s.Metric[model.MetricNameLabel])
		v := float64(s.Value)
		base, part, t := seriesKind(name, s.Metric, types, shapeHist)
		labels := labelPairs(s.Metric)
		k := groupKey{base, labelKey(labels)}
		switch t {
		case dto.MetricType_HISTOGRAM:
			h := hists[k]
			if h == nil {
				h = &dto.Histogram{SampleCount: proto.Uint64(0), SampleSum: proto.Float64(0)}
				hists[k] = h
				f := family(base, t)
				f.Metric = append(f.Metric, &dto.Metric{Label: labels, Histogram: h})
			}
			switch part {
			case "bucket":
				le, err := strconv.ParseFloat(string(s.Metric["le"]), 64)
				if err != nil {
					return "", fmt.Errorf("%s: le=%q: %w", name, s.Metric["le"], err)
				}
				h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(le), CumulativeCount: proto.Uint64(count(v))})
			case "sum":
				h.SampleSum = proto.Float64(v)
			case "count":
				h.SampleCount = proto.Uint64(count(v))
			}
		case dto.MetricType_SUMMARY:
			sm := sums[k]
			if sm == nil {
				sm = &dto.Summary{SampleCount: proto.Uint64(0), SampleSum: proto.Float64(0)}
				sums[k] = sm
				f := family(base, t)
				f.Metric = append(f.Metric, &dto.Metric{Label: labels, Summary: sm})
			}
			switch part {
			case "quantile":
				q, err := strconv.ParseFloat(string(s.Metric["quantile"]), 64)
				if err != nil {
					return "", fmt.Errorf("%s: quantile=%q: %w", name, s.Metric["quantile"], err)
				}
				sm.Quantile = append(sm.Quantile, &dto.Quantile{Quantile: proto.Float64(q), Value: proto.Float64(v)})
			case "sum":
				sm.SampleSum = proto.Float64(v)
			case "count":
				sm.SampleCount = proto.Uint64(count(v))
			}
		case dto.MetricType_COUNTER:
			f := family(name, t)
			f.Metric = append(f.Metric, &dto.Metric{Label: labels, Counter: &dto.Counter{Value: proto.Float64(v)}})
		case dto.MetricType_GAUGE:
			f := family(name, t)
			f.Metric = append(f.Metric, &dto.Metric{Label: labels, Gauge: &dto.Gauge{Value: proto.Float64(v)}})
		default:
			f := family(name, dto.MetricType_UNTYPED)
			f.Metric = append(f.Metric, &dto.Metric{Label: labels, Untyped: &dto.Untyped{Value: proto.Float64(v)}})
		}
	}
	var b strings.Builder
	for _, name := range sortedNames(fams) {
		f := fams[name]
		for _, m := range f.Metric {
			if h := m.Histogram; h != nil {
				slices.SortFunc(h.Bucket, func(x, y *dto.Bucket) int { return compareFloat(x.GetUpperBound(), y.GetUpperBound()) })
			}
			if sm := m.Summary; sm != nil {
				slices.SortFunc(sm.Quantile, func(x, y *dto.Quantile) int { return compareFloat(x.GetQuantile(), y.GetQuantile()) })
			}
		}
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
	}
	return b.String(), nil
}

// seriesKind names the family a stored series belongs to, its part of that
// family (bucket, sum, count, quantile; "" for a counter or gauge) and the
// family's type: from the metadata where it knows the series' name or family,
// else from the shape.
func seriesKind(name string, m model.Metric, types map[string]v1.MetricType, shapeHist map[string]bool) (family, part string, t dto.MetricType) {
	if mt, ok := types[name]; ok {
		switch mt {
		case v1.MetricTypeCounter:
			return name, "", dto.MetricType_COUNTER
		case v1.MetricTypeGauge:
			return name, "", dto.MetricType_GAUGE
		case v1.MetricTypeSummary:
			if _, ok := m["quantile"]; ok {
				return name, "quantile", dto.MetricType_SUMMARY
			}
		}
		if mt != v1.MetricTypeHistogram && mt != v1.MetricTypeSummary {
			return name, "", dto.MetricType_UNTYPED
		}
	}
	for _, p := range []string{"bucket", "sum", "count"} {
		base, ok := strings.CutSuffix(name, "_"+p)
		if !ok {
			continue
		}
		switch types[base] {
		case v1.MetricTypeHistogram:
			return base, p, dto.MetricType_HISTOGRAM
		case v1.MetricTypeSummary:
			if p != "bucket" {
				return base, p, dto.MetricType_SUMMARY
			}
		case "":
			if shapeHist[base] {
				return base, p, dto.MetricType_HISTOGRAM
			}
		}
	}
	// A name the metadata does not know: a counter's by its _total (which
	// OpenMetrics also leaves out of the family's name), else a gauge.
	if strings.HasSuffix(name, "_total") {
		return name, "", dto.MetricType_COUNTER
	}
	return name, "", dto.MetricType_GAUGE
}

// labelPairs are a series' labels minus the metric name, the target's labels, le
// and quantile, sorted by name.
func labelPairs(m model.Metric) []*dto.LabelPair {
	var out []*dto.LabelPair
	for k, v := range m {
		switch k {
		case model.MetricNameLabel, "instance", "job", "le", "quantile":
			continue
		}
		out = append(out, &dto.LabelPair{Name: proto.String(string(k)), Value: proto.String(string(v))})
	}
	slices.SortFunc(out, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}

func labelKey(ls []*dto.LabelPair) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.GetName() + "=" + strconv.Quote(l.GetValue()) + ",")
	}
	return b.String()
}

func sortedNames(m map[string]*dto.MetricFamily) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// count converts a stored counter value to a bucket count; they are integers.
func count(v float64) uint64 {
	if v <= 0 || math.IsNaN(v) {
		return 0
	}
	return uint64(math.Round(v))
}

func unixTime(sec float64) time.Time {
	return time.Unix(0, int64(math.Round(sec*1e3))*int64(time.Millisecond)).UTC()
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
