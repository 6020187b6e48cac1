package analyze

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// mtext builds exposition text for tests.
type mtext struct {
	b     strings.Builder
	typed map[string]bool
}

func newText() *mtext { return &mtext{typed: map[string]bool{}} }

func (m *mtext) typ(name, t string) {
	if !m.typed[name] {
		fmt.Fprintf(&m.b, "# TYPE %s %s\n", name, t)
		m.typed[name] = true
	}
}

func (m *mtext) gauge(name string, v float64) *mtext {
	m.typ(name, "gauge")
	fmt.Fprintf(&m.b, "%s %g\n", name, v)
	return m
}

func (m *mtext) counter(name string, v float64) *mtext {
	m.typ(name, "counter")
	fmt.Fprintf(&m.b, "%s %g\n", name, v)
	return m
}

// counterL writes one labelled counter series; labels is e.g. `grpc_method="Put"`.
func (m *mtext) counterL(name, labels string, v float64) *mtext {
	m.typ(name, "counter")
	fmt.Fprintf(&m.b, "%s{%s} %g\n", name, labels, v)
	return m
}

// hist writes one histogram series; labels is e.g. `To="abc"` or "". cum are the
// cumulative counts of bounds, then +Inf gets the last.
func (m *mtext) hist(name, labels string, bounds, cum []float64, sum float64) *mtext {
	m.typ(name, "histogram")
	sep := ""
	if labels != "" {
		sep = ","
	}
	for i, b := range bounds {
		fmt.Fprintf(&m.b, "%s_bucket{%s%sle=\"%g\"} %g\n", name, labels, sep, b, cum[i])
	}
	total := cum[len(cum)-1]
	fmt.Fprintf(&m.b, "%s_bucket{%s%sle=\"+Inf\"} %g\n", name, labels, sep, total)
	lb := ""
	if labels != "" {
		lb = "{" + labels + "}"
	}
	fmt.Fprintf(&m.b, "%s_sum%s %g\n%s_count%s %g\n", name, lb, sum, name, lb, total)
	return m
}

func (m *mtext) String() string { return m.b.String() }

// diskBuckets are etcd's WAL/backend buckets: 1 ms × 2^k, 14 of them.
var diskBuckets = []float64{0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024, 2.048, 4.096, 8.192}

// cumAt returns cumulative counts for diskBuckets with n observations in the
// bucket whose upper bound is le and fast ones (≤ 1 ms) before it.
func cumAt(fast, n float64, le float64) []float64 {
	out := make([]float64, len(diskBuckets))
	for i, b := range diskBuckets {
		out[i] = fast
		if b >= le {
			out[i] += n
		}
	}
	return out
}

func mustParse(t *testing.T, text string) *Snapshot {
	t.Helper()
	s, err := Parse(text)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	return s
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFilter(t *testing.T) {
	in := `# HELP etcd_server_has_leader Whether or not a leader exists.
# TYPE etcd_server_has_leader gauge
etcd_server_has_leader 1
# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 1234
# some other comment
grpc_server_handled_total{grpc_code="OK",grpc_method="Range"} 12
grpc_server_handled_total{grpc_code="Unknown",grpc_method="Range"} 0
grpc_server_handling_seconds_bucket{le="0.005"} 0
process_resident_memory_bytes 4.2e+07
go_goroutines 42
os_fd_used 12

`
	want := `# HELP etcd_server_has_leader Whether or not a leader exists.
# TYPE etcd_server_has_leader gauge
etcd_server_has_leader 1
grpc_server_handled_total{grpc_code="OK",grpc_method="Range"} 12
grpc_server_handling_seconds_bucket{le="0.005"} 0
process_resident_memory_bytes 4.2e+07
go_goroutines 42
os_fd_used 12
`
	if got := Filter(in); got != want {
		t.Errorf("Filter:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, text string
	}{
		{"garbage", "this is not { metrics"},
		{"truncated label", `etcd_server_has_leader{a="b`},
		{"truncated value", "# TYPE etcd_server_has_leader gauge\netcd_server_has_leader "},
		{"bad value", "etcd_server_has_leader one\n"},
		{"type after samples", "etcd_x 1\n# TYPE etcd_x gauge\n"},
		{"decreasing buckets", "# TYPE etcd_h histogram\netcd_h_bucket{le=\"1\"} 5\netcd_h_bucket{le=\"2\"} 3\netcd_h_bucket{le=\"+Inf\"} 5\netcd_h_sum 1\netcd_h_count 5\n"},
		{"buckets beyond count", "# TYPE etcd_h histogram\netcd_h_bucket{le=\"1\"} 5\netcd_h_bucket{le=\"2\"} 7\netcd_h_sum 1\netcd_h_count 6\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse(tc.text); err == nil {
				t.Errorf("Parse(%q) = nil error, want one", tc.text)
			}
		})
	}
}

func TestParseNonEtcd(t *testing.T) {
	s := mustParse(t, "# TYPE node_load1 gauge\nnode_load1 0.5\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 3\n")
	if s.IsEtcd() {
		t.Error("IsEtcd() = true for node_exporter text")
	}
	_, err := Dumps("node_load1 1\n", "node_load1 2\n", Options{})
	if !errors.Is(err, ErrNotEtcd) {
		t.Errorf("Dumps(non-etcd) error = %v, want ErrNotEtcd", err)
	}
	if _, err := Dumps("garbage {", "", Options{}); err == nil || !strings.Contains(err.Error(), "before dump") {
		t.Errorf("Dumps(garbage) error = %v, want one naming the before dump", err)
	}
}

func TestFixturesParse(t *testing.T) {
	for _, tc := range []struct{ file, version string }{
		{"etcd-3.6-before.txt", "3.6.16"},
		{"etcd-3.6-after.txt", "3.6.16"},
		{"etcd-3.4-before.txt", "3.4.23"},
		{"etcd-3.4-after.txt", "3.4.23"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := mustParse(t, readFixture(t, tc.file))
			if !s.IsEtcd() {
				t.Fatal("IsEtcd() = false")
			}
			if v := s.ServerVersion(); v != tc.version {
				t.Errorf("ServerVersion() = %q, want %q", v, tc.version)
			}
			for _, m := range []string{metrics.WALFsync, metrics.BackendCommit, metrics.LeaderChanges, metrics.ProposalsFailed, metrics.DBTotal, metrics.Quota, metrics.RSS, metrics.CPUSeconds, metrics.PutTotal, metrics.GRPCReceived} {
				if _, ok := s.Families[m]; !ok {
					t.Errorf("%s missing", m)
				}
			}
		})
	}
}

func TestFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			fmt.Fprint(w, "# TYPE etcd_server_has_leader gauge\netcd_server_has_leader 1\n# TYPE node_load1 gauge\nnode_load1 3\n")
		case "/slow":
			time.Sleep(500 * time.Millisecond)
		default:
			http.Error(w, "nope", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	text, err := Fetch(ctx, srv.Client(), srv.URL+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "node_load1") || !strings.Contains(text, "etcd_server_has_leader 1") {
		t.Errorf("Fetch text not filtered: %q", text)
	}
	if _, err := Fetch(ctx, srv.Client(), srv.URL+"/missing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("Fetch 404 error = %v", err)
	}
	short := &http.Client{Timeout: 100 * time.Millisecond}
	if _, err := Fetch(ctx, short, srv.URL+"/slow"); err == nil || !strings.Contains(err.Error(), "scrape "+srv.URL) {
		t.Errorf("Fetch timeout error = %v", err)
	}
}

func TestScraper(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE etcd_mvcc_put_total counter\netcd_mvcc_put_total %d\n", n.Add(1)*10)
	}))
	defer srv.Close()
	dead := "http://127.0.0.1:1/metrics" // nothing listens on port 1
	s := NewScraper(srv.Client(), []string{srv.URL + "/metrics", dead}, 20*time.Millisecond)
	ctx := context.Background()
	s.Before(ctx)
	s.Start(ctx)
	// Until the server has answered a "during" scrape (its second request): After
	// waits for a scrape under way, so it is then among those returned. A fixed
	// sleep could end before the first tick on a loaded machine.
	for deadline := time.Now().Add(10 * time.Second); n.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	got := s.After(ctx)
	phases := map[string]int{}
	for _, sc := range got {
		if sc.URL == dead {
			if sc.Error == "" {
				t.Errorf("scrape of %s has no error", dead)
			}
			continue
		}
		if sc.Error != "" || sc.Text == "" || sc.Time == "" {
			t.Errorf("bad scrape %+v", sc)
		}
		phases[sc.Phase]++
	}
	if phases[results.PhaseBefore] != 1 || phases[results.PhaseAfter] != 1 || phases[results.PhaseDuring] < 1 {
		t.Errorf("phases = %v, want 1 before, ≥1 during, 1 after", phases)
	}
	ws, notes := windowsFromScrapes(got)
	if len(ws) != 1 || len(notes) == 0 {
		t.Fatalf("windows = %d, notes = %v; want 1 window and notes about the dead member", len(ws), notes)
	}
	if d, ok := ws[0].CounterDelta(metrics.PutTotal, nil); !ok || d <= 0 {
		t.Errorf("put delta = %v, %v", d, ok)
	}
}
