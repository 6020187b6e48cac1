package bench

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/results"
)

// fakeKV answers the prefix check and the cleanup without a server.
type fakeKV struct{ clientv3.KV }

func (fakeKV) Get(context.Context, string, ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	return &clientv3.GetResponse{}, nil
}

func (fakeKV) Delete(context.Context, string, ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	return &clientv3.DeleteResponse{}, nil
}

// fakeWorkload runs op in every worker.
type fakeWorkload struct{ op Op }

func (f fakeWorkload) Ops() []OpKind { return []OpKind{{Name: "fake", Share: 1}} }
func (f fakeWorkload) Worker(int) Op { return f.op }

// TestLateStarts paces 20 requests 5 ms apart to one worker whose requests take
// at least 20 ms: request i cannot start before 20·i ms, 15·i ms after its due
// time. Only lower bounds are asserted, which a slow machine can only exceed.
func TestLateStarts(t *testing.T) {
	slow := func(context.Context, uint64) Outcome { time.Sleep(20 * time.Millisecond); return Outcome{} }
	var run results.Run
	cfg := Config{Workers: 1, Rate: 200, Total: 20, Prefix: DefaultPrefix, KV: fakeKV{}}
	if err := Run(context.Background(), cfg, fakeWorkload{slow}, &run); err != nil {
		t.Fatal(err)
	}
	op := run.Ops[0]
	if op.Requests != 20 || op.LateStarts < 19 {
		t.Errorf("%d requests, %d late starts; want 20 and at least 19", op.Requests, op.LateStarts)
	}
	// The last request is due at 95 ms and cannot end before 400 ms.
	if op.Latency.Max < 300 {
		t.Errorf("max response time %g ms: must count from the intended start", op.Latency.Max)
	}
	if op.Service.Max >= op.Latency.Max || op.Service.P50 < 20 {
		t.Errorf("service %+v vs response %+v", op.Service, op.Latency)
	}
	// 20 requests in at least 400 ms is at most 50/s of a 200/s target.
	if run.Valid || run.InvalidReason == "" {
		t.Errorf("valid %v (%q): a generator that cannot keep the rate makes an invalid run", run.Valid, run.InvalidReason)
	}
}

// TestOnTimeStarts paces a fast op slowly: with one request every 20 ms, a start
// would need a 2 ms scheduling delay to count as late; allow a few.
func TestOnTimeStarts(t *testing.T) {
	fast := func(context.Context, uint64) Outcome { return Outcome{} }
	var run results.Run
	cfg := Config{Workers: 2, Rate: 50, Total: 25, Prefix: DefaultPrefix, KV: fakeKV{}}
	if err := Run(context.Background(), cfg, fakeWorkload{fast}, &run); err != nil {
		t.Fatal(err)
	}
	if op := run.Ops[0]; op.Requests != 25 || op.LateStarts > 5 {
		t.Errorf("%d requests, %d late starts", op.Requests, op.LateStarts)
	}
}

// BenchmarkEngineClosedLoop is the generator's own cost per request: the loop,
// two clock reads and the hand-off to the recorder, around an op that does nothing.
func BenchmarkEngineClosedLoop(b *testing.B) {
	nop := func(context.Context, uint64) Outcome { return Outcome{} }
	cfg := Config{Workers: 16, Total: uint64(b.N), Prefix: DefaultPrefix, KV: fakeKV{}}
	b.ReportAllocs()
	b.ResetTimer()
	var run results.Run
	if err := Run(context.Background(), cfg, fakeWorkload{nop}, &run); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEngineOpenLoop adds the dispatcher: at a rate no run reaches it never
// sleeps, so this is the cost of handing out a ticket.
func BenchmarkEngineOpenLoop(b *testing.B) {
	nop := func(context.Context, uint64) Outcome { return Outcome{} }
	cfg := Config{Workers: 16, Rate: 1e12, Total: uint64(b.N), Prefix: DefaultPrefix, KV: fakeKV{}}
	b.ReportAllocs()
	b.ResetTimer()
	var run results.Run
	if err := Run(context.Background(), cfg, fakeWorkload{nop}, &run); err != nil {
		b.Fatal(err)
	}
}
