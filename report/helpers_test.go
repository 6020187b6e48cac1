package report

import (
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// sampleRun is a one-op run of 1000 puts from 0.1 to 100 ms.
func sampleRun(t testing.TB) *results.Run {
	h := results.NewHist()
	for i := int64(1); i <= 1000; i++ {
		if err := h.RecordValue(i * 100); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return &results.Run{
		Version: results.Version, Command: "bench put", StartedAt: time.Unix(1700000000, 0).UTC(),
		Valid: true, DurationS: 10,
		Ops: []results.Op{{Op: "put", Requests: 1000, Latency: results.Summarize(h), ResponseHist: enc, ServiceHist: enc}},
	}
}
