package bundle

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
)

// srcMembers is where the members rule's threshold comes from.
const srcMembers = "etcd op-guide/failures.md (a cluster of N members tolerates (N-1)/2 failed ones: each member down spends that margin); etcdperf: a member that does not answer is an incident's first fact"

// srcDataDirs is where the data dirs rule's grades come from.
const srcDataDirs = "Raft's Log Matching property (Ongaro and Ousterhout 2014, §5.3: entries with the same index and term are the same; committed entries are never replaced); etcd wal: a torn last record is normal after a crash, a CRC mismatch is corruption"

// Judge is the bundle's verdict: the analyzer's rules over the run file's two
// scrapes (as analyze --metrics grades two dumps), plus the rule on what the
// bundle saw of each member. `analyze BUNDLE` calls it too, so it reproduces the
// verdict the bundle stores.
func Judge(b *Bundle) (analyze.Result, error) {
	if b.Run == nil {
		return analyze.Result{}, fmt.Errorf("the bundle has no %s to judge", runFile)
	}
	rep, err := analyze.Run(b.Run, analyze.Options{Rules: Rules(b.Data)})
	if b.Data.Offline != nil {
		// Data dirs hold no latencies and no scrapes: no budget to show, nor a note saying so.
		rep.Budget, rep.Notes = nil, nil
	}
	return rep, err
}

// Rules are the analyzer's rules and the bundle's own, on d.
func Rules(d Data) []analyze.Rule {
	if d.Offline != nil {
		// Data dirs have no /metrics: the analyzer's rules would all read unknown.
		return []analyze.Rule{{
			Class: finding.ClassHealth, Signal: "data dirs read whole, their WALs agreeing where they overlap (bundle --data-dir)",
			Threshold: "ok all; warn a WAL ends in a torn record or conflicts past a commit index; fail a part unreadable, a CRC mismatch, or a conflict both members committed",
			Source:    srcDataDirs,
			Advice:    "Restore from the data dir the bundle names (etcdutl snapshot restore of its member/snap/db with --skip-hash-check, or --force-new-cluster on it); keep copies of every data dir first.",
			Eval:      func(*analyze.Input, analyze.Limits) analyze.Observation { return dataDirsCheck(d.Offline) },
		}}
	}
	rules := append([]analyze.Rule(nil), analyze.Rules...)
	if len(d.Members) == 0 {
		return rules
	}
	return append(rules, analyze.Rule{
		Class: finding.ClassHealth, Signal: "members answering their Status call (bundle)",
		Threshold: "ok all; fail a member does not answer", Source: srcMembers,
		Advice: "A member did not answer: its log says why (a stopped process, a full disk: 'no space left on device', an OOM kill in the kernel log). Until it is back or replaced the cluster tolerates one failure fewer.",
		Eval:   func(*analyze.Input, analyze.Limits) analyze.Observation { return membersCheck(d) },
	})
}

// membersCheck grades the members that did not answer, and says whether those
// that did still make a quorum of the voting members.
func membersCheck(d Data) analyze.Observation {
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
		return analyze.Observation{Severity: finding.OK, Observed: fmt.Sprintf("all %d members answered", len(d.Members))}
	}
	quorum := "a quorum answered"
	if up <= voters/2 {
		quorum = "no quorum answered: the cluster cannot serve writes or linearizable reads"
	}
	return analyze.Observation{Severity: finding.Fail,
		Observed: fmt.Sprintf("%d of %d members did not answer (%s; %s)", len(down), len(d.Members), strings.Join(down, "; "), quorum)}
}

// dataDirsCheck grades what could be read of the data dirs.
func dataDirsCheck(o *Offline) analyze.Observation {
	sev := finding.OK
	var said []string
	for _, d := range o.Dirs {
		for _, e := range d.Errors {
			sev = finding.Fail
			said = append(said, d.Path+": "+e)
		}
		if d.WAL == nil || d.WAL.Error == "" {
			continue
		}
		s := finding.Warn
		if strings.Contains(d.WAL.Error, "CRC") {
			s = finding.Fail
		}
		sev = finding.Worst(sev, s)
		said = append(said, fmt.Sprintf("%s: WAL read up to index %d, then %s", d.Path, d.WAL.LastIndex, d.WAL.Error))
	}
	for _, g := range o.Agree {
		if g.Agree {
			continue
		}
		s := finding.Warn
		if g.Committed {
			s = finding.Fail
		}
		sev = finding.Worst(sev, s)
		said = append(said, strings.Join(g.Dirs, " and ")+": "+g.Note)
	}
	if len(said) == 0 {
		return analyze.Observation{Severity: finding.OK, Observed: fmt.Sprintf("%d data dir(s) read whole; WALs agree where they overlap", len(o.Dirs))}
	}
	return analyze.Observation{Severity: sev, Observed: strings.Join(said, "; ")}
}
