package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/drill"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// ReplaceDrill is the outcome of drill replace-member as Output: its JSON is the
// drill's report, Simple the summary with the phase table, Table the phases alone.
type ReplaceDrill drill.ReplaceResult

// RestartDrill is the outcome of drill rolling-restart as Output.
type RestartDrill drill.RestartResult

// DrillOutput is the Output of the drill whose load run is, from its section
// of the run file, with that section's JSON; nil when run is no drill's.
func DrillOutput(run *results.Run) (Output, json.RawMessage, error) {
	rep, restart := &drill.ReplaceResult{}, &drill.RestartResult{}
	for _, sec := range []results.Section{rep, restart} {
		ok, err := run.Section(sec)
		if err != nil {
			return nil, nil, fmt.Errorf("drill report: %w", err)
		}
		if !ok {
			continue
		}
		raw := run.Sections[sec.SectionName()]
		if sec == results.Section(rep) {
			return (*ReplaceDrill)(rep), raw, nil
		}
		return (*RestartDrill)(restart), raw, nil
	}
	return nil, nil, nil
}

func fmtOpt[T int64 | float64](v *T, format string) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprintf(format, *v)
}

// fmtSecs renders seconds that may be unknown ("?") as units.Duration does.
func fmtSecs(v *float64) string {
	if v == nil {
		return "?"
	}
	return units.Duration(*v)
}

// writePhases is the per-phase table both drills print.
func writePhases(w io.Writer, ps []drill.Phase) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "PHASE\tMEMBER\tDURATION\tREQUESTS\tERRORS\tP50\tP99\tMAX\tLEADER CHANGES\tHEARTBEAT FAILURES\tLEADER PEER TX\tNOTE")
	for _, p := range ps {
		tx := "?"
		if p.LeaderPeerBytesPerS != nil {
			tx = fmt.Sprintf("%.1f MB/s", *p.LeaderPeerBytesPerS/1e6)
		}
		note := p.Note
		if p.UnavailableS != nil {
			note = strings.TrimSpace("member down " + units.Duration(*p.UnavailableS) + " " + note)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Member, units.Duration(p.DurationS),
			p.Client.Requests, p.Client.Errors, Ms(p.Client.P50Ms), Ms(p.Client.P99Ms), Ms(p.Client.MaxMs),
			fmtOpt(p.LeaderChanges, "%d"), fmtOpt(p.HeartbeatSendFailures, "%d"), tx, note)
	}
	return tw.Flush()
}

// Table writes one row per phase: duration, client requests, errors and
// percentiles, leader changes, heartbeat send failures and the leader's peer traffic.
func (r *ReplaceDrill) Table(w io.Writer) error { return writePhases(w, r.Phases) }

// Simple writes the drill's summary for people: the phase table, the snapshot,
// the catch-up against inspect's prediction, client p99 and the verification.
func (r *ReplaceDrill) Simple(w io.Writer) error {
	added := "nothing"
	if r.Added != nil {
		added = r.Added.Name
	}
	fmt.Fprintf(w, "replace-member (%s): removed %s, added %s\n", r.Mode, r.Removed.Name, added)
	if len(r.Settings) > 0 {
		var kv []string
		for _, k := range []string{"snapshot-count", "snapshot-catchup-entries"} {
			if v, ok := r.Settings[k]; ok {
				kv = append(kv, "--"+k+"="+v)
			}
		}
		fmt.Fprintf(w, "embedded cluster: %s\n", strings.Join(kv, " "))
	}
	if err := writePhases(w, r.Phases); err != nil {
		return err
	}
	sn := r.Snapshot
	if sn.Sent {
		fmt.Fprintf(w, "snapshot: %.1f MB sent by the leader in %s (%s MB/s), %d failed send(s); new member received it in %s, saved the db in %s (fsync %s)\n",
			float64(sn.Bytes)/1e6, fmtSecs(sn.SendS), fmtOpt(sn.TransferMBps, "%.0f"), sn.Failures, fmtSecs(sn.ReceiveS), fmtSecs(sn.DBSaveS), fmtSecs(sn.DBFsyncS))
	} else if sn.Note != "" {
		fmt.Fprintf(w, "snapshot: %s\n", sn.Note)
	}
	fmt.Fprintf(w, "catch-up: %s measured (new member started → in sync with the leader); inspect predicts %s for the %.1f MB db (%s)",
		fmtSecs(r.CatchUpS), units.Duration(r.PredictedS), float64(r.DBSizeBytes)/1e6, r.Prediction.Basis)
	if x := r.MeasuredOverPredicted; x != nil {
		fmt.Fprintf(w, ": measured is %.2f× the prediction", *x)
	}
	fmt.Fprintln(w)
	if r.PromoteS != nil {
		fmt.Fprintf(w, "promotion: %s after the start, %d MemberPromote attempt(s)\n", fmtSecs(r.PromoteS), r.PromoteAttempts)
	}
	if r.Added != nil {
		fmt.Fprintf(w, "serving clients: %s after the start (a new member serves clients once it has published itself through raft)\n", fmtSecs(r.ReadyS))
	}
	fmt.Fprintf(w, "client p99: before %s, during %s, after %s; %d error(s); %d leader change(s), %d heartbeat send failure(s)\n",
		Ms(r.Client.P99BeforeMs), Ms(r.Client.P99DuringMs), Ms(r.Client.P99AfterMs), r.Client.Errors, r.LeaderChanges, r.HeartbeatSendFailures)
	if r.Exposure.Why != "" {
		fmt.Fprintf(w, "exposure: %s %s\n", units.Duration(r.Exposure.Seconds), r.Exposure.Why)
	}
	writeVerify(w, r.Verify)
	if r.Restored != "" {
		fmt.Fprintf(w, "restored: %s\n", r.Restored)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "error: %s\n", r.Error)
	}
	writeRunFile(w, r.RunFile)
	return nil
}

// Table writes one row per phase, a restart phase per member.
func (r *RestartDrill) Table(w io.Writer) error { return writePhases(w, r.Phases) }

// Simple writes the drill's summary for people: the phase table, each restart and
// the verification.
func (r *RestartDrill) Simple(w io.Writer) error {
	fmt.Fprintln(w, "rolling-restart")
	if err := writePhases(w, r.Phases); err != nil {
		return err
	}
	for _, x := range r.Restarts {
		role := "follower"
		if x.WasLeader {
			role = "leader"
		}
		fmt.Fprintf(w, "restart %s (%s): unavailable %s, %s leader change(s), client p99 %s, %d error(s)\n",
			x.Member, role, fmtSecs(x.UnavailableS), fmtOpt(x.LeaderChanges, "%d"), Ms(x.P99Ms), x.Errors)
	}
	fmt.Fprintf(w, "client p99: before %s, during %s, after %s; %d error(s); %d leader change(s), %d heartbeat send failure(s)\n",
		Ms(r.Client.P99BeforeMs), Ms(r.Client.P99DuringMs), Ms(r.Client.P99AfterMs), r.Client.Errors, r.LeaderChanges, r.HeartbeatSendFailures)
	writeVerify(w, r.Verify)
	if r.Error != "" {
		fmt.Fprintf(w, "error: %s\n", r.Error)
	}
	writeRunFile(w, r.RunFile)
	return nil
}

func writeVerify(w io.Writer, v *drill.Verification) {
	if v == nil {
		return
	}
	verdict := "hashes differ"
	if v.Match {
		verdict = "equal on every member"
	}
	fmt.Fprintf(w, "verify: %d voting member(s), %d learner(s); HashKV at revision %d %s %v", v.Voters, v.Learners, v.Revision, verdict, v.Hashes)
	if v.Error != "" {
		fmt.Fprintf(w, " (%s)", v.Error)
	}
	fmt.Fprintln(w)
}

func writeRunFile(w io.Writer, path string) {
	if path != "" {
		fmt.Fprintf(w, "run file: %s\n", path)
	}
}

// DrillSpans are the phases as the drill's timeline shades them: a restart
// phase named with its member.
func DrillSpans(ps []drill.Phase) []Span {
	spans := make([]Span, len(ps))
	for i, p := range ps {
		spans[i] = Span{Name: strings.TrimSpace(p.Name + " " + p.Member), Start: p.Start, End: p.End}
	}
	return spans
}
