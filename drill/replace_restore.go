package drill

import (
	"context"
	"fmt"
	"time"
)

// restore leaves the original number of voters after an interruption or error.
func (r *replaceRun) restore(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.CatchUpTimeout+time.Minute)
	defer cancel()
	orig := len(r.cfg.Plan.Survey.Voters())
	switch {
	case !r.removed:
		r.rep.Restored = "no membership change was made"
		return
	case r.added && r.rep.Mode == "voter":
		r.rep.Restored = fmt.Sprintf("%s was already added as a voter: %d voting members", r.cand.Name, orig)
		return
	case r.promoted:
		r.rep.Restored = "the replacement had completed"
		return
	}
	r.env.say("drill: restoring %d voting members (Ctrl-C again aborts and leaves %d)", orig, orig-1)
	if !r.added {
		if err := r.add(ctx, true); err != nil {
			r.rep.Restored = fmt.Sprintf("FAILED to add a replacement for %s: %v; the cluster has %d voting members", r.rep.Removed.Name, err, orig-1)
			r.env.say("drill: %s", r.rep.Restored)
			return
		}
	}
	if err := r.catchUp(ctx); err != nil {
		r.rep.Restored = fmt.Sprintf("FAILED to promote learner %s: %v; the cluster has %d voting members and a learner (promote it with etcdctl member promote %x, or remove it)",
			r.cand.Name, err, orig-1, r.newID)
		r.env.say("drill: %s", r.rep.Restored)
		return
	}
	r.rep.Restored = fmt.Sprintf("promoted learner %s once it had caught up: %d voting members, as before", r.cand.Name, orig)
	r.env.say("drill: %s", r.rep.Restored)
}
