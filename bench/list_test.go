package bench

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/results"
)

// TestListPages lists 1,234 objects in pages of 500: 3 pages per LIST, every
// object read once per LIST, and the server counts one range per page.
func TestListPages(t *testing.T) {
	c, clis := startEtcd(t, 1)
	url := c.Members()[0].ClientURL + "/metrics"
	for _, exact := range []bool{false, true} {
		w, err := NewList(clis, ListConfig{Prefix: DefaultPrefix, KeySize: 6, ValSize: 100, Keys: 1234, PageSize: DefaultPageSize, Consistency: "l", Exact: exact})
		if err != nil {
			t.Fatal(err)
		}
		var run results.Run
		cfg := Config{Workers: 2, Total: 20, Prefix: DefaultPrefix, KV: clis[0]}
		// The prefix check is one range and the revision of an exact list another.
		ranges := serverCounter(t, url, "etcd_mvcc_range_total")
		if err := Run(context.Background(), cfg, w, &run); err != nil {
			t.Fatal(err)
		}
		ranges = serverCounter(t, url, "etcd_mvcc_range_total") - ranges
		list, page := run.Ops[0], run.Ops[1]
		if list.Requests != 20 || list.Errors != 0 || page.Requests != 60 || page.Errors != 0 {
			t.Fatalf("exact %v: %d lists (%d errors), %d pages (%d errors); want 20 and 60", exact, list.Requests, list.Errors, page.Requests, page.Errors)
		}
		if list.KeysReceived != 20*1234 || list.BytesReceived != 20*1234*int64(len(DefaultPrefix)+6+100) {
			t.Errorf("exact %v: %d keys, %d bytes read", exact, list.KeysReceived, list.BytesReceived)
		}
		want := float64(1 + 60)
		if exact {
			want++
		}
		if ranges != want {
			t.Errorf("exact %v: server ranged %g times, want %g", exact, ranges, want)
		}
		if page.Latency.P50 <= 0 || list.Latency.P50 < page.Latency.P50 {
			t.Errorf("exact %v: list p50 %g, page p50 %g", exact, list.Latency.P50, page.Latency.P50)
		}
	}
}

// TestCompaction compacts every 200 ms beside a put load: the server counts a
// physical compaction per reported one, and the history before the last is gone.
func TestCompaction(t *testing.T) {
	c, clis := startEtcd(t, 1)
	url := c.Members()[0].ClientURL + "/metrics"
	const runs = "etcd_debugging_mvcc_db_compaction_total_duration_milliseconds_count"
	before := serverCounter(t, url, runs)
	w := WithCompaction(newPut(t, clis, false), clis[0], 200*time.Millisecond)
	var run results.Run
	cfg := Config{Workers: 2, Rate: 200, Duration: 1500 * time.Millisecond, Prefix: DefaultPrefix, KV: clis[0]}
	if err := Run(context.Background(), cfg, w, &run); err != nil {
		t.Fatal(err)
	}
	compact := run.Ops[1]
	if compact.Op != "compact" || compact.Requests < 2 || compact.Errors != 0 {
		t.Fatalf("compact op %s: %d compactions, %d errors", compact.Op, compact.Requests, compact.Errors)
	}
	if d := serverCounter(t, url, runs) - before; d != float64(compact.Requests) {
		t.Errorf("server ran %g compactions, %d reported", d, compact.Requests)
	}
	if _, err := clis[0].Get(context.Background(), "x", clientv3.WithRev(1)); err == nil {
		t.Errorf("revision 1 is still readable after the compactions")
	}
}
