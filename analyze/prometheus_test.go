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

	dto "github.com/prometheus/client_model/go"
)

// asStored turns a member's /metrics text into the series Prometheus stores for it:
// one sample per series, histograms as _bucket/_sum/_count, with target labels.
func asStored(t *testing.T, text, instance string) []promSample {
	t.Helper()
	s, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var out []promSample
	add := func(name string, labels []*dto.LabelPair, v float64, extra ...string) {
		m := map[string]string{"__name__": name, "instance": instance, "job": "etcd"}
		for _, l := range labels {
			m[l.GetName()] = l.GetValue()
		}
		for i := 0; i < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		out = append(out, promSample{Metric: m, Value: promPoint{t: 1.8e9, v: v}})
	}
	for name, f := range s.Families {
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
	return out
}

// TestExpositionRoundTrip: the text rebuilt from what Prometheus stores grades
// exactly as the member's own /metrics, for etcd 3.6 and 3.4.
func TestExpositionRoundTrip(t *testing.T) {
	for _, v := range []string{"3.6", "3.4"} {
		t.Run(v, func(t *testing.T) {
			var direct, rebuilt [2]string
			for i, phase := range []string{"before", "after"} {
				b, err := os.ReadFile(fmt.Sprintf("testdata/etcd-%s-%s.txt", v, phase))
				if err != nil {
					t.Fatal(err)
				}
				direct[i] = Filter(string(b))
				text, err := exposition(asStored(t, direct[i], "10.0.0.1:2379"))
				if err != nil {
					t.Fatal(err)
				}
				rebuilt[i] = Filter(text)
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

func TestPrometheusBadInput(t *testing.T) {
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()

	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer empty.Close()
	badQuery := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"1:30: parse error: unexpected end of input"}`)
	}))
	defer badQuery.Close()
	notProm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>login</html>", http.StatusForbidden)
	}))
	defer notProm.Close()

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
		{Prometheus{URL: notProm.URL}, from, "HTTP 403 Forbidden, not a Prometheus API answer"},
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
