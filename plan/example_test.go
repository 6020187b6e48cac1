package plan_test

import (
	"fmt"

	"github.com/etcdperf/etcdperf/plan"
)

// Search finds the knee of a step function: the largest scale (a rate, a
// cluster size) whose step holds. Here a step holds up to 3,000 req/s, as a
// cluster whose p99 stays under the SLO until then would; plan's rate search
// runs a bench step at each scale and judges it with Judge against the SLO.
func ExampleSearch() {
	slo, err := plan.ParseSLO("p99=25ms")
	if err != nil {
		fmt.Println(err)
		return
	}
	step := func(rate int) (bool, error) { return rate <= 3000, nil }
	good, bad, err := plan.Search(500, 20000, 6, 0.05, step)
	fmt.Printf("%s: holds at %d req/s, breaks at %d (%v)\n", plan.SLOText(slo), good, bad, err)
	// Output:
	// p99 ≤ 25.0ms: holds at 3000 req/s, breaks at 3125 (<nil>)
}
