package bench

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// TestRecorderMembers: requests are split by the endpoint that carried them,
// each with its own histograms and its own longest wait, while the op and the
// run keep the whole; requests of no known endpoint are the op's only.
func TestRecorderMembers(t *testing.T) {
	ms := func(d int64) int64 { return d * int64(time.Millisecond) }
	r := newRecorder(1, time.Unix(1_700_000_000, 0), 0, 64)
	go func() {
		// Endpoints 0 and 1 answer in 2 ms every 100 ms; endpoint 2 takes one
		// request at 100 ms and answers it 1.5 s later, the other two going on.
		for at := int64(100); at <= 2000; at += 100 {
			r.in <- sample{start: ms(at - 2), done: ms(at), resp: ms(2), svc: ms(2), ep: 1, paced: true}
			r.in <- sample{start: ms(at - 2), done: ms(at) + 1, resp: ms(2), svc: ms(2), ep: 2, paced: true}
		}
		r.in <- sample{start: ms(100), done: ms(1600), resp: ms(1500), svc: ms(1500), ep: 3, paced: true}
		r.in <- sample{start: ms(1700), done: ms(1800), resp: ms(100), svc: ms(100), ep: 3, code: uint8(codes.Unavailable), paced: true}
		r.in <- sample{start: ms(1900), done: ms(1901), resp: ms(1), svc: ms(1), paced: true} // endpoint not known
		close(r.in)
	}()
	r.run()
	eps := []string{"a:2379", "b:2379", "c:2379"}
	op, err := r.result(0, "put", 2*time.Second, eps)
	if err != nil {
		t.Fatal(err)
	}
	if op.Requests != 43 {
		t.Errorf("op requests %d, want 43 (every endpoint's and the unknown one)", op.Requests)
	}
	if len(op.Members) != 3 {
		t.Fatalf("members %+v, want 3", op.Members)
	}
	want := []struct {
		requests, errors int64
		p99              float64 // ms
	}{{20, 0, 2}, {20, 0, 2}, {2, 1, 1500}}
	for i, m := range op.Members {
		w := want[i]
		if m.Endpoint != eps[i] || m.Requests != w.requests || m.Errors != w.errors {
			t.Errorf("member %d: %s %d requests %d errors, want %s %d %d", i, m.Endpoint, m.Requests, m.Errors, eps[i], w.requests, w.errors)
		}
		h, err := m.ResponseHist.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(h.ValueAtQuantile(99)) / 1000; got < w.p99*0.99 || got > w.p99*1.01 || m.Latency.P99 != got {
			t.Errorf("member %d: p99 %g ms (summary %g), want %g", i, got, m.Latency.P99, w.p99)
		}
	}
	loads := r.endpointLoads(eps)
	if len(loads) != 3 {
		t.Fatalf("endpoint loads %+v, want 3", loads)
	}
	for i, l := range loads {
		if l.Endpoint != eps[i] || l.Stall == nil {
			t.Fatalf("endpoint %d: %+v, want %s with a stall", i, l, eps[i])
		}
	}
	if s := loads[2].Stall; s.Seconds != 1.5 || s.OffsetS != 0.1 {
		t.Errorf("endpoint 2 stall %+v, want 1.5 s from 0.1 s", s)
	}
	if s := loads[0].Stall; s.Seconds > 0.01 {
		t.Errorf("endpoint 0 stall %+v, want none past its 2 ms requests", s)
	}
	// The other endpoints answered all along: the run's own stall is short.
	if s := r.stall(); s.Seconds > 0.1 {
		t.Errorf("run stall %+v, want the 2 ms requests' waits", s)
	}
}
