package bench

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

func TestRecorderIntervals(t *testing.T) {
	// A start 300 ms into a wall-clock second: intervals align to seconds, not to the start.
	t0 := time.Unix(1_700_000_000, 300_000_000)
	r := newRecorder(2, t0, 0, 16)
	go func() {
		ms := func(d int64) int64 { return d * int64(time.Millisecond) }
		r.in <- sample{done: ms(100), resp: ms(2), svc: ms(1), paced: true}                                     // second 0
		r.in <- sample{done: ms(650), resp: ms(3), svc: ms(3), kind: 1, paced: true}                            // second 0
		r.in <- sample{done: ms(800), resp: ms(4), svc: ms(2), paced: true, late: true}                         // second 1
		r.in <- sample{done: ms(2750), resp: ms(1000), svc: ms(5), code: uint8(codes.Unavailable), paced: true} // second 3
		close(r.in)
	}()
	r.run()
	op, err := r.result(0, "put", 2*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(op.Intervals) != 4 {
		t.Fatalf("intervals = %d, want 4 (seconds 0..3, the stalled second included)", len(op.Intervals))
	}
	for i, iv := range op.Intervals {
		if want := time.Unix(1_700_000_000+int64(i), 0).UTC(); !iv.Start.Equal(want) {
			t.Errorf("interval %d starts %v, want %v", i, iv.Start, want)
		}
	}
	reqs := []int64{1, 1, 0, 1}
	secs := []float64{0.7, 1, 1, 0.05}
	for i, iv := range op.Intervals {
		if iv.Requests != reqs[i] || iv.Seconds != secs[i] {
			t.Errorf("interval %d: %d requests over %gs, want %d over %gs", i, iv.Requests, iv.Seconds, reqs[i], secs[i])
		}
	}
	if op.Intervals[2].Response != "" {
		t.Error("an empty second should carry no histogram")
	}
	h, err := op.Intervals[3].Response.Decode()
	if err != nil || h.TotalCount() != 1 || h.Max() < 990_000 {
		t.Errorf("second 3 histogram: count %d max %d err %v", h.TotalCount(), h.Max(), err)
	}
	if op.Requests != 3 || op.Errors != 1 || op.ErrorsByCode["Unavailable"] != 1 || op.LateStarts != 1 {
		t.Errorf("op = %d requests, %d errors %v, %d late", op.Requests, op.Errors, op.ErrorsByCode, op.LateStarts)
	}
	if op.ThroughputRPS != 1 { // 2 successes in 2 s
		t.Errorf("throughput = %g, want 1", op.ThroughputRPS)
	}
	if r.pacedReq != 4 || r.paced != 3 || r.lastDone != int64(2750*time.Millisecond) {
		t.Errorf("paced %d/%d, last %v", r.paced, r.pacedReq, time.Duration(r.lastDone))
	}
}

// TestRecorderPadsToStop: seconds between the last completion and the stop (every
// request hung) still get their empty intervals.
func TestRecorderPadsToStop(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 300_000_000)
	r := newRecorder(1, t0, 0, 16)
	r.padTo = int64(3500 * time.Millisecond) // second 3
	go func() {
		r.in <- sample{done: int64(100 * time.Millisecond), resp: 1000, svc: 1000, paced: true}
		close(r.in)
	}()
	r.run()
	op, err := r.result(0, "put", 3500*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(op.Intervals) != 4 || op.Intervals[0].Requests != 1 || op.Intervals[3].Requests != 0 ||
		!op.Intervals[3].Start.Equal(time.Unix(1_700_000_003, 0)) {
		t.Errorf("intervals %+v, want seconds 0..3 with the request in the first", op.Intervals)
	}
}

// BenchmarkRecorderAdd is the recorder's cost per sample: four histogram
// records, counters, and a second closed and encoded every 10,000 samples.
func BenchmarkRecorderAdd(b *testing.B) {
	r := newRecorder(1, time.Unix(1_700_000_000, 0), 0, 1)
	b.ReportAllocs()
	for i := range b.N {
		done, resp := int64(i)*100_000, 1500_000+int64(i%1000)*1000
		r.add(sample{start: done - resp, done: done, resp: resp, svc: 1200_000, paced: true})
	}
}

// BenchmarkRecorderAddMembers is BenchmarkRecorderAdd with every sample's
// endpoint known, spread over 3: two histogram records and a wait span more.
func BenchmarkRecorderAddMembers(b *testing.B) {
	r := newRecorder(1, time.Unix(1_700_000_000, 0), 0, 1)
	b.ReportAllocs()
	for i := range b.N {
		done, resp := int64(i)*100_000, 1500_000+int64(i%1000)*1000
		r.add(sample{start: done - resp, done: done, resp: resp, svc: 1200_000, ep: uint8(i%3 + 1), paced: true})
	}
}

// BenchmarkRecorderBusy is BenchmarkRecorderAddMembers as a busy closed loop
// makes it (make compare: 100 clients, 20,000 puts a second): an answer every
// 50 µs, each to a request that waited 5 ms, across the answers to a hundred
// others, so every request looks inside its wait for a longer span.
func BenchmarkRecorderBusy(b *testing.B) {
	r := newRecorder(1, time.Unix(1_700_000_000, 0), 0, 1)
	b.ReportAllocs()
	for i := range b.N {
		done := int64(i) * 50_000
		r.add(sample{start: done - 5_000_000, done: done, resp: 5_000_000, svc: 5_000_000, ep: uint8(i%3 + 1), paced: true})
	}
}

// TestRecorderCoverage: the first and last seconds are partial, and seconds of
// the window before the first completion still get (empty) intervals.
func TestRecorderCoverage(t *testing.T) {
	// The load starts 300 ms into a second; warm-up ends 500 ms later, at .8.
	t0 := time.Unix(1_700_000_000, 300_000_000)
	r := newRecorder(1, t0, 500*time.Millisecond, 16)
	r.padTo = int64(3450 * time.Millisecond) // stopped at second 3 + .75
	go func() {
		// The first completion comes in second 2 (a server slow to answer).
		r.in <- sample{done: int64(2 * time.Second), resp: 1000, svc: 1000, paced: true}
		close(r.in)
	}()
	r.run()
	op, err := r.result(0, "put", 3*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantSec := []float64{0.2, 1, 1, 0.75}
	wantReq := []int64{0, 0, 1, 0}
	if len(op.Intervals) != len(wantSec) {
		t.Fatalf("%d intervals %+v, want seconds 0..3 of the window, the empty ones before the first completion too", len(op.Intervals), op.Intervals)
	}
	for i, iv := range op.Intervals {
		if iv.Seconds != wantSec[i] || iv.Requests != wantReq[i] || !iv.Start.Equal(time.Unix(1_700_000_000+int64(i), 0)) {
			t.Errorf("interval %d: %v covers %gs with %d requests, want %gs and %d", i, iv.Start, iv.Seconds, iv.Requests, wantSec[i], wantReq[i])
		}
	}
}

// TestRecorderExactAndOverRange: the exact figures count successful requests
// only, from their service times; latencies past 60 s are counted.
func TestRecorderExactAndOverRange(t *testing.T) {
	r := newRecorder(1, time.Unix(1_700_000_000, 0), 0, 16)
	ms := func(d float64) int64 { return int64(d * float64(time.Millisecond)) }
	go func() {
		// A true 499.98 ms: its histogram bucket reads above 500 ms.
		r.in <- sample{done: ms(600), resp: ms(499.98), svc: ms(499.98), paced: true}
		r.in <- sample{done: ms(700), resp: ms(100), svc: ms(100), paced: true}
		// An error: not in etcdctl's figures, however slow.
		r.in <- sample{done: ms(800), resp: ms(900), svc: ms(900), code: uint8(codes.Unavailable), paced: true}
		// A response after 70 s, and one charged unsent after 61 s.
		r.in <- sample{done: ms(900), resp: ms(70_000), svc: ms(1), paced: true, code: uint8(codes.DeadlineExceeded)}
		r.in <- sample{done: ms(950), resp: ms(61_000), paced: true, unsent: true}
		close(r.in)
	}()
	r.run()
	op, err := r.result(0, "put", time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := op.ServiceOK
	if m == nil || m.Count != 2 || m.MaxNs != ms(499.98) || m.MaxMs() != 499.98 {
		t.Fatalf("exact service figures %+v, want 2 successes with max 499.98 ms", m)
	}
	// Population stddev of {499.98, 100}: half their difference.
	if got, want := m.StddevMs(), (499.98-100)/2; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("stddev %g ms, want %g", got, want)
	}
	if op.Service.Max <= 500 {
		t.Logf("histogram max %g ms (the test's premise is a histogram above 500 ms)", op.Service.Max)
	}
	if op.OverMaxLatency != 2 || op.Unsent != 1 || op.Requests != 4 {
		t.Errorf("over 60 s %d, unsent %d, requests %d; want 2, 1, 4", op.OverMaxLatency, op.Unsent, op.Requests)
	}
	if h, _ := op.ResponseHist.Decode(); h.TotalCount() != 5 {
		t.Errorf("response histogram holds %d, want 5 (the unsent one too)", h.TotalCount())
	}
	if h, _ := op.ServiceHist.Decode(); h.TotalCount() != 4 {
		t.Errorf("service histogram holds %d, want 4 (an unsent request has no service time)", h.TotalCount())
	}
}

// TestRecorderStall: the longest span in which a request waited and no answer
// came, from the measured window's start on; a failure that is the client giving
// up (Unavailable, DeadlineExceeded) is no answer, and a request cut short by the
// stop still waited.
func TestRecorderStall(t *testing.T) {
	ms := func(d int64) int64 { return d * int64(time.Millisecond) }
	ok, unavail := uint8(codes.OK), uint8(codes.Unavailable)
	cases := []struct {
		name     string
		samples  []sample
		offset   float64 // s from the window's start (1 s into the run)
		wantSecs float64
	}{
		{"steady replies", []sample{
			{start: ms(1000), done: ms(1010)}, {start: ms(1005), done: ms(1020)}, {start: ms(1015), done: ms(1030)},
		}, 0, 0.01},
		{"a 2 s stall: the first reply after it ends it", []sample{
			{start: ms(1000), done: ms(1010)},
			{start: ms(1100), done: ms(3100)}, {start: ms(1200), done: ms(3101)}, {start: ms(3102), done: ms(3103)},
		}, 0.1, 2},
		{"the wait counts from the last reply, not from each send", []sample{
			{start: ms(1000), done: ms(1500)}, {start: ms(1100), done: ms(2300)},
		}, 0.5, 0.8},
		{"Unavailable after the wait is no answer", []sample{
			{start: ms(1000), done: ms(1010)},
			{start: ms(1020), done: ms(4000), code: unavail}, {start: ms(1030), done: ms(5010)},
		}, 0.02, 3.99},
		// A member resumed after a stop answers a late send first: that
		// answer ends the stall of the requests waiting since before it.
		{"a late send answered first after a stall", []sample{
			{start: ms(1000), done: ms(1010)},
			{start: ms(1700), done: ms(1750)}, {start: ms(1020), done: ms(1751)}, {start: ms(1030), done: ms(1752)},
		}, 0.02, 0.73},
		{"cut by the stop", []sample{
			{start: ms(1000), done: ms(1010)}, {start: ms(1500), done: ms(4500), cut: true},
		}, 0.5, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Unix(1_700_000_000, 0)
			r := newRecorder(1, t0, time.Second, 16)
			go func() {
				for _, s := range tc.samples {
					s.paced, s.resp, s.svc = true, s.done-s.start, s.done-s.start
					if s.code == 0 {
						s.code = ok
					}
					r.in <- s
				}
				close(r.in)
			}()
			r.run()
			st := r.stall()
			if st == nil {
				t.Fatal("no stall measured")
			}
			if st.Seconds != tc.wantSecs || st.OffsetS != tc.offset {
				t.Errorf("stall %gs at +%gs, want %gs at +%gs", st.Seconds, st.OffsetS, tc.wantSecs, tc.offset)
			}
			if want := t0.Add(time.Second + time.Duration(tc.offset*float64(time.Second))).UTC(); !st.At.Equal(want) {
				t.Errorf("at %v, want %v", st.At, want)
			}
		})
	}
	if st := newRecorder(1, time.Now(), 0, 1).stall(); st != nil {
		t.Errorf("no request: stall %+v, want nil", st)
	}
}
