package analyze

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/etcdperf/etcdperf/results"
)

// Prometheus reads the members' metrics from a Prometheus server's HTTP API
// instead of scraping the members, for clusters whose /metrics a client machine
// cannot reach. Scrapes rebuilds, per member, the scrapes a Scraper would have
// taken around a run, so the rules grade them unchanged.
type Prometheus struct {
	// URL is the server's base URL, e.g. http://prometheus.monitoring:9090.
	URL string
	// Selector holds label matchers for the members' series, e.g. job="etcd"
	// (braces optional); empty matches every target.
	Selector string
	// Client carries TLS and auth; nil uses a client with a 30 s timeout.
	Client *http.Client
}

// promSeries matches what KeptPrefixes keeps from a member's /metrics.
var promSeries = `__name__=~"(` + strings.Join(KeptPrefixes, "|") + `).+"`

// promProbe is a series every etcd member exposes (3.4 and later); its sample
// timestamps are the times Prometheus scraped each member.
const promProbe = mHasLeader

// promLookahead bounds the search for a member's first scrape at or after the end
// of the window: Prometheus' default lookback, more than any sane scrape interval.
const promLookahead = 5 * time.Minute

// promDuringEvery is the spacing of the "during" samples, as the bench Scraper's;
// promMaxDuring caps their number on long windows.
const (
	promDuringEvery = 5 * time.Second
	promMaxDuring   = 10
)

// ErrNoSeries says Prometheus answered but holds no series the selector matches.
var ErrNoSeries = errors.New("no series")

// Scrapes returns one scrape per member (Prometheus' instance label) and sample
// time: "before" is each member's last scrape at or before from, "after" its first
// at or after to (the last before it when Prometheus has none later yet), and
// "during" samples lie in between, every 5 s up to 10 of them. Their text is the
// exposition format of the series Prometheus stored, filtered as a direct scrape
// is. Prometheus only knows what it scraped: pad the window by one scrape interval.
func (p *Prometheus) Scrapes(ctx context.Context, from, to time.Time) ([]results.Scrape, error) {
	if !to.After(from) {
		return nil, fmt.Errorf("prometheus: --to %s is not after --from %s", fmtTime(to), fmtTime(from))
	}
	times := []time.Time{from}
	step := max(promDuringEvery, to.Sub(from)/(promMaxDuring+1))
	for t := from.Add(step); to.Sub(t) >= time.Second; t = t.Add(step) {
		times = append(times, t)
	}
	end, err := p.afterTime(ctx, to)
	if err != nil {
		return nil, err
	}
	times = append(times, end)

	var out []results.Scrape
	last := map[string]string{} // member → time of its previous scrape
	for i, at := range times {
		phase := results.PhaseDuring
		switch i {
		case 0:
			phase = results.PhaseBefore
		case len(times) - 1:
			phase = results.PhaseAfter
		}
		snaps, err := p.snapshot(ctx, at)
		if err != nil {
			return nil, err
		}
		for _, sc := range snaps {
			// Two evaluation times that fell on one Prometheus scrape are one scrape;
			// the after one keeps its phase.
			if last[sc.Member] == sc.Time && phase == results.PhaseDuring {
				continue
			}
			last[sc.Member] = sc.Time
			sc.Phase = phase
			out = append(out, sc)
		}
	}
	return out, nil
}

// afterTime is the evaluation time at which every member's latest sample is at or
// after to: the latest of the members' first scrapes after to, or to itself when
// Prometheus has none after it yet.
func (p *Prometheus) afterTime(ctx context.Context, to time.Time) (time.Time, error) {
	r, err := p.query(ctx, fmt.Sprintf("%s%s[%ds]", promProbe, p.matchers(""), int(promLookahead.Seconds())), to.Add(promLookahead))
	if err != nil {
		return time.Time{}, err
	}
	end := to
	for _, s := range r.Result {
		for _, v := range s.Values {
			t := unixTime(v.t)
			if !t.Before(to) {
				if t.After(end) {
					end = t
				}
				break
			}
		}
	}
	return end, nil
}

// snapshot is every member's latest samples at time at, as scrapes.
func (p *Prometheus) snapshot(ctx context.Context, at time.Time) ([]results.Scrape, error) {
	series, err := p.query(ctx, p.matchers(promSeries), at)
	if err != nil {
		return nil, err
	}
	if len(series.Result) == 0 {
		return nil, fmt.Errorf("prometheus %s: %w match {%s} at %s: check --selector and that Prometheus scrapes the members",
			p.URL, ErrNoSeries, p.selector(), fmtTime(at))
	}
	stamps, err := p.query(ctx, "timestamp("+promProbe+p.matchers("")+")", at)
	if err != nil {
		return nil, err
	}
	when := map[string]time.Time{}
	for _, s := range stamps.Result {
		when[s.Metric["instance"]] = unixTime(s.Value.v)
	}
	byMember := map[string][]promSample{}
	jobOf := map[string]string{}
	var members []string
	for _, s := range series.Result {
		inst, job := s.Metric["instance"], s.Metric["job"]
		if j, seen := jobOf[inst]; seen && j != job {
			return nil, fmt.Errorf("prometheus %s: instance %s is scraped by jobs %q and %q: narrow --selector to one", p.URL, inst, j, job)
		}
		if _, seen := jobOf[inst]; !seen {
			members = append(members, inst)
		}
		jobOf[inst] = job
		byMember[inst] = append(byMember[inst], s)
	}
	slices.Sort(members)
	var out []results.Scrape
	for _, m := range members {
		t, ok := when[m]
		if !ok {
			// Not an etcd member (no etcd_server_has_leader): analyze notes it.
			t = at
		}
		text, err := exposition(byMember[m])
		if err != nil {
			return nil, fmt.Errorf("prometheus %s: instance %s: %w", p.URL, m, err)
		}
		out = append(out, results.Scrape{Member: m, URL: p.URL, Time: scrapeTime(t), Text: Filter(text)})
	}
	return out, nil
}

// selector is the user's matchers without braces.
func (p *Prometheus) selector() string {
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(p.Selector), "{"), "}"))
}

// matchers is {extra, selector}, or "" when both are empty.
func (p *Prometheus) matchers(extra string) string {
	var m []string
	for _, s := range []string{extra, p.selector()} {
		if s != "" {
			m = append(m, s)
		}
	}
	if len(m) == 0 {
		return ""
	}
	return "{" + strings.Join(m, ",") + "}"
}

// promSample is one series of an instant or range query answer.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  promPoint         `json:"value"`
	Values []promPoint       `json:"values"`
}

// promPoint is [unix seconds, "value"] as the API encodes samples.
type promPoint struct {
	t float64
	v float64
}

func (pt *promPoint) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) != 2 {
		return fmt.Errorf("sample %s: want [time, \"value\"]", b)
	}
	var s string
	if err := json.Unmarshal(raw[0], &pt.t); err != nil {
		return fmt.Errorf("sample time %s: %w", raw[0], err)
	}
	if err := json.Unmarshal(raw[1], &s); err != nil {
		return fmt.Errorf("sample value %s: %w", raw[1], err)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("sample value %q: %w", s, err)
	}
	pt.v = v
	return nil
}

type promData struct {
	ResultType string       `json:"resultType"`
	Result     []promSample `json:"result"`
}

// maxPromBytes bounds one answer: the kept series of a few members are a few MB.
const maxPromBytes = 64 << 20

// query runs an instant query at time at.
func (p *Prometheus) query(ctx context.Context, q string, at time.Time) (*promData, error) {
	client := p.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	u, err := url.Parse(strings.TrimSuffix(p.URL, "/") + "/api/v1/query")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("prometheus URL %q: want http(s)://host:port", p.URL)
	}
	form := url.Values{"query": {q}, "time": {strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", p.URL, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", p.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPromBytes+1))
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: read answer: %w", p.URL, err)
	}
	if len(body) > maxPromBytes {
		return nil, fmt.Errorf("prometheus %s: answer larger than %d MiB: narrow --selector", p.URL, maxPromBytes>>20)
	}
	var ans struct {
		Status    string   `json:"status"`
		ErrorType string   `json:"errorType"`
		Error     string   `json:"error"`
		Data      promData `json:"data"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return nil, fmt.Errorf("prometheus %s: HTTP %s, not a Prometheus API answer", p.URL, resp.Status)
	}
	if ans.Status != "success" {
		return nil, fmt.Errorf("prometheus %s: %s: %s (query %s)", p.URL, ans.ErrorType, ans.Error, q)
	}
	return &ans.Data, nil
}

// exposition rebuilds the text one member's /metrics would have shown from the
// series Prometheus stored for it. Prometheus keeps no metric types with the
// samples, so they are read from the series' shapes: a family with _bucket series
// carrying le is a histogram (with its _sum and _count), a name ending in _total a
// counter, anything else a gauge; the analyzer reads counters, gauges and
// histograms alike by value. Target labels (instance, job) are dropped, as the
// member's own /metrics has none.
func exposition(series []promSample) (string, error) {
	hists := map[string]bool{}
	for _, s := range series {
		name := s.Metric["__name__"]
		if base, ok := strings.CutSuffix(name, "_bucket"); ok && s.Metric["le"] != "" {
			hists[base] = true
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
	// Histogram series of one family are told apart by their labels without le.
	type histKey struct{ family, labels string }
	histOf := map[histKey]*dto.Histogram{}
	for _, s := range series {
		name := s.Metric["__name__"]
		labels := labelPairs(s.Metric)
		base, part := histPart(name, hists)
		if part == "" {
			t := dto.MetricType_GAUGE
			m := &dto.Metric{Label: labels}
			if strings.HasSuffix(name, "_total") {
				t = dto.MetricType_COUNTER
				m.Counter = &dto.Counter{Value: proto.Float64(s.Value.v)}
			} else {
				m.Gauge = &dto.Gauge{Value: proto.Float64(s.Value.v)}
			}
			f := family(name, t)
			f.Metric = append(f.Metric, m)
			continue
		}
		k := histKey{base, labelKey(labels)}
		h := histOf[k]
		if h == nil {
			h = &dto.Histogram{SampleCount: proto.Uint64(0), SampleSum: proto.Float64(0)}
			histOf[k] = h
			f := family(base, dto.MetricType_HISTOGRAM)
			f.Metric = append(f.Metric, &dto.Metric{Label: labels, Histogram: h})
		}
		switch part {
		case "bucket":
			le, err := strconv.ParseFloat(s.Metric["le"], 64)
			if err != nil {
				return "", fmt.Errorf("%s: le=%q: %w", name, s.Metric["le"], err)
			}
			h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(le), CumulativeCount: proto.Uint64(count(s.Value.v))})
		case "sum":
			h.SampleSum = proto.Float64(s.Value.v)
		case "count":
			h.SampleCount = proto.Uint64(count(s.Value.v))
		}
	}
	var b strings.Builder
	for _, name := range sortedNames(fams) {
		f := fams[name]
		for _, m := range f.Metric {
			if h := m.Histogram; h != nil {
				slices.SortFunc(h.Bucket, func(x, y *dto.Bucket) int { return compareFloat(x.GetUpperBound(), y.GetUpperBound()) })
			}
		}
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
	}
	return b.String(), nil
}

// histPart splits a histogram series name into its family and part (bucket, sum,
// count); part is "" for a series of no histogram family.
func histPart(name string, hists map[string]bool) (base, part string) {
	for _, p := range []string{"bucket", "sum", "count"} {
		if b, ok := strings.CutSuffix(name, "_"+p); ok && hists[b] {
			return b, p
		}
	}
	return name, ""
}

// labelPairs are a series' labels minus the metric name, the target's labels and
// le, sorted by name.
func labelPairs(m map[string]string) []*dto.LabelPair {
	var out []*dto.LabelPair
	for k, v := range m {
		switch k {
		case "__name__", "instance", "job", "le":
			continue
		}
		out = append(out, &dto.LabelPair{Name: proto.String(k), Value: proto.String(v)})
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
