package drill

import (
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/inspect"
	"github.com/etcdperf/etcdperf/internal/metrics"
)

// finish turns the boundaries and the load's intervals into the report's phases
// and summaries.
func (r *replaceRun) finish() error {
	rep := r.rep
	ps, err := phases(r.bounds, rep.Load)
	if err != nil {
		return err
	}
	rep.Phases = ps
	for _, p := range ps {
		if p.LeaderChanges != nil {
			rep.LeaderChanges += *p.LeaderChanges
		}
		if p.HeartbeatSendFailures != nil {
			rep.HeartbeatSendFailures += *p.HeartbeatSendFailures
		}
	}
	if r.caughtUp {
		s := r.caughtAt.Sub(r.joinAt).Seconds()
		rep.CatchUpS = &s
	}
	if r.promoted {
		s := r.promotedAt.Sub(r.joinAt).Seconds()
		rep.PromoteS = &s
	}
	disk, net := r.cfg.DiskMBps, r.cfg.NetMBps
	if disk <= 0 {
		disk = inspect.DefaultDiskMBps
	}
	if net <= 0 {
		net = inspect.DefaultNetMBps
	}
	rep.Prediction = inspect.EstimateRecovery(rep.DBSizeBytes, disk, net)
	rep.PredictedS = rep.Prediction.Seconds
	if rep.CatchUpS != nil && rep.PredictedS > 0 {
		x := *rep.CatchUpS / rep.PredictedS
		rep.MeasuredOverPredicted = &x
	}
	r.snapshotFigures()
	rep.Client = summarize(r.bounds, rep.Load)
	r.exposure()
	return nil
}

// snapshotFigures reads the snapshot's size and times from the leader's scrape
// when the catch-up phase began and the new member's scrape at the end.
func (r *replaceRun) snapshotFigures() {
	sn := &r.rep.Snapshot
	newHex := fmt.Sprintf("%x", r.newID)
	to := analyze.Labels{"To": newHex}
	var start, catch, end *boundary
	for i := range r.bounds {
		b := &r.bounds[i]
		switch {
		case i == r.snapBoundary && r.added:
			start = b
		case b.name == PhaseCatchUp && start != nil && catch == nil:
			catch = b
		case b.name == "end":
			end = b
		}
	}
	if start == nil || catch == nil || start.name != PhaseSnapshot {
		sn.Note = "no snapshot was sent: the leader's log still held every entry the new member needed"
		return
	}
	ls := catch.s.by[catch.leader]
	if ls == nil {
		sn.Note = "the leader's /metrics could not be read when the snapshot was done"
		return
	}
	if v, ok := ls.Value(metrics.SnapSendSuccess, to); ok {
		sn.Sent = v > 0
	}
	if v, ok := ls.Value(metrics.SnapSendFailures, to); ok {
		sn.Failures = int64(v)
	}
	if d, ok := analyze.Between(start.s.by[start.leader], ls).CounterDelta(metrics.PeerSentBytes, to); ok {
		sn.Bytes = int64(d)
	}
	if h, ok := ls.Histogram(metrics.SnapSendSeconds, to); ok && h.Count > 0 {
		sum := h.Sum
		sn.SendS = &sum
		if sum > 0 {
			mbps := float64(sn.Bytes) / sum / 1e6
			sn.TransferMBps = &mbps
		}
	}
	if end == nil {
		return
	}
	if ns := end.s.by[newHex]; ns != nil {
		for _, f := range []struct {
			name string
			dst  **float64
		}{{metrics.SnapRecvSeconds, &sn.ReceiveS}, {metrics.SnapDBSave, &sn.DBSaveS}, {metrics.SnapDBFsync, &sn.DBFsyncS}} {
			if h, ok := ns.Histogram(f.name, nil); ok && h.Count > 0 {
				sum := h.Sum
				*f.dst = &sum
			}
		}
	}
}

// exposure is the stretch with no voter to spare: from the removal until the new
// member could vote.
func (r *replaceRun) exposure() {
	if !r.removed {
		return
	}
	end := time.Now()
	switch {
	case r.promoted:
		end = r.promotedAt
	case r.caughtUp && !r.isLearner(r.newID):
		end = r.caughtAt
	}
	n := len(r.cfg.Plan.Survey.Voters())
	r.rep.Exposure.Seconds = end.Sub(r.removeAt).Seconds()
	if r.rep.Mode == "voter" {
		r.rep.Exposure.Why = fmt.Sprintf("from the removal until the new voter caught up, %d of %d voters could vote (quorum %d): "+
			"the new voter counted towards the quorum from its addition without being able to vote, so had it failed to start or catch up, "+
			"the cluster would have stayed one failure from losing its quorum until someone removed it", n-1, n, quorum(n))
		return
	}
	r.rep.Exposure.Why = fmt.Sprintf("from the removal until the promotion, %d of %d voters (quorum %d); the learner did not count towards "+
		"the quorum until it had caught up, so a learner that failed would have changed nothing", n-1, n-1, quorum(n-1))
}
