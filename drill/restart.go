package drill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// RestartPlan is a checked rolling restart: the cluster as found and the order
// of the restarts, followers first and the leader last (one election, at the end,
// as operators do it).
type RestartPlan struct {
	Survey *Survey
	Order  []MemberInfo
}

// PlanRestart checks the cluster as PlanReplace does and orders the members;
// names, when given, restricts and orders the restarts.
func PlanRestart(ctx context.Context, env *Env, names []string) (*RestartPlan, error) {
	s, err := survey(ctx, env.Client, env.timeout())
	if err != nil {
		return nil, err
	}
	if err := checkSurvey(s, restartSteps); err != nil {
		return nil, err
	}
	p := &RestartPlan{Survey: s}
	if len(names) > 0 {
		for _, n := range names {
			m, ok := s.ByName(n)
			if !ok {
				return nil, fmt.Errorf("%w: no member named %q", ErrRefused, n)
			}
			p.Order = append(p.Order, m)
		}
		return p, nil
	}
	p.Order = slices.Clone(s.Members)
	slices.SortStableFunc(p.Order, func(a, b MemberInfo) int {
		switch {
		case a.IsLeader == b.IsLeader:
			return 0
		case a.IsLeader:
			return 1
		}
		return -1
	})
	return p, nil
}

// RestartConfig shapes a rolling restart.
type RestartConfig struct {
	Env       *Env
	Restarter Restarter
	Plan      *RestartPlan
	// Before and After are the load before the first restart and after the last.
	Before, After time.Duration
	// Settle is the load between a member's return and the next restart (default 5 s,
	// etcd's HealthInterval: a member counts as active only after it).
	Settle time.Duration
	// Timeout bounds a member's return (default 1 min).
	Timeout time.Duration
}

// RestartResult is the outcome of rolling-restart (the JSON of `drill rolling-restart -w json`).
type RestartResult struct {
	Drill                 string        `json:"drill"`
	Phases                []Phase       `json:"phases"`
	Restarts              []Restart     `json:"restarts"`
	Client                ClientSummary `json:"client"`
	LeaderChanges         int64         `json:"leader_changes"`
	HeartbeatSendFailures int64         `json:"heartbeat_send_failures"`
	Verify                *Verification `json:"verify,omitempty"`
	Actions               []Action      `json:"actions"`
	Interrupted           bool          `json:"interrupted,omitempty"`
	Error                 string        `json:"error,omitempty"`
	// RunFile is the run file the drill wrote (its load, with this report).
	RunFile string       `json:"run_file,omitempty"`
	Load    *results.Run `json:"-"`
}

// Restart is one member's restart.
type Restart struct {
	Member    string `json:"member"`
	WasLeader bool   `json:"was_leader"`
	// UnavailableS runs from the restart's start to the member answering Status
	// with a leader again.
	UnavailableS  *float64 `json:"unavailable_s"`
	LeaderChanges *int64   `json:"leader_changes"`
	P99Ms         float64  `json:"p99_ms"`
	Errors        int64    `json:"errors"`
}

// RollingRestart restarts each planned member in turn under load, waiting until
// it is back and the cluster is healthy again before the next one.
func RollingRestart(ctx context.Context, cfg RestartConfig) (*RestartResult, error) {
	if cfg.Settle <= 0 {
		cfg.Settle = 5 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	env := cfg.Env
	rep := &RestartResult{Drill: RestartName}
	r := &replaceRun{env: env, rep: &ReplaceResult{}, members: cfg.Plan.Survey.Members, leader: fmt.Sprintf("%x", cfg.Plan.Survey.Leader)}
	lctx, stopLoad := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLoad()
	loadDone := make(chan loaded, 1)
	go func() { run, err := env.Load(lctx); loadDone <- loaded{run, err} }()

	var down []*float64
	err := func() error {
		r.mark(ctx, PhaseBefore, "")
		if err := wait(ctx, cfg.Before, loadDone); err != nil {
			return err
		}
		for i, m := range cfg.Plan.Order {
			if i > 0 {
				// The next member goes down only when every member is back: quorum kept.
				s, err := survey(ctx, env.Client, env.timeout())
				if err != nil {
					return err
				}
				if err := checkSurvey(s, restartSteps); err != nil {
					return err
				}
			}
			r.mark(ctx, PhaseRestart, "")
			r.bounds[len(r.bounds)-1].member = m.Name
			start := time.Now()
			if err := cfg.Restarter.Restart(ctx, m.Name); err != nil {
				down = append(down, nil)
				return fmt.Errorf("restart %s: %w", m.Name, err)
			}
			r.act("restarted %s", m.Name)
			if err := waitBack(ctx, env, m.ClientURL, cfg.Timeout); err != nil {
				down = append(down, nil)
				return fmt.Errorf("%s did not come back: %w", m.Name, err)
			}
			d := time.Since(start).Seconds()
			down = append(down, &d)
			r.act("%s answers again after %.2f s", m.Name, d)
			if err := wait(ctx, cfg.Settle, loadDone); err != nil {
				return err
			}
		}
		r.mark(ctx, PhaseAfter, "")
		return wait(ctx, cfg.After, loadDone)
	}()
	if err != nil {
		rep.Interrupted = ctx.Err() != nil
		if !rep.Interrupted {
			rep.Error = err.Error()
		}
	}
	r.mark(context.WithoutCancel(ctx), "end", "")
	stopLoad()
	l := <-loadDone
	rep.Load, rep.Actions = l.run, r.rep.Actions
	if l.err != nil && !errors.Is(l.err, context.Canceled) {
		err = fmt.Errorf("background load: %w", l.err)
		rep.Error = err.Error()
	}
	ps, perr := phases(r.bounds, l.run)
	if perr != nil && err == nil {
		err = perr
	}
	rep.Phases = ps
	k := 0
	for i := range rep.Phases {
		p := &rep.Phases[i]
		if p.LeaderChanges != nil {
			rep.LeaderChanges += *p.LeaderChanges
		}
		if p.HeartbeatSendFailures != nil {
			rep.HeartbeatSendFailures += *p.HeartbeatSendFailures
		}
		if p.Name != PhaseRestart || k >= len(down) {
			continue
		}
		p.UnavailableS = down[k]
		rep.Restarts = append(rep.Restarts, Restart{Member: p.Member, WasLeader: cfg.Plan.Order[k].IsLeader, UnavailableS: down[k],
			LeaderChanges: p.LeaderChanges, P99Ms: p.Client.P99Ms, Errors: p.Client.Errors})
		k++
	}
	rep.Client = summarize(r.bounds, l.run)
	rep.Verify = verifyCluster(context.WithoutCancel(ctx), env)
	if rerr := record(rep.Load, rep, rep.Interrupted, rep.Error); rerr != nil && err == nil {
		err = rerr
	}
	return rep, err
}

// waitBack polls a member's Status until it answers with a leader.
func waitBack(ctx context.Context, env *Env, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(env.poll())
	defer t.Stop()
	for {
		cctx, ccancel := context.WithTimeout(ctx, env.timeout())
		st, err := env.Client.Status(cctx, url)
		ccancel()
		if err == nil && st.Leader != 0 && len(st.Errors) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = errors.New("no leader")
			}
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}
