package inspect

import (
	"fmt"
	"math"
	"time"

	"go.etcd.io/etcd/server/v3/storage"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Thresholds, each with its source. The ones marked "heuristic" are etcdperf's own
// judgement where no published number exists; the source string says so.
const (
	// rangeWarnKeys: 20 pages of the 500-item pages Kubernetes lists in (client-go pager).
	rangeWarnKeys  = 10_000
	rangeWarnBytes = 64 << 20
	// rangeFailBytes: the largest gRPC message etcd sends (v3rpc maxSendBytes =
	// math.MaxInt32); an unpaginated list of more cannot succeed at all.
	rangeFailBytes = math.MaxInt32
	// Fragmentation and quota are graded as the analyzer grades them from /metrics
	// (analyze.FragLimits, analyze.QuotaLimits).
	// historyWarnBytes: compaction would free at least this much and half of in-use
	// (heuristic, on the mixin's 100 MiB floor).
	historyWarnBytes = 100 << 20
	// raftLogWarnBytes: the raft log kept in memory should stay under 1/8 of the
	// 8 GB the hardware guide calls typical memory (heuristic).
	raftLogWarnBytes = 1 << 30
	// growthWarnDays/growthFailDays: time left before the quota (heuristic).
	growthWarnDays = 30
	growthFailDays = 7
)

const (
	srcRequestLimit = "etcd --max-request-bytes (default 1.5 MiB); https://etcd.io/docs/v3.6/dev-guide/limit/"
	srcRange        = "heuristic: 20 Kubernetes list pages of 500 (client-go tools/pager) or 64 MiB; 2 GiB = etcd's gRPC max send size (v3rpc maxSendBytes)"
	srcMaxDB        = "etcd storage.MaxQuotaBytes: 8 GiB suggested maximum (https://etcd.io/docs/v3.6/dev-guide/limit/)"
	srcHistory      = "heuristic: ≥ 100 MiB (mixin fragmentation floor) and ≥ 50% of in-use; https://etcd.io/docs/v3.6/op-guide/maintenance/#history-compaction-v3-api-key-value-database"
	srcTuning       = "https://etcd.io/docs/v3.6/tuning/#time-parameters"
	srcSnapshot     = "heuristic: 1/8 of the 8 GB typical memory (https://etcd.io/docs/v3.6/op-guide/hardware/); https://etcd.io/docs/v3.6/tuning/#snapshots"
	srcGrowth       = "heuristic: a week (fail) or a month (warn) to react"
)

// Rules are the signals inspect grades, with their thresholds and sources,
// written from the constants above: docs/verdict.md lists them beside the
// analyzer's (report's TestDocsRuleTable generates both tables).
var Rules = []analyze.Rule{
	{Class: finding.ClassValueSize, Signal: "largest key+value (inspect)",
		Threshold: "ok < 2/3 of --max-request-bytes; warn ≥ 2/3; fail ≥ --max-request-bytes", Source: srcRequestLimit},
	{Class: finding.ClassRangeSize, Signal: "keys and bytes of one prefix, listed unpaginated (inspect)",
		Threshold: fmt.Sprintf("ok < %d keys and < %s; warn ≥ %d keys or ≥ %s; fail ≥ %s",
			rangeWarnKeys, units.Bytes(rangeWarnBytes), rangeWarnKeys, units.Bytes(rangeWarnBytes), units.Bytes(rangeFailBytes)), Source: srcRange},
	{Class: finding.ClassHealth, Signal: "compaction would free (inspect)",
		Threshold: fmt.Sprintf("ok < %s or < 50%% of in-use; warn otherwise", units.Bytes(historyWarnBytes)), Source: srcHistory},
	{Class: finding.ClassHealth, Signal: "db in-use / size (inspect)", Threshold: analyze.FragLimits.Text(), Source: analyze.FragSource},
	{Class: finding.ClassHealth, Signal: "db size / quota (inspect)", Threshold: analyze.QuotaLimits.Text(), Source: analyze.QuotaSource},
	{Class: finding.ClassHealth, Signal: "quota (inspect)", Threshold: "ok ≤ " + units.Bytes(storage.MaxQuotaBytes) + "; warn above", Source: srcMaxDB},
	{Class: finding.ClassHealth, Signal: "db size, the snapshot a new member receives (inspect)", Threshold: "ok ≤ " + units.Bytes(storage.MaxQuotaBytes) + "; warn above", Source: srcMaxDB},
	{Class: finding.ClassHealth, Signal: "days until the quota (inspect, against a previous inspection)",
		Threshold: fmt.Sprintf("ok > %d days; warn ≤ %d; fail ≤ %d", growthWarnDays, growthWarnDays, growthFailDays), Source: srcGrowth},
	{Class: finding.ClassNetwork, Signal: "election timeout / peer RTT p99 (inspect)", Threshold: "ok ≥ 10× RTT; fail below", Source: srcTuning},
	{Class: finding.ClassNetwork, Signal: "heartbeat / peer RTT p99 (inspect)", Threshold: "ok ≥ 0.5× RTT; warn below", Source: srcTuning},
	{Class: finding.ClassNetwork, Signal: "election timeout / WAL fsync p99 (inspect)", Threshold: "ok ≥ 10× WAL fsync p99; warn below", Source: srcTuning},
	{Class: finding.ClassMemory, Signal: "raft log in memory, snapshot-count × average key+value (inspect)",
		Threshold: "ok < " + units.Bytes(raftLogWarnBytes) + "; warn ≥ " + units.Bytes(raftLogWarnBytes), Source: srcSnapshot},
}

func findings(r *Result, o Options) []finding.Finding {
	fs := []finding.Finding{valueSizeFinding(r, o), rangeSizeFinding(r), historyFinding(r), fragmentationFinding(r),
		quotaFinding(r), recoveryFinding(r)}
	if r.Growth != nil {
		fs = append(fs, growthFinding(r))
	}
	fs = append(fs, timingFinding(r), raftLogFinding(r))
	if f, ok := versionFinding(r.ServerVersion); ok {
		fs = append(fs, f)
	}
	return fs
}

func valueSizeFinding(r *Result, o Options) finding.Finding {
	near, limit := o.nearLimit(), o.MaxRequestBytes
	f := finding.Finding{Class: finding.ClassValueSize, Severity: finding.OK}
	var largest int64
	if len(r.Largest) > 0 {
		largest = r.Largest[0].Size()
	}
	ev := finding.Evidence{Signal: "largest key+value", Observed: units.Bytes(largest), Threshold: "< " + units.Bytes(near) + " (2/3 of the " + units.Bytes(limit) + " request limit)",
		Source: srcRequestLimit, Severity: finding.OK}
	if len(r.Largest) > 0 {
		ev.Observed += " (" + r.Largest[0].Key + ")"
	}
	switch {
	case largest >= limit:
		ev.Severity = finding.Fail
	case largest >= near:
		ev.Severity = finding.Warn
	}
	f.Severity = ev.Severity
	f.Evidence = append(f.Evidence, ev,
		finding.Evidence{Signal: "keys near the request limit", Observed: fmt.Sprint(len(r.NearLimit)), Threshold: "0", Source: srcRequestLimit, Severity: ev.Severity},
		finding.Evidence{Signal: "value size p99", Observed: units.Bytes(r.ValueSize.P99), Threshold: "informational", Source: "HdrHistogram of value sizes", Severity: finding.OK})
	switch f.Severity {
	case finding.OK:
		f.Summary = fmt.Sprintf("values are small enough: largest key+value %s, p99 value %s", units.Bytes(largest), units.Bytes(r.ValueSize.P99))
	default:
		f.Summary = fmt.Sprintf("%d key(s) near or over the %s request limit; largest key+value %s", len(r.NearLimit), units.Bytes(limit), units.Bytes(largest))
		f.Advice = "large values are written to the WAL and sent to every follower, and kept in the raft log in memory: split them, " +
			"compress them, or store them elsewhere and keep a reference in etcd; an update that grows past the limit will be rejected"
	}
	if !r.Values.Exact {
		f.Summary += " (among sampled values)"
	}
	return f
}

func rangeSizeFinding(r *Result) finding.Finding {
	f := finding.Finding{Class: finding.ClassRangeSize, Severity: finding.OK}
	offending := 0
	for _, p := range r.Prefixes {
		bytes := p.KeyBytes + p.ValueBytes
		sev := finding.OK
		switch {
		case bytes >= rangeFailBytes:
			sev = finding.Fail
		case p.Keys >= rangeWarnKeys || bytes >= rangeWarnBytes:
			sev = finding.Warn
		}
		if sev == finding.OK {
			continue
		}
		offending++
		if sev == finding.Fail || f.Severity == finding.OK {
			f.Severity = sev
		}
		if len(f.Evidence) < 5 {
			f.Evidence = append(f.Evidence, finding.Evidence{Signal: "unpaginated list of " + QuoteKey(p.Prefix),
				Observed: fmt.Sprintf("%d keys, %s", p.Keys, units.Bytes(bytes)), Threshold: fmt.Sprintf("< %d keys and < %s (fail ≥ %s)", rangeWarnKeys, units.Bytes(rangeWarnBytes), units.Bytes(rangeFailBytes)),
				Source: srcRange, Severity: sev})
		}
	}
	if f.Severity == finding.OK {
		f.Summary = fmt.Sprintf("no prefix (depth %d) is too large to list in one range", r.Depth)
		if len(r.Prefixes) > 0 {
			p := r.Prefixes[0]
			f.Evidence = append(f.Evidence, finding.Evidence{Signal: "largest prefix " + QuoteKey(p.Prefix), Observed: fmt.Sprintf("%d keys, %s", p.Keys, units.Bytes(p.KeyBytes+p.ValueBytes)),
				Threshold: fmt.Sprintf("< %d keys and < %s", rangeWarnKeys, units.Bytes(rangeWarnBytes)), Source: srcRange, Severity: finding.OK})
		}
		return f
	}
	f.Summary = fmt.Sprintf("%d prefix(es) return a very large response when listed whole", offending)
	f.Advice = "list these prefixes with a limit and continue from the last key (pagination), or keys-only/count-only when values are not needed; " +
		"one unpaginated range of this size holds the whole response in the member's memory and delays other requests"
	return f
}

func historyFinding(r *Result) finding.Finding {
	h := r.History
	f := finding.Finding{Class: finding.ClassHealth, Severity: finding.OK}
	ev := finding.Evidence{Signal: "compaction would free", Observed: units.Bytes(h.CompactionFreesBytes),
		Threshold: fmt.Sprintf("< %s or < 50%% of in-use", units.Bytes(historyWarnBytes)), Source: srcHistory, Severity: finding.OK}
	if h.CompactionFreesBytes >= historyWarnBytes && r.DB.InUseBytes > 0 && float64(h.CompactionFreesBytes) >= 0.5*float64(r.DB.InUseBytes) {
		ev.Severity = finding.Warn
	}
	if !h.Exact || r.Source == "live" {
		ev.Observed = "≈ " + ev.Observed
	}
	f.Severity = ev.Severity
	f.Evidence = []finding.Evidence{ev,
		{Signal: "revisions since compaction", Observed: fmt.Sprintf("%d (compacted at %d, now %d)", h.RevisionsSinceCompaction, h.CompactRevision, h.CurrentRevision),
			Threshold: "informational", Source: h.Basis, Severity: finding.OK},
		{Signal: "old revisions of live keys", Observed: fmt.Sprintf("%d in %d keys, deepest %d (%s)", h.OldRevisions, h.KeysWithHistory, h.MaxDepth, QuoteKey(h.MaxDepthKey)),
			Threshold: "informational", Source: h.Basis, Severity: finding.OK}}
	f.Summary = fmt.Sprintf("history since the last compaction: %d old revisions, %d deleted keys; compacting now would free %s", h.OldRevisions, h.DeletedKeys, ev.Observed)
	if f.Severity == finding.Warn {
		f.Advice = "compact (etcdctl compact <revision>) or set --auto-compaction-retention, then defragment one member at a time to return the space to the disk"
	}
	return f
}

func fragmentationFinding(r *Result) finding.Finding {
	db := r.DB
	f := finding.Finding{Class: finding.ClassHealth, Severity: finding.OK}
	ev := finding.Evidence{Signal: "db in-use / size", Observed: fmt.Sprintf("%.2f (%s of %s)", db.InUseRatio, units.Bytes(db.InUseBytes), units.Bytes(db.SizeBytes)),
		Threshold: analyze.FragLimits.Text(), Source: analyze.FragSource, Severity: finding.OK}
	if db.InUseBytes > analyze.FragMinInUse {
		ev.Severity = analyze.FragLimits.Grade(db.InUseRatio)
	}
	f.Severity, f.Evidence = ev.Severity, []finding.Evidence{ev}
	f.Summary = fmt.Sprintf("db %s, %s in use (%.0f%% free space inside the file)", units.Bytes(db.SizeBytes), units.Bytes(db.InUseBytes), 100*(1-db.InUseRatio))
	if f.Severity == finding.Warn {
		f.Advice = "defragment (etcdctl defrag --endpoints=<one member>), one member at a time: it blocks that member while it runs; the quota counts the file size, not the in-use part"
	}
	return f
}

func quotaFinding(r *Result) finding.Finding {
	db := r.DB
	f := finding.Finding{Class: finding.ClassHealth, Severity: finding.OK}
	ev := finding.Evidence{Signal: "db size / quota", Observed: fmt.Sprintf("%.1f%% (%s of %s, quota from %s)", 100*db.QuotaUsed, units.Bytes(db.SizeBytes), units.Bytes(db.QuotaBytes), db.QuotaSource),
		Threshold: analyze.QuotaLimits.Text(), Source: analyze.QuotaSource, Severity: analyze.QuotaLimits.Grade(db.QuotaUsed)}
	f.Severity, f.Evidence = ev.Severity, []finding.Evidence{ev}
	if db.QuotaBytes > storage.MaxQuotaBytes {
		f.Evidence = append(f.Evidence, finding.Evidence{Signal: "quota", Observed: units.Bytes(db.QuotaBytes), Threshold: "≤ " + units.Bytes(storage.MaxQuotaBytes), Source: srcMaxDB, Severity: finding.Warn})
		if f.Severity == finding.OK {
			f.Severity = finding.Warn
		}
	}
	f.Summary = fmt.Sprintf("db uses %.1f%% of its %s quota", 100*db.QuotaUsed, units.Bytes(db.QuotaBytes))
	if f.Severity != finding.OK {
		f.Advice = "at the quota etcd raises a NOSPACE alarm and refuses writes: compact, defragment, delete unneeded keys, or raise --quota-backend-bytes (keep it ≤ 8 GiB)"
	}
	return f
}

func recoveryFinding(r *Result) finding.Finding {
	rc := r.Recovery
	f := finding.Finding{Class: finding.ClassHealth, Severity: finding.OK}
	ev := finding.Evidence{Signal: "db size (snapshot a new member receives)", Observed: fmt.Sprintf("%s ≈ %s at %.0f MB/s", units.Bytes(r.DB.SizeBytes), units.Seconds(rc.Seconds), min(rc.DiskMBps, rc.NetMBps)),
		Threshold: "≤ " + units.Bytes(storage.MaxQuotaBytes), Source: srcMaxDB, Severity: finding.OK}
	if r.DB.SizeBytes > storage.MaxQuotaBytes {
		ev.Severity = finding.Warn
	}
	f.Severity, f.Evidence = ev.Severity, []finding.Evidence{ev}
	f.Summary = fmt.Sprintf("a new member or learner needs ≈ %s to receive and write the %s snapshot", units.Seconds(rc.Seconds), units.Bytes(r.DB.SizeBytes))
	if f.Severity == finding.Warn {
		f.Advice = "recovery time grows with the data: keep the db under 8 GiB (compact, defragment, move bulk data elsewhere)"
	}
	return f
}

func growthFinding(r *Result) finding.Finding {
	g := r.Growth
	f := finding.Finding{Class: finding.ClassHealth, Severity: finding.OK}
	obs := fmt.Sprintf("%s/day since %s", units.Bytes(int64(g.BytesPerDay)), g.PreviousAt.Format(time.RFC3339))
	ev := finding.Evidence{Signal: "days until the quota", Observed: "not growing (" + obs + ")", Threshold: fmt.Sprintf("> %d days (fail ≤ %d)", growthWarnDays, growthFailDays), Source: srcGrowth, Severity: finding.OK}
	if g.DaysToQuota != nil {
		ev.Observed = fmt.Sprintf("%.1f days (%s)", *g.DaysToQuota, obs)
		switch {
		case *g.DaysToQuota <= growthFailDays:
			ev.Severity = finding.Fail
		case *g.DaysToQuota <= growthWarnDays:
			ev.Severity = finding.Warn
		}
	}
	f.Severity, f.Evidence = ev.Severity, []finding.Evidence{ev}
	f.Summary = "db growth: " + ev.Observed
	if f.Severity != finding.OK {
		f.Advice = "find the prefix that grows (compare the prefixes of both inspections), compact more often, or raise the quota before the NOSPACE alarm"
	}
	return f
}

// timingFinding compares heartbeat and election timeout with the peer round trip
// and the WAL fsync, as the tuning guide asks: heartbeat about 0.5–1.5× RTT, election
// timeout at least 10× RTT; slow disks delay heartbeats too.
func timingFinding(r *Result) finding.Finding {
	t := r.Tuning
	f := finding.Finding{Class: finding.ClassNetwork, Severity: finding.OK}
	if t.PeerRTTP99Ms == nil {
		f.Severity = finding.Unknown
		f.Summary = "peer round trip unknown (one member, or no /metrics): heartbeat and election timeout not graded"
		f.Evidence = []finding.Evidence{{Signal: metrics.PeerRTT + " p99", Observed: "absent", Threshold: "election timeout ≥ 10× RTT", Source: srcTuning, Severity: finding.Unknown}}
	} else {
		rtt := *t.PeerRTTP99Ms
		ev := finding.Evidence{Signal: "election timeout / peer RTT p99", Observed: units.Duration(t.ElectionMs/1000) + " / " + units.Duration(rtt/1000), Threshold: "≥ 10× RTT", Source: srcTuning, Severity: finding.OK}
		if t.ElectionMs < 10*rtt {
			ev.Severity = finding.Fail
		}
		hb := finding.Evidence{Signal: "heartbeat / peer RTT p99", Observed: units.Duration(t.HeartbeatMs/1000) + " / " + units.Duration(rtt/1000), Threshold: "≥ 0.5× RTT", Source: srcTuning, Severity: finding.OK}
		if t.HeartbeatMs < 0.5*rtt {
			hb.Severity = finding.Warn
		}
		f.Evidence = []finding.Evidence{ev, hb}
		f.Severity = finding.Worst(ev.Severity, hb.Severity)
		f.Summary = fmt.Sprintf("heartbeat %s and election timeout %s against a peer RTT p99 of %s", units.Duration(t.HeartbeatMs/1000), units.Duration(t.ElectionMs/1000), units.Duration(rtt/1000))
	}
	if t.WALFsyncP99Ms != nil {
		ev := finding.Evidence{Signal: "election timeout / WAL fsync p99", Observed: units.Duration(t.ElectionMs/1000) + " / " + units.Duration(*t.WALFsyncP99Ms/1000), Threshold: "≥ 10× WAL fsync p99", Source: srcTuning, Severity: finding.OK}
		if t.ElectionMs < 10**t.WALFsyncP99Ms {
			ev.Severity = finding.Warn
		}
		f.Evidence = append(f.Evidence, ev)
		if f.Severity != finding.Unknown {
			f.Severity = finding.Worst(f.Severity, ev.Severity)
		}
	}
	if f.Severity == finding.Warn || f.Severity == finding.Fail {
		f.Advice = "set --heartbeat-interval near the peer round trip (0.5–1.5×) and --election-timeout to at least 10× the round trip and well above the WAL fsync p99, the same on every member"
	}
	return f
}

func raftLogFinding(r *Result) finding.Finding {
	t := r.Tuning
	ev := finding.Evidence{Signal: "raft log in memory (snapshot-count × average key+value)", Observed: fmt.Sprintf("≈ %s (%d × %s)", units.Bytes(t.RaftLogBytes), t.SnapshotCount, units.Bytes(avgEntry(r))),
		Threshold: "< " + units.Bytes(raftLogWarnBytes), Source: srcSnapshot, Severity: finding.OK}
	if t.RaftLogBytes >= raftLogWarnBytes {
		ev.Severity = finding.Warn
	}
	f := finding.Finding{Class: finding.ClassMemory, Severity: ev.Severity, Evidence: []finding.Evidence{ev},
		Summary: fmt.Sprintf("with --snapshot-count %d the raft log may hold ≈ %s in memory", t.SnapshotCount, units.Bytes(t.RaftLogBytes))}
	if f.Severity == finding.Warn {
		f.Advice = "lower --snapshot-count, or shrink the values: the in-memory raft log scales with both"
	}
	return f
}

func avgEntry(r *Result) int64 {
	if r.Total.Keys == 0 {
		return 0
	}
	return (r.Total.KeyBytes + r.Total.ValueBytes) / r.Total.Keys
}

// QuoteKey shows a key or prefix readably, whatever bytes it holds.
func QuoteKey(k string) string { return fmt.Sprintf("%q", k) }
