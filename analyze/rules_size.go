package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/etcdperf/etcdperf/internal/units"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// runValueSizeRule grades the run's payload bytes per write request.
func runValueSizeRule(in *Input, lim Limits) Observation {
	if in.Run == nil {
		return Observation{}
	}
	var bytes, reqs, all int64
	for _, op := range in.Run.Ops {
		if isRead(op.Op) || isWatch(op.Op) {
			continue
		}
		bytes += op.BytesSent
		// Bytes are counted on the requests that carried them: the successes.
		reqs += op.Requests - op.Errors
		all += op.Requests
	}
	if all == 0 {
		return Observation{Severity: finding.OK, Observed: "no writes"}
	}
	if reqs == 0 {
		return unknown("no write succeeded: no request carried bytes")
	}
	if bytes == 0 {
		return unknown("the run does not record bytes sent")
	}
	per := float64(bytes) / float64(reqs)
	return Observation{Severity: lim.Grade(per), Observed: fmt.Sprintf("%s per request over %d requests", units.Bytes(per), reqs)}
}

// minRatioOps is the fewest operations a per-operation ratio is graded over: a
// handful are setup (the fill put of a range benchmark, a lease grant), not the
// workload, and dividing a whole run's bytes by them says nothing.
const minRatioOps = 10

// perOp reads a byte counter and an operation counter over the window for a
// per-operation ratio. done is set when there is nothing to divide: the
// window or a counter missing (unknown), no operations (ok), or too few.
func perOp(in *Input, bytesName, opsName, ops, verb string) (bytes, n float64, done *Observation) {
	if c, ok := needWindow(in.W); !ok {
		return 0, 0, &c
	}
	bytes, ok1 := in.W.CounterDelta(bytesName, nil)
	n, ok2 := in.W.CounterDelta(opsName, nil)
	switch {
	case !ok1 || !ok2:
		c := unknown("%s or %s absent", bytesName, opsName)
		return 0, 0, &c
	case n == 0:
		return 0, 0, &Observation{Severity: finding.OK, Observed: "no " + ops + " in the window"}
	case n < minRatioOps:
		c := unknown("%.0f %s in the window: too few to divide the %s bytes by", n, ops, verb)
		return 0, 0, &c
	}
	return bytes, n, nil
}

// metricValueSizeRule grades gRPC bytes received per put on a member, the estimate
// that works on bare /metrics dumps. etcd counts received bytes over every request,
// not per method, so the ratio is only graded when puts are the requests that
// carry the bytes: with too few puts it is unknown, and where the per-method
// request counts show other requests outnumbering the writes ten to one it is an
// upper bound, at most a warning.
func metricValueSizeRule(in *Input, lim Limits) Observation {
	recv, puts, done := perOp(in, metrics.GRPCReceived, metrics.PutTotal, "puts", "received")
	if done != nil {
		return *done
	}
	per := recv / puts
	obs := fmt.Sprintf("%s per put over %.0f puts", units.Bytes(per), puts)
	sev := lim.Grade(per)
	msgs, ok := in.W.CounterDelta(metrics.GRPCMsgReceived, nil)
	writes := 0.0
	for _, m := range []string{"Put", "Txn"} {
		if d, ok := in.W.CounterDelta(metrics.GRPCMsgReceived, Labels{"grpc_method": m}); ok {
			writes += d
		}
	}
	if ok && msgs > 10*writes {
		obs += fmt.Sprintf("; only %.0f of %.0f requests were writes, so the bytes of the others are counted too: an upper bound", writes, msgs)
		if sev == finding.Fail {
			sev = finding.Warn
		}
	}
	return Observation{Severity: sev, Observed: obs}
}

// walRateRule grades the WAL write rate against the disk probe's throughput, when
// the run probed the disk at full speed; without such a probe there is no
// bandwidth to compare against (a light probe's paced writes measure latency, not
// what the disk can carry).
func walRateRule(in *Input, lim Limits) Observation {
	if in.Run == nil || !slices.ContainsFunc(in.Run.Disk, func(d results.DiskResult) bool { return d.IntervalMs <= 0 }) {
		return Observation{}
	}
	if c, ok := needWindow(in.W); !ok {
		return c
	}
	bytes, ok := in.W.CounterDelta(metrics.WALWriteBytes, nil)
	secs := in.seconds()
	if !ok || secs <= 0 {
		return unknown("%s absent or window length unknown", metrics.WALWriteBytes)
	}
	best := 0.0
	for _, d := range in.Run.Disk {
		if d.IntervalMs <= 0 && d.MBPerS > best {
			best = d.MBPerS
		}
	}
	if best <= 0 {
		return unknown("the disk probe recorded no throughput")
	}
	rate := bytes / secs / 1e6
	r := rate / best
	return Observation{Severity: lim.Grade(r), Observed: fmt.Sprintf("%.1f MB/s of the probed %.1f MB/s = %s", rate, best, pct(r))}
}

// rangeOps sums requests, keys and bytes over the run's read ops.
func rangeOps(in *Input) (reqs, keys, bytes int64) {
	for _, op := range in.Run.Ops {
		if !isRead(op.Op) {
			continue
		}
		// Keys and bytes are counted on the successful ranges only.
		reqs += op.Requests - op.Errors
		keys += op.KeysReceived
		bytes += op.BytesReceived
	}
	return reqs, keys, bytes
}

func runKeysPerRangeRule(in *Input, lim Limits) Observation {
	if in.Run == nil {
		return Observation{}
	}
	reqs, keys, _ := rangeOps(in)
	if reqs == 0 {
		return Observation{Severity: finding.OK, Observed: "no ranges"}
	}
	per := float64(keys) / float64(reqs)
	return Observation{Severity: lim.Grade(per), Observed: fmt.Sprintf("%.0f keys per range over %d ranges", per, reqs)}
}

func runBytesPerRangeRule(in *Input, lim Limits) Observation {
	if in.Run == nil {
		return Observation{}
	}
	reqs, _, bytes := rangeOps(in)
	if reqs == 0 {
		return Observation{}
	}
	per := float64(bytes) / float64(reqs)
	return Observation{Severity: lim.Grade(per), Observed: fmt.Sprintf("%s per range", units.Bytes(per))}
}

// putResponseBytes bounds what one put's response adds to the gRPC sent-bytes
// counter: a ResponseHeader of four varints (≈ 20–30 B) plus gRPC's 5-byte frame.
const putResponseBytes = 64

// metricBytesPerRangeRule grades gRPC bytes sent per range on a member. Sent bytes
// also count put responses: those are taken off at their upper bound, so a
// write-heavy window with a handful of ranges is not mistaken for large ranges.
func metricBytesPerRangeRule(in *Input, lim Limits) Observation {
	sent, ranges, done := perOp(in, metrics.GRPCSent, metrics.RangeTotal, "ranges", "sent")
	if done != nil {
		return *done
	}
	puts, _ := in.W.CounterDelta(metrics.PutTotal, nil)
	per := max(sent-puts*putResponseBytes, 0) / ranges
	return Observation{Severity: lim.Grade(per),
		Observed: fmt.Sprintf("%s per range over %.0f ranges (put responses, ≤ %d B each, taken off)", units.Bytes(per), ranges, putResponseBytes)}
}

// rangeDurationRule grades the p99 of range handling on a member; it does not apply
// to a window without ranges (etcd creates the series on the first range). A slow
// range is range size's finding only with large ranges (see largeRanges); without
// them it stays ok for range size and says what the ranges measured, for the disk
// or CPU classes to name the cause; with no size measured it is unknown.
func rangeDurationRule(in *Input, lim Limits) Observation {
	if c, ok := needWindow(in.W); !ok {
		return c
	}
	if ranges, ok := in.W.CounterDelta(metrics.RangeTotal, nil); ok && ranges == 0 {
		return Observation{}
	}
	c := histRule(metrics.RangeDuration, nil, 0.99)(in, lim)
	if c.Severity != finding.Warn && c.Severity != finding.Fail {
		return c
	}
	why, sizes := largeRanges(in)
	if why == "" && len(sizes) == 0 {
		return unknown("%s; no range size measured (keys or bytes per range), so it is not taken for large ranges", c.Observed)
	}
	c = corroborated(c, why)
	if why == "" {
		c.Observed += "; the ranges are not large (" + strings.Join(sizes, "; ") + "): a slow disk or CPU slows even a one-key range, see those classes"
	}
	return c
}

// largeRanges names the first signal that the member's ranges are large at warn
// or fail: the run's keys or bytes per range, or the member's sent bytes per
// range. sizes lists the ones measured, for the reason when none is.
func largeRanges(in *Input) (why string, sizes []string) {
	for _, s := range []struct {
		name string
		eval func(*Input, Limits) Observation
		lim  Limits
	}{
		{"the run's", runKeysPerRangeRule, limRangeKeys},
		{"the run's", runBytesPerRangeRule, limRangeBytes},
		{"sent", metricBytesPerRangeRule, limRangeBytes},
	} {
		switch c := s.eval(in, s.lim); c.Severity {
		case finding.Warn, finding.Fail:
			return s.name + " " + c.Observed, nil
		case finding.OK:
			sizes = append(sizes, c.Observed)
		}
	}
	return "", sizes
}
