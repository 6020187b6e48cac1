package analyze

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
)

// The backend quota (--quota-backend-bytes, 2 GiB by default): when the db reaches
// it, etcd raises the NOSPACE alarm and refuses every write with "mvcc: database
// space exceeded" (gRPC ResourceExhausted) until the space is freed and the alarm
// disarmed. That is a cluster that cannot take writes, whatever its hardware.

const (
	srcNoSpace  = "etcd op-guide/maintenance.md (space quota: NOSPACE alarm, writes fail with 'database space exceeded')"
	quotaAdvice = "The backend quota is full or nearly so. Recover: compact the history (`etcdctl compact $(etcdctl endpoint status -w fields | grep Revision)`), defragment every member (`etcdctl defrag --cluster`), then `etcdctl alarm disarm`; or raise --quota-backend-bytes (8 GiB suggested maximum). Find what fills it with `etcdperf inspect`."
)

// noSpaceOf is the NOSPACE alarms the run read after its load, and whether it read them.
func noSpaceOf(in *Input) ([]string, bool) {
	if in.Run == nil || in.Run.Alarms == nil {
		return nil, false
	}
	var members []string
	for _, a := range in.Run.Alarms {
		if strings.EqualFold(a.Type, "NOSPACE") {
			members = append(members, a.Member)
		}
	}
	return members, true
}

func noSpaceAlarmRule(in *Input, _ Limits) Observation {
	if in.Run == nil {
		return Observation{} // bare dumps: the alarm list is not in /metrics
	}
	members, read := noSpaceOf(in)
	switch {
	case !read:
		return unknown("the run did not read the alarm list")
	case len(members) > 0:
		return Observation{Severity: finding.Fail, Observed: "NOSPACE raised by member " + strings.Join(members, ", ")}
	}
	return Observation{Severity: finding.OK, Observed: "no alarm"}
}

// spaceExceededRule counts writes refused with ResourceExhausted, the code of
// "database space exceeded". The code alone is ambiguous (gRPC uses it for an
// oversized message too), so they count as quota only with the alarm raised or
// the db at the fail share of its quota.
func spaceExceededRule(in *Input, lim Limits) Observation {
	if in.Run == nil {
		return Observation{}
	}
	var refused int64
	for _, op := range in.Run.Ops {
		if isRead(op.Op) || isWatch(op.Op) {
			continue
		}
		refused += op.ErrorsByCode["ResourceExhausted"]
	}
	sev := lim.Grade(float64(refused))
	if sev == finding.OK {
		return Observation{Severity: sev, Observed: fmt.Sprintf("%d", refused)}
	}
	members, _ := noSpaceOf(in)
	full := len(members) > 0
	for _, w := range in.Members {
		if r, ok := quotaShare(w); ok && QuotaLimits.Grade(r) == finding.Fail {
			full = true
		}
	}
	if !full {
		return unknown("%d writes failed with ResourceExhausted, but neither the NOSPACE alarm nor a full quota was seen", refused)
	}
	return Observation{Severity: sev, Observed: fmt.Sprintf("%d writes refused with ResourceExhausted (mvcc: database space exceeded)", refused)}
}

// quotaShare is the member's peak db size over its quota.
func quotaShare(w *Window) (float64, bool) {
	if w == nil || len(w.Snaps) == 0 {
		return 0, false
	}
	db, ok1 := w.GaugeMax(metrics.DBTotal, nil)
	quota, ok2 := w.Gauge(metrics.Quota, nil)
	if !ok1 || !ok2 || quota <= 0 {
		return 0, false
	}
	return db / quota, true
}
