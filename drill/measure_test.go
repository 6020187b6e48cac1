package drill

import (
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

func interval(t *testing.T, start time.Time, n, errs int64, us int64) results.Interval {
	t.Helper()
	h := results.NewHist()
	for range n {
		_ = h.RecordValue(us)
	}
	enc, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return results.Interval{Start: start, Requests: n, Errors: errs, Response: enc}
}

func TestClientOver(t *testing.T) {
	t0 := time.Unix(1000, 0)
	op := results.Op{Intervals: []results.Interval{
		interval(t, t0, 100, 0, 1000),
		interval(t, t0.Add(time.Second), 100, 2, 500_000),
		interval(t, t0.Add(2*time.Second), 100, 0, 2000),
	}}
	ops := []results.Op{op}
	for _, tc := range []struct {
		name      string
		from, to  time.Duration
		req, errs int64
		p99Ms     float64
		tolerance float64
	}{
		{"whole", 0, 3 * time.Second, 300, 2, 500, 1},
		{"first second by its middle", 0, 1200 * time.Millisecond, 100, 0, 1, 0.01},
		{"a sub-second phase takes the second it overlaps", 1200 * time.Millisecond, 1400 * time.Millisecond, 100, 2, 500, 1},
		{"adjacent phases do not share seconds", 1400 * time.Millisecond, 3 * time.Second, 200, 2, 500, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := clientOver(ops, t0.Add(tc.from), t0.Add(tc.to))
			if err != nil {
				t.Fatal(err)
			}
			if c.Requests != tc.req || c.Errors != tc.errs {
				t.Fatalf("requests/errors = %d/%d, want %d/%d", c.Requests, c.Errors, tc.req, tc.errs)
			}
			if d := c.P99Ms - tc.p99Ms; d > tc.tolerance || d < -tc.tolerance {
				t.Fatalf("p99 = %g ms, want %g", c.P99Ms, tc.p99Ms)
			}
		})
	}
}

const metricsA = `# TYPE etcd_server_leader_changes_seen_total counter
etcd_server_leader_changes_seen_total 1
# TYPE etcd_server_heartbeat_send_failures_total counter
etcd_server_heartbeat_send_failures_total 3
# TYPE etcd_network_peer_sent_bytes_total counter
etcd_network_peer_sent_bytes_total{To="2"} 1000
etcd_network_peer_sent_bytes_total{To="3"} 1000
`

const metricsB = `# TYPE etcd_server_leader_changes_seen_total counter
etcd_server_leader_changes_seen_total 2
# TYPE etcd_server_heartbeat_send_failures_total counter
etcd_server_heartbeat_send_failures_total 5
# TYPE etcd_network_peer_sent_bytes_total counter
etcd_network_peer_sent_bytes_total{To="2"} 3000
etcd_network_peer_sent_bytes_total{To="3"} 1000
etcd_network_peer_sent_bytes_total{To="9"} 8000
# TYPE etcd_network_snapshot_send_total_duration_seconds histogram
etcd_network_snapshot_send_total_duration_seconds_bucket{To="9",le="1"} 1
etcd_network_snapshot_send_total_duration_seconds_bucket{To="9",le="+Inf"} 1
etcd_network_snapshot_send_total_duration_seconds_sum{To="9"} 0.25
etcd_network_snapshot_send_total_duration_seconds_count{To="9"} 1
`

// restarted is a member whose counters started again from zero.
const restarted = `# TYPE etcd_server_leader_changes_seen_total counter
etcd_server_leader_changes_seen_total 1
`

func parse(t *testing.T, text string) *analyze.Snapshot {
	t.Helper()
	s, err := analyze.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFillServer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := scrapes{at: t0, by: map[string]*analyze.Snapshot{"1": parse(t, metricsA), "2": parse(t, metricsB)}}
	b := scrapes{at: t0.Add(2 * time.Second), by: map[string]*analyze.Snapshot{"1": parse(t, metricsB), "2": parse(t, restarted), "9": parse(t, restarted)}}
	var p Phase
	fillServer(&p, a, b, "1")
	// Member 1 saw one change, member 2 restarted and saw one since; member 9 was not
	// scraped at the start, so it is left out.
	if p.LeaderChanges == nil || *p.LeaderChanges != 1 {
		t.Fatalf("leader changes = %v", p.LeaderChanges)
	}
	if p.HeartbeatSendFailures == nil || *p.HeartbeatSendFailures != 2 {
		t.Fatalf("heartbeat failures = %v", p.HeartbeatSendFailures)
	}
	// (3000+1000+8000) - 2000 bytes over 2 s.
	if p.LeaderPeerBytesPerS == nil || *p.LeaderPeerBytesPerS != 5000 {
		t.Fatalf("leader peer bytes/s = %v", p.LeaderPeerBytesPerS)
	}
	if d, ok := analyze.Between(a.by["1"], b.by["1"]).CounterDelta(metrics.PeerSentBytes, analyze.Labels{"To": "9"}); !ok || d != 8000 {
		t.Fatalf("bytes to a new peer = %v %v", d, ok)
	}
	if h, ok := b.by["1"].Histogram(metrics.SnapSendSeconds, analyze.Labels{"To": "9"}); !ok || h.Count != 1 || h.Sum != 0.25 {
		t.Fatalf("snapshot send = %v %v %v", h.Sum, h.Count, ok)
	}
	var q Phase
	fillServer(&q, scrapes{by: map[string]*analyze.Snapshot{}}, b, "1")
	if q.LeaderChanges != nil || q.LeaderPeerBytesPerS != nil {
		t.Fatal("figures without a scrape at the start must be unknown, not zero")
	}
}
