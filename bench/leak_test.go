package bench

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// TestNoGoroutineLeft runs every workload to its end, watched ones included,
// and checks the goroutines it started are gone (TestCancelMidRun does the same
// for interrupted runs).
func TestNoGoroutineLeft(t *testing.T) {
	c, clis := startEtcd(t, 2)
	openConnections(t, c, clis)
	for _, tc := range []struct {
		name string
		rate float64
		w    func() (Workload, error)
	}{
		{"put", 0, func() (Workload, error) {
			return NewPut(clis, PutConfig{Prefix: DefaultPrefix, KeySize: 8, ValSize: 64, KeySpace: 100})
		}},
		{"range", 500, func() (Workload, error) {
			return NewRange(clis, RangeConfig{Prefix: DefaultPrefix, KeySize: 8, ValSize: 64, Keys: 300, Width: 10, Consistency: "l"})
		}},
		{"watch", 300, func() (Workload, error) {
			return NewWatch(clis, WatchConfig{Prefix: DefaultPrefix, KeySize: 4, ValSize: 16, Watchers: 50, Streams: 4, WatchedKeys: 5})
		}},
		{"mixed with watchers", 0, func() (Workload, error) {
			return NewMixed(clis, MixedConfig{Prefix: DefaultPrefix, KeySize: 8, ValSize: 16, KeySpace: 200, ReadRatio: 0.5,
				Width: 1, Consistency: "s", Watchers: 20, Streams: 2, WatchedKeys: 10})
		}},
		{"txn watched", 0, func() (Workload, error) {
			return NewTxn(clis, TxnConfig{Prefix: DefaultPrefix, KeySize: 4, ValSize: 16, KeySpace: 20, Ops: 1, CreateRatio: 0.2, DeleteRatio: 0.2, Watchers: 4, Streams: 2})
		}},
		{"lease with keep-alive streams", 0, func() (Workload, error) {
			return NewLease(clis, LeaseConfig{Prefix: DefaultPrefix, ValSize: 16, TTL: 5 * time.Second, KeysPerLease: 1, KeepAlives: 2})
		}},
		{"list compacted", 0, func() (Workload, error) {
			l, err := NewList(clis, ListConfig{Prefix: DefaultPrefix, KeySize: 4, ValSize: 16, Keys: 100, PageSize: 30})
			return WithCompaction(l, clis[0], 10*time.Millisecond), err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			w, err := tc.w()
			if err != nil {
				t.Fatal(err)
			}
			var run results.Run
			cfg := Config{Workers: 8, Rate: tc.rate, Total: 300, Prefix: DefaultPrefix, KV: clis[0]}
			if err := Run(context.Background(), cfg, w, &run); err != nil {
				t.Fatal(err)
			}
			if len(run.Ops) == 0 || run.Ops[0].Requests == 0 {
				t.Errorf("ops %+v", run.Ops)
			}
			settleGoroutines(t, before)
		})
	}
}
