package results_test

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/results"
)

// A run file is read with Decode (or ReadFile): every op's figures and the
// verdict of the command that wrote it, without knowing which command that was.
func ExampleDecode() {
	file := `{
	  "version": 2,
	  "command": "bench put",
	  "valid": true,
	  "duration_s": 30,
	  "ops": [{"op": "put", "requests": 30000, "errors": 0, "throughput_rps": 1000, "target_rps": 1000,
	           "latency_ms": {"p50": 1.2, "p99": 4.8}}],
	  "diagnosis": {"verdict": {"status": "pass", "bottleneck": "none", "summary": "kept up"}}
	}`
	run, err := results.Decode(strings.NewReader(file))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, op := range run.Ops {
		fmt.Printf("%s: %d requests, p99 %.1f ms\n", op.Op, op.Requests, op.Latency.P99)
	}
	if d := run.Diagnosis; d != nil && d.Verdict != nil {
		fmt.Println(d.Verdict.Status, d.Verdict.Bottleneck)
	}
	// Output:
	// put: 30000 requests, p99 4.8 ms
	// pass none
}
