package bench

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

func TestRecorderIntervals(t *testing.T) {
	// A start 300 ms into a wall-clock second: intervals align to seconds, not to the start.
	t0 := time.Unix(1_700_000_000, 300_000_000)
	r := newRecorder(2, t0, 16)
	go func() {
		ms := func(d int64) int64 { return d * int64(time.Millisecond) }
		r.in <- sample{done: ms(100), resp: ms(2), svc: ms(1), paced: true}                                     // second 0
		r.in <- sample{done: ms(650), resp: ms(3), svc: ms(3), kind: 1, paced: true}                            // second 0
		r.in <- sample{done: ms(800), resp: ms(4), svc: ms(2), paced: true, late: true}                         // second 1
		r.in <- sample{done: ms(2750), resp: ms(1000), svc: ms(5), code: uint8(codes.Unavailable), paced: true} // second 3
		close(r.in)
	}()
	r.run()
	op, err := r.result(0, "put", 2*time.Second)
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
	for i, iv := range op.Intervals {
		if iv.Requests != reqs[i] {
			t.Errorf("interval %d requests = %d, want %d", i, iv.Requests, reqs[i])
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
	r := newRecorder(1, t0, 16)
	r.padTo = int64(3500 * time.Millisecond) // second 3
	go func() {
		r.in <- sample{done: int64(100 * time.Millisecond), resp: 1000, svc: 1000, paced: true}
		close(r.in)
	}()
	r.run()
	op, err := r.result(0, "put", 3500*time.Millisecond)
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
	r := newRecorder(1, time.Unix(1_700_000_000, 0), 1)
	b.ReportAllocs()
	for i := range b.N {
		r.add(sample{done: int64(i) * 100_000, resp: 1500_000 + int64(i%1000)*1000, svc: 1200_000, paced: true})
	}
}
