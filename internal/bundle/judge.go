package bundle

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/analyze"
)

// srcMembers is where the members rule's threshold comes from.
const srcMembers = "etcd op-guide/failures.md (a cluster of N members tolerates (N-1)/2 failed ones: each member down spends that margin); etcdperf: a member that does not answer is an incident's first fact"

// Judge is the bundle's verdict: the analyzer's rules over the run file's two
// scrapes (as analyze --metrics grades two dumps), plus the rule on what the
// bundle saw of each member. `analyze BUNDLE` calls it too, so it reproduces the
// verdict the bundle stores.
func Judge(b *Bundle) (analyze.Result, error) {
	if b.Run == nil {
		return analyze.Result{}, fmt.Errorf("the bundle has no %s to judge", runFile)
	}
	return analyze.Run(b.Run, analyze.Options{Rules: Rules(b.Data)})
}

// Rules are the analyzer's rules and the bundle's own, on d.
func Rules(d Data) []analyze.Rule {
	rules := append([]analyze.Rule(nil), analyze.Rules...)
	if len(d.Members) == 0 {
		return rules
	}
	return append(rules, analyze.Rule{
		Class: finding.ClassHealth, Signal: "members answering their Status call (bundle)",
		Threshold: "ok all; fail a member does not answer", Source: srcMembers,
		Advice: "A member did not answer: its log says why (a stopped process, a full disk: 'no space left on device', an OOM kill in the kernel log). Until it is back or replaced the cluster tolerates one failure fewer.",
		Eval:   func(*analyze.Input, analyze.Limits) analyze.Check { return membersCheck(d) },
	})
}

// membersCheck grades the members that did not answer, and says whether those
// that did still make a quorum of the voting members.
func membersCheck(d Data) analyze.Check {
	var down []string
	voters, up := 0, 0
	for _, m := range d.Members {
		if !m.IsLearner {
			voters++
		}
		if m.Up() {
			if !m.IsLearner {
				up++
			}
			continue
		}
		name := m.Endpoint
		if m.Name != "" {
			name = m.Name + " " + m.Endpoint
		}
		down = append(down, name+": "+m.Error)
	}
	if len(down) == 0 {
		return analyze.Check{Severity: finding.OK, Observed: fmt.Sprintf("all %d members answered", len(d.Members))}
	}
	quorum := "a quorum answered"
	if up <= voters/2 {
		quorum = "no quorum answered: the cluster cannot serve writes or linearizable reads"
	}
	return analyze.Check{Severity: finding.Fail,
		Observed: fmt.Sprintf("%d of %d members did not answer (%s; %s)", len(down), len(d.Members), strings.Join(down, "; "), quorum)}
}
