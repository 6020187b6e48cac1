package drill

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/internal/metrics"
)

// catchUp polls the leader's metrics and the new member until the new member
// has the leader's data and, as a learner, was promoted. A learner's promotion is
// tried at every poll: etcd 3.6 refuses it ("can only promote a learner member
// which is in sync with leader") until the learner's log is within 10% of the
// leader's (server/etcdserver/server.go, readyPercentThreshold), so the first
// success is the leader's own word that the learner has caught up.
func (r *replaceRun) catchUp(ctx context.Context) error {
	learner := r.isLearner(r.newID)
	deadline := time.Now().Add(r.cfg.CatchUpTimeout)
	newHex := fmt.Sprintf("%x", r.newID)
	snapSeen := false
	t := time.NewTicker(r.env.poll())
	defer t.Stop()
	checkSnap := func() {
		if snapSeen {
			return
		}
		if l := r.leaderURL(); l != "" {
			if s := r.env.scrapeOne(ctx, l); s != nil {
				if n, _ := s.Value(metrics.SnapSendSuccess, analyze.Labels{"To": newHex}); n > 0 {
					snapSeen = true
					r.mark(ctx, PhaseCatchUp, "")
				}
			}
		}
	}
	caught := func(how string) {
		r.caughtUp, r.caughtAt = true, time.Now()
		r.act("%s caught up with the leader after %.2f s (%s)", r.cand.Name, r.caughtAt.Sub(r.joinAt).Seconds(), how)
		// A snapshot sent within the last poll counts too.
		checkSnap()
		if !snapSeen {
			// The leader still held every entry the new member needed: no snapshot.
			r.bounds[r.snapBoundary].name = PhaseCatchUp
			r.bounds[r.snapBoundary].note = "no snapshot: the leader sent the log"
		}
	}
	for {
		checkSnap()
		if !r.caughtUp {
			if ok, how := r.inSync(ctx); ok {
				caught(how)
			}
		}
		if learner && !r.promoted {
			r.rep.PromoteAttempts++
			cctx, cancel := context.WithTimeout(ctx, r.env.timeout())
			_, err := r.env.Client.MemberPromote(cctx, r.newID)
			cancel()
			if err == nil {
				r.promoted, r.promotedAt = true, time.Now()
				if !r.caughtUp {
					caught("the leader accepted its promotion")
				}
				r.act("promoted %s to a voter after %d attempt(s)", r.cand.Name, r.rep.PromoteAttempts)
				r.setVoter(r.newID)
			} else if !errors.Is(err, rpctypes.ErrMemberLearnerNotReady) && !errors.Is(err, rpctypes.ErrUnhealthy) && ctx.Err() == nil {
				r.env.say("drill: promote %s: %v (retrying)", r.cand.Name, err)
			}
		}
		if r.caughtUp && (!learner || r.promoted) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not catch up within %s (--catch-up-timeout)", r.cand.Name, r.cfg.CatchUpTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// inSync says whether the new member has applied what the leader had committed
// just before (the leader is read first). With the new member's own metrics
// listener the indexes come from /metrics, which a new member serves at once;
// without it, from Status, which it answers only once it has published itself
// to the cluster (a step that can wait for a proposal timeout, see ReadyS).
func (r *replaceRun) inSync(ctx context.Context) (bool, string) {
	lurl := r.leaderURL()
	if lurl == "" {
		return false, ""
	}
	if r.cand.MetricsURL != "" {
		ls := r.env.scrapeOne(ctx, lurl)
		ns := r.env.scrapeURL(ctx, r.cand.MetricsURL)
		if ls == nil || ns == nil {
			return false, ""
		}
		committed, ok1 := ls.Value(metrics.ProposalsCommitted, nil)
		applied, ok2 := ns.Value(metrics.ProposalsApplied, nil)
		return ok1 && ok2 && applied >= committed, "its applied index reached the leader's commit index"
	}
	cli, to := r.env.Client, r.env.timeout()
	cctx, cancel := context.WithTimeout(ctx, to)
	ls, err := cli.Status(cctx, lurl)
	cancel()
	if err != nil {
		return false, ""
	}
	if h := fmt.Sprintf("%x", ls.Leader); ls.Leader != 0 && h != r.leader {
		r.leader = h
		return false, ""
	}
	cctx, cancel = context.WithTimeout(ctx, to)
	ns, err := cli.Status(cctx, r.cand.ClientURL)
	cancel()
	return err == nil && ns.RaftAppliedIndex >= ls.RaftIndex, "its applied index reached the leader's commit index"
}

// readiness records when the new member first answers Status on its client URL:
// it serves clients only once it has published itself through raft.
type readiness struct {
	mu   sync.Mutex
	at   time.Time
	stop chan struct{}
	done chan struct{}
}

// watchReady polls url until it answers or stop is called.
func (e *Env) watchReady(url string) *readiness {
	rd := &readiness{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(rd.done)
		t := time.NewTicker(e.poll())
		defer t.Stop()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), e.timeout())
			_, err := e.Client.Status(ctx, url)
			cancel()
			if err == nil {
				rd.mu.Lock()
				rd.at = time.Now()
				rd.mu.Unlock()
				return
			}
			select {
			case <-rd.stop:
				return
			case <-t.C:
			}
		}
	}()
	return rd
}

// end stops the watch and returns when the member answered (zero if it did not).
func (rd *readiness) end() time.Time {
	if rd == nil {
		return time.Time{}
	}
	select {
	case <-rd.stop:
	default:
		close(rd.stop)
	}
	<-rd.done
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return rd.at
}
