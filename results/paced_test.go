package results

import "testing"

func TestPaced(t *testing.T) {
	run := &Run{Ops: []Op{
		{Op: "put", TargetRPS: 100, ThroughputRPS: 98, SentRPS: 99, Requests: 980, Errors: 2, Latency: Summary{P99: 12}},
		{Op: "range", TargetRPS: 50, ThroughputRPS: 50, SentRPS: 50, Requests: 500, Latency: Summary{P99: 30}},
		{Op: "watch", ThroughputRPS: 4000, Requests: 0, Latency: Summary{P99: 900}},
	}}
	want := Paced{TargetRPS: 150, ThroughputRPS: 148, SentRPS: 149, Requests: 1480, Errors: 2, P99Ms: 30}
	if got := run.Paced(); got != want {
		t.Errorf("Paced() = %+v, want %+v", got, want)
	}
	if got := (&Run{}).Paced(); got != (Paced{}) {
		t.Errorf("no ops: %+v", got)
	}
}
