package profiles_test

import (
	"fmt"

	"github.com/etcdperf/etcdperf/profiles"
)

// A tool loads a built-in profile by name (or a user's YAML file by path) and
// reads the offered load it describes; Build turns it into a bench workload.
func ExampleLoad() {
	e, err := profiles.Load("write-heavy")
	if err != nil {
		fmt.Println(err)
		return
	}
	p := e.Profile
	fmt.Printf("%s v%d: %g req/s from %d clients for %s\n", p.Name, p.Version, p.Rate, p.Clients, p.Duration)
	for _, op := range p.Ops {
		fmt.Printf("%s %g%%\n", op.Op, op.Ratio*100)
	}
	// Output:
	// write-heavy v1: 1000 req/s from 50 clients for 30s
	// put 90%
	// range 10%
}
