package results

import (
	"testing"
	"time"
)

// TestMergeMembers: a merge keeps every endpoint's part of an op and every
// endpoint's stall, PINGs and read rounds, summed bucket by bucket, the longest
// stall kept.
func TestMergeMembers(t *testing.T) {
	hist := func(us ...int64) Hist {
		h := NewHist()
		for _, v := range us {
			_ = h.RecordValue(v)
		}
		x, err := EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	at := time.Unix(1_800_000_000, 0).UTC()
	run := func(worker string, slowB int64, stallB float64, pingB int64) *Run {
		return &Run{
			Command: "bench put", Flags: map[string]string{"worker-index": worker}, Valid: true,
			StartedAt: at, EndedAt: at.Add(10 * time.Second),
			Ops: []Op{{Op: "put", Requests: 4, ResponseHist: hist(1000, 1000, 1000, slowB), ServiceHist: hist(1000, 1000, 1000, slowB),
				Members: []MemberOp{
					{Endpoint: "a", Requests: 3, ResponseHist: hist(1000, 1000, 1000), ServiceHist: hist(1000, 1000, 1000)},
					{Endpoint: "b", Requests: 1, Errors: 1, ResponseHist: hist(slowB), ServiceHist: hist(slowB)},
				}}},
			EndpointLoads: []EndpointLoad{
				{Endpoint: "a", Stall: &Stall{At: at, Seconds: 0.002}, Pings: 2, PingHist: hist(100, 100)},
				{Endpoint: "b", Stall: &Stall{At: at, Seconds: stallB}, Pings: 1, PingsUnanswered: 1, PingHist: hist(pingB),
					ReadRounds: 1, ReadRoundsUnanswered: 1, ReadRoundHist: hist(2 * pingB)},
			},
		}
	}
	m, err := Merge([]*Run{run("0", 300_000, 1.2, 5_000), run("1", 500_000, 2.5, 9_000)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms := m.Ops[0].Members
	if len(ms) != 2 || ms[0].Endpoint != "a" || ms[1].Endpoint != "b" {
		t.Fatalf("members %+v, want a and b", ms)
	}
	if ms[0].Requests != 6 || ms[1].Requests != 2 || ms[1].Errors != 2 {
		t.Errorf("members' counts %d, %d (%d errors), want 6, 2 (2)", ms[0].Requests, ms[1].Requests, ms[1].Errors)
	}
	h, err := ms[1].ResponseHist.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 2 || h.Max() < 499_000 || ms[1].Latency.Max < 499 || ms[1].Service.P50 < 299 {
		t.Errorf("b's merged histogram: %d values, max %d µs, summary %+v; want 2 up to 500 ms", h.TotalCount(), h.Max(), ms[1].Latency)
	}
	eb := m.FindEndpoint("b")
	if eb == nil || eb.Stall.Seconds != 2.5 || eb.Pings != 2 || eb.PingsUnanswered != 2 || eb.PingMs == nil || eb.PingMs.Max < 8.9 {
		t.Errorf("endpoint b merged %+v, want the 2.5 s stall and 2 pings up to 9 ms", eb)
	}
	if eb.ReadRounds != 2 || eb.ReadRoundsUnanswered != 2 || eb.ReadRoundMs == nil || eb.ReadRoundMs.Max < 17.9 {
		t.Errorf("endpoint b merged %+v, want 2 read rounds up to 18 ms", eb)
	}
	if ea := m.FindEndpoint("a"); ea == nil || ea.Pings != 4 || ea.PingMs.P50 != 0.1 || ea.ReadRoundMs != nil {
		t.Errorf("endpoint a merged %+v, want 4 pings of 0.1 ms and no read round", ea)
	}
}
