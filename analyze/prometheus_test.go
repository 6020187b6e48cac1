package analyze

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
)

// asStored turns a member's /metrics text into the series Prometheus stores for it:
// one sample per series, histograms as _bucket/_sum/_count, with target labels.
// The second result is what the metadata API says of the families' types.
func asStored(t *testing.T, text, instance string) ([]*model.Sample, map[string]v1.MetricType) {
	t.Helper()
	s, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var out []*model.Sample
	types := map[string]v1.MetricType{}
	add := func(name string, labels []*dto.LabelPair, v float64, extra ...string) {
		m := model.Metric{"__name__": model.LabelValue(name), "instance": model.LabelValue(instance), "job": "etcd"}
		for _, l := range labels {
			m[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
		}
		for i := 0; i < len(extra); i += 2 {
			m[model.LabelName(extra[i])] = model.LabelValue(extra[i+1])
		}
		out = append(out, &model.Sample{Metric: m, Value: model.SampleValue(v), Timestamp: model.TimeFromUnix(1.8e9)})
	}
	for name, f := range s.Families {
		types[name] = v1.MetricType(strings.ToLower(f.GetType().String()))
		for _, m := range f.GetMetric() {
			switch {
			case m.Histogram != nil:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					add(name+"_bucket", m.GetLabel(), float64(b.GetCumulativeCount()), "le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64))
				}
				add(name+"_bucket", m.GetLabel(), float64(h.GetSampleCount()), "le", "+Inf")
				add(name+"_sum", m.GetLabel(), h.GetSampleSum())
				add(name+"_count", m.GetLabel(), float64(h.GetSampleCount()))
			case m.Summary != nil:
				for _, q := range m.GetSummary().GetQuantile() {
					add(name, m.GetLabel(), q.GetValue(), "quantile", strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64))
				}
				add(name+"_sum", m.GetLabel(), m.GetSummary().GetSampleSum())
				add(name+"_count", m.GetLabel(), float64(m.GetSummary().GetSampleCount()))
			case m.Counter != nil:
				add(name, m.GetLabel(), m.GetCounter().GetValue())
			case m.Gauge != nil:
				add(name, m.GetLabel(), m.GetGauge().GetValue())
			case m.Untyped != nil:
				add(name, m.GetLabel(), m.GetUntyped().GetValue())
			}
		}
	}
	return out, types
}

// TestExpositionRoundTrip: the text rebuilt from what Prometheus stores grades
// exactly as the member's own /metrics, for etcd 3.6 and 3.4; with the metadata
// API's types every family has its own type, without them the shapes still grade.
func TestExpositionRoundTrip(t *testing.T) {
	for _, c := range []struct {
		v        string
		metadata bool
	}{{"3.6", true}, {"3.4", true}, {"3.6", false}} {
		v := c.v
		t.Run(fmt.Sprintf("%s/metadata=%v", v, c.metadata), func(t *testing.T) {
			var direct, rebuilt [2]string
			for i, phase := range []string{"before", "after"} {
				b, err := os.ReadFile(fmt.Sprintf("testdata/etcd-%s-%s.txt", v, phase))
				if err != nil {
					t.Fatal(err)
				}
				direct[i] = Filter(string(b))
				series, types := asStored(t, direct[i], "10.0.0.1:2379")
				if !c.metadata {
					types = nil
				}
				text, err := exposition(series, types)
				if err != nil {
					t.Fatal(err)
				}
				rebuilt[i] = Filter(text)
				if c.metadata {
					sameTypes(t, direct[i], rebuilt[i])
				}
				if strings.Contains(rebuilt[i], "instance=") || strings.Contains(rebuilt[i], `job="etcd"`) {
					t.Errorf("target labels leaked into the member's text")
				}
			}
			opts := Options{Cores: 2, MemoryBytes: 8 << 30, WindowSeconds: 30}
			want, err := Dumps(direct[0], direct[1], opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Dumps(rebuilt[0], rebuilt[1], opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Findings) != len(want.Findings) || got.Verdict.Summary != want.Verdict.Summary {
				t.Fatalf("verdict %q, want %q", got.Verdict.Summary, want.Verdict.Summary)
			}
			for i := range want.Findings {
				g, w := got.Findings[i], want.Findings[i]
				if g.Class != w.Class || g.Severity != w.Severity || g.Summary != w.Summary || len(g.Evidence) != len(w.Evidence) {
					t.Errorf("finding %s: %s %q, want %s %q", w.Class, g.Severity, g.Summary, w.Severity, w.Summary)
					continue
				}
				for j := range w.Evidence {
					if g.Evidence[j].Observed != w.Evidence[j].Observed {
						t.Errorf("%s: observed %q, want %q", w.Evidence[j].Signal, g.Evidence[j].Observed, w.Evidence[j].Observed)
					}
				}
			}
		})
	}
}

// sameTypes fails unless every family of want has the same type in got.
func sameTypes(t *testing.T, want, got string) {
	t.Helper()
	w, err := Parse(want)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range w.Families {
		if gf, ok := g.Families[name]; !ok || gf.GetType() != f.GetType() {
			t.Errorf("%s: type %s, want %s", name, gf.GetType(), f.GetType())
		}
	}
}

func TestPrometheusBadInput(t *testing.T) {
	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/metadata" {
			fmt.Fprint(w, `{"status":"success","data":{}}`)
			return
		}
		kind := "vector"
		if strings.HasSuffix(r.FormValue("query"), "s]") {
			kind = "matrix"
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":%q,"result":[]}}`, kind)
	}))
	defer empty.Close()
	badQuery := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"1:30: parse error: unexpected end of input"}`)
	}))
	defer badQuery.Close()
	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>login</html>", http.StatusForbidden)
	}))
	defer forbidden.Close()
	notProm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<html>hello</html>")
	}))
	defer notProm.Close()
	// A port nothing listens on, taken after the servers above hold theirs, so
	// that none of them is given it again.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()

	to := time.Now()
	from := to.Add(-time.Minute)
	for _, c := range []struct {
		p    Prometheus
		from time.Time
		want string
	}{
		{Prometheus{URL: refused}, from, "connection refused"},
		{Prometheus{URL: empty.URL, Selector: `job="nope"`}, from, `no series match {job="nope"}`},
		{Prometheus{URL: badQuery.URL, Selector: `job=`}, from, "bad_data: 1:30: parse error"},
		{Prometheus{URL: forbidden.URL}, from, "HTTP 403 Forbidden: credentials missing or refused"},
		{Prometheus{URL: notProm.URL}, from, "not a Prometheus API answer"},
		{Prometheus{URL: "prometheus:9090"}, from, "want http(s)://host:port"},
		{Prometheus{URL: empty.URL}, to.Add(time.Second), "is not after"},
	} {
		_, err := c.p.Scrapes(context.Background(), c.from, to)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
		if strings.Contains(c.want, "no series") && !errors.Is(err, ErrNoSeries) {
			t.Errorf("%v is not ErrNoSeries", err)
		}
		if strings.Contains(c.want, "403") && !errors.Is(err, ErrUnauthorized) {
			t.Errorf("%v is not ErrUnauthorized", err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q is more than one line", err)
		}
	}
}

func TestPrometheusMatchers(t *testing.T) {
	for sel, want := range map[string]string{
		``:                            `{x="1"}`,
		`job="etcd"`:                  `{x="1",job="etcd"}`,
		` {job="etcd", env=~"prod"} `: `{x="1",job="etcd", env=~"prod"}`,
	} {
		p := Prometheus{Selector: sel}
		if got := p.matchers(`x="1"`); got != want {
			t.Errorf("selector %q: %s, want %s", sel, got, want)
		}
	}
	if got := (&Prometheus{}).matchers(""); got != "" {
		t.Errorf("no matchers: %q", got)
	}
}
