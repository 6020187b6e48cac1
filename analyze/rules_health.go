package analyze

import (
	"fmt"

	"github.com/etcdperf/etcdperf/units"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/metrics"
)

// hasLeaderRule fails when any scrape of the member saw no leader.
func hasLeaderRule(in *Input, _ Limits) Check {
	if in.W == nil || len(in.W.Snaps) == 0 {
		return unknown("no /metrics scrape of the member")
	}
	seen, without := 0, 0
	for _, s := range in.W.Snaps {
		v, ok := s.Value(metrics.HasLeader, nil)
		if !ok {
			continue
		}
		seen++
		if v == 0 {
			without++
		}
	}
	if seen == 0 {
		return unknown("%s absent", metrics.HasLeader)
	}
	if without > 0 {
		return Check{Severity: finding.Fail, Observed: fmt.Sprintf("no leader in %d of %d scrapes", without, seen)}
	}
	return Check{Severity: finding.OK, Observed: fmt.Sprintf("leader present in all %d scrapes", seen)}
}

func quotaRule(in *Input, lim Limits) Check {
	if in.W == nil || len(in.W.Snaps) == 0 {
		return unknown("no /metrics scrape of the member")
	}
	r, ok := quotaShare(in.W)
	if !ok {
		return unknown("%s or %s absent", metrics.DBTotal, metrics.Quota)
	}
	db, _ := in.W.GaugeMax(metrics.DBTotal, nil)
	quota, _ := in.W.Gauge(metrics.Quota, nil)
	return Check{Severity: lim.Grade(r), Observed: fmt.Sprintf("%s of %s = %s", units.Bytes(db), units.Bytes(quota), pct(r))}
}

// FragMinInUse is the db size in use up to which fragmentation is not graded:
// a small db defragments in moments whatever its share of free pages.
const FragMinInUse = 100 * mib

// fragRule warns when less than half of a large db is in use: the rest is free pages
// that only a defragmentation returns.
func fragRule(in *Input, lim Limits) Check {
	if in.W == nil || len(in.W.Snaps) == 0 {
		return unknown("no /metrics scrape of the member")
	}
	total, ok1 := in.W.Gauge(metrics.DBTotal, nil)
	inUse, ok2 := in.W.Gauge(metrics.DBInUse, nil)
	if !ok1 || !ok2 || total <= 0 {
		return unknown("%s or %s absent", metrics.DBInUse, metrics.DBTotal)
	}
	r := inUse / total
	obs := fmt.Sprintf("%s of %s in use = %.2f", units.Bytes(inUse), units.Bytes(total), r)
	if inUse <= FragMinInUse {
		return Check{Severity: finding.OK, Observed: obs}
	}
	return Check{Severity: lim.Grade(r), Observed: obs}
}

func dbSizeRule(in *Input, lim Limits) Check {
	if in.W == nil || len(in.W.Snaps) == 0 {
		return unknown("no /metrics scrape of the member")
	}
	db, ok := in.W.GaugeMax(metrics.DBTotal, nil)
	if !ok {
		return unknown("%s absent", metrics.DBTotal)
	}
	return Check{Severity: lim.Grade(db), Observed: units.Bytes(db)}
}

// probeRule grades the fdatasync p99 of the disk probes in the run, when any ran.
func probeRule(in *Input, lim Limits) Check {
	if in.Run == nil || len(in.Run.Disk) == 0 {
		return Check{}
	}
	worst := Check{Severity: finding.Unknown, Observed: "no probe recorded fdatasync latencies"}
	worstMs := -1.0
	for _, d := range in.Run.Disk {
		p99 := d.Fdatasync.P99
		if p99 <= 0 || p99 <= worstMs {
			continue
		}
		worstMs = p99
		worst = Check{Severity: lim.Grade(p99 / 1000),
			Observed: fmt.Sprintf("%s pattern on %s: %s", d.Pattern, d.Dir, units.Duration(p99/1000))}
	}
	return worst
}
