package main

// declaredOutputs are the commands that honour fewer -w values than all three:
// where a table would print what simple prints, table is refused rather than
// silently equal.
var declaredOutputs = map[string][]string{
	"etcdperf report":     {"simple", "json"}, // --format picks the rendering; -w json is --format json
	"etcdperf k8s worker": {"simple"},         // prints the child's output; its -w goes after --
}
