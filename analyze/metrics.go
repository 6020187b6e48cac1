package analyze

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/metrics"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// maxMetricsBytes bounds what one scrape may read; etcd's /metrics is ~100-300 KB,
// so anything this large is not an etcd member.
const maxMetricsBytes = 32 << 20

// ErrNotEtcd says a /metrics text parsed but holds no etcd_* metric families.
var ErrNotEtcd = errors.New("no etcd_* metrics: not an etcd member's /metrics")

// Fetch GETs url with client (which carries the caller's TLS and timeout) and returns
// the exposition text filtered to metrics.Kept. ctx bounds the request.
func Fetch(ctx context.Context, client *http.Client, url string) (string, error) {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("scrape %s: %w", url, err)
	}
	// Ask for the text format: the protobuf and OpenMetrics formats would parse
	// differently, and the text is what the run file stores.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("scrape %s: HTTP %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetricsBytes+1))
	if err != nil {
		return "", fmt.Errorf("scrape %s: read body: %w", url, err)
	}
	if len(body) > maxMetricsBytes {
		return "", fmt.Errorf("scrape %s: response larger than %d MiB", url, maxMetricsBytes>>20)
	}
	return Filter(string(body)), nil
}

// Filter keeps the lines of exposition text that belong to a family in
// metrics.Kept (samples, HELP and TYPE lines alike) and drops the rest.
// Blank lines and other comments are dropped too.
func Filter(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), maxMetricsBytes)
	for sc.Scan() {
		line := sc.Text()
		if keepLine(line) {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	// A scan error (a line longer than maxMetricsBytes) is not exposition text: what
	// was kept so far is returned and Parse judges whether it makes sense.
	return b.String()
}

// keepLine reports whether a line names a kept family. Zero samples of the gRPC
// server counters are dropped too: go-grpc-prometheus pre-creates one per method and
// code (≈ 900 lines, half of etcd's /metrics), and an absent labelled counter
// series reads as zero growth anyway. Histogram buckets stay: dropping one would
// move the lower bound of the next.
func keepLine(line string) bool {
	name := line
	if strings.HasPrefix(line, metrics.PrefixGRPCServer) && strings.HasSuffix(line, " 0") && !strings.Contains(line, "_bucket{") {
		return false
	}
	if strings.HasPrefix(line, "#") {
		f := strings.Fields(line)
		if len(f) < 3 || (f[1] != "HELP" && f[1] != "TYPE") {
			return false
		}
		name = f[2]
	}
	for _, p := range metrics.Kept {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Snapshot is one parsed scrape of one member.
type Snapshot struct {
	Member   string
	Time     time.Time
	Families map[string]*dto.MetricFamily
}

// Parse parses Prometheus text exposition format. Garbage or truncated text is an
// error naming the line; text without etcd metrics parses (IsEtcd says so).
func Parse(text string) (*Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	if err := checkHistograms(fams); err != nil {
		return nil, err
	}
	return &Snapshot{Families: fams}, nil
}

// checkHistograms rejects histograms whose cumulative buckets decrease or exceed
// their count: the parser accepts them, but quantiles of such data would be noise.
// A scrape cut off in the middle of a histogram ends up here.
func checkHistograms(fams map[string]*dto.MetricFamily) error {
	for name, mf := range fams {
		if mf.GetType() != dto.MetricType_HISTOGRAM {
			continue
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			if h == nil {
				continue
			}
			prev := 0.0
			for _, b := range h.GetBucket() {
				c := b.GetCumulativeCountFloat()
				if c == 0 {
					c = float64(b.GetCumulativeCount())
				}
				if c < prev {
					return fmt.Errorf("parse metrics: histogram %s: bucket le=%g decreases", name, b.GetUpperBound())
				}
				prev = c
			}
			count := h.GetSampleCountFloat()
			if count == 0 {
				count = float64(h.GetSampleCount())
			}
			if prev > count {
				return fmt.Errorf("parse metrics: histogram %s: buckets exceed _count (truncated?)", name)
			}
		}
	}
	return nil
}

// IsEtcd reports whether the snapshot holds any etcd_* family.
func (s *Snapshot) IsEtcd() bool {
	for name := range s.Families {
		if strings.HasPrefix(name, metrics.PrefixEtcd) {
			return true
		}
	}
	return false
}

// ServerVersion returns the etcd_server_version label, or "" when absent.
func (s *Snapshot) ServerVersion() string {
	mf := s.Families[metrics.ServerVersion]
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "server_version" {
				return l.GetValue()
			}
		}
	}
	return ""
}

// Labels selects series whose labels have these values; nil selects all.
type Labels map[string]string

func (sel Labels) match(m *dto.Metric) bool {
	for k, v := range sel {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k {
				found = l.GetValue() == v
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Value sums a counter, gauge or untyped family over the series matching sel.
// ok is false when the family is absent or no series matches.
func (s *Snapshot) Value(name string, sel Labels) (v float64, ok bool) {
	mf, found := s.Families[name]
	if !found {
		return 0, false
	}
	for _, m := range mf.GetMetric() {
		if !sel.match(m) {
			continue
		}
		switch {
		case m.Counter != nil:
			v += m.GetCounter().GetValue()
		case m.Gauge != nil:
			v += m.GetGauge().GetValue()
		case m.Untyped != nil:
			v += m.GetUntyped().GetValue()
		default:
			continue
		}
		ok = true
	}
	return v, ok
}

// LabelValues lists the distinct values of label across a family's series, sorted.
func (s *Snapshot) LabelValues(name, label string) []string {
	seen := map[string]bool{}
	for _, m := range s.Families[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				seen[l.GetValue()] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// Histogram merges the histogram series of a family matching sel into one
// cumulative histogram. ok is false when the family is absent or no series matches.
// Series with different bucket layouts are merged on the bounds of the first.
func (s *Snapshot) Histogram(name string, sel Labels) (Hist, bool) {
	mf, found := s.Families[name]
	if !found {
		return Hist{}, false
	}
	var h Hist
	ok := false
	for _, m := range mf.GetMetric() {
		ph := m.GetHistogram()
		if ph == nil || !sel.match(m) {
			continue
		}
		one := fromProto(ph)
		if !ok {
			h = one
			ok = true
			continue
		}
		h = h.add(one)
	}
	return h, ok
}

func fromProto(ph *dto.Histogram) Hist {
	h := Hist{Count: ph.GetSampleCountFloat(), Sum: ph.GetSampleSum()}
	if h.Count == 0 {
		h.Count = float64(ph.GetSampleCount())
	}
	for _, b := range ph.GetBucket() {
		c := b.GetCumulativeCountFloat()
		if c == 0 {
			c = float64(b.GetCumulativeCount())
		}
		h.Bounds = append(h.Bounds, b.GetUpperBound())
		h.Cumulative = append(h.Cumulative, c)
	}
	return h
}
