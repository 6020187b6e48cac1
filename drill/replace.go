package drill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/inspect"
	"github.com/etcdperf/etcdperf/results"
)

// ReplacePlan is a checked replace-member drill: the cluster as found and the
// follower that will be replaced.
type ReplacePlan struct {
	Survey *Survey
	Victim MemberInfo
	Steps  []Step
}

// LoadEndpoints are the client URLs of the members that stay: the background
// load goes there, so that it measures the replacement, not a client losing its
// endpoint.
func (p *ReplacePlan) LoadEndpoints() []string {
	var eps []string
	for _, m := range p.Survey.Members {
		if m.ID != p.Victim.ID && m.ClientURL != "" {
			eps = append(eps, m.ClientURL)
		}
	}
	return eps
}

// PlanReplace checks the cluster (healthy, at least MinVoters voters, no learner,
// quorum kept at every step) and picks the follower to replace (name, or any).
func PlanReplace(ctx context.Context, env *Env, name string, asVoter bool) (*ReplacePlan, error) {
	s, err := survey(ctx, env.Client, env.timeout())
	if err != nil {
		return nil, err
	}
	if err := checkSurvey(s, func(n int) []Step { return replaceSteps(n, asVoter) }); err != nil {
		return nil, err
	}
	v, err := pickFollower(s, name)
	if err != nil {
		return nil, err
	}
	return &ReplacePlan{Survey: s, Victim: v, Steps: replaceSteps(len(s.Voters()), asVoter)}, nil
}

// ReplaceConfig shapes a replace-member drill.
type ReplaceConfig struct {
	Env     *Env
	Members Members
	Plan    *ReplacePlan
	// AsVoter adds the fresh member straight as a voter (the old way) instead of a learner.
	AsVoter bool
	// Before and After are how long the load runs before the removal and after the
	// new member has caught up (and, as a learner, was promoted).
	Before, After time.Duration
	// CatchUpTimeout bounds the wait for the new member (default 3 min).
	CatchUpTimeout time.Duration
	// DiskMBps and NetMBps feed inspect's recovery estimate (0: inspect's defaults).
	DiskMBps, NetMBps float64
	// Settings describes the cluster's settings that shape the result (e.g. the
	// embedded cluster's --snapshot-count), for the report.
	Settings map[string]string
}

// ReplaceResult is the outcome of replace-member (the JSON of `drill replace-member -w json`).
type ReplaceResult struct {
	Drill    string            `json:"drill"`
	Mode     string            `json:"mode"` // learner | voter
	Settings map[string]string `json:"settings,omitempty"`
	Removed  MemberInfo        `json:"removed"`
	Added    *Candidate        `json:"added,omitempty"`
	Phases   []Phase           `json:"phases"`
	// CatchUpS runs from the new member's start to its applied index reaching the
	// leader's commit index (or, for a learner, the leader accepting its promotion,
	// if that came first); PromoteS (learners) to the successful MemberPromote.
	CatchUpS        *float64 `json:"catch_up_s"`
	PromoteS        *float64 `json:"promote_s,omitempty"`
	PromoteAttempts int      `json:"promote_attempts,omitempty"`
	// ReadyS runs from the start to the new member answering clients, which it does
	// only once it has published itself through raft; nil if not by the end.
	ReadyS *float64 `json:"ready_s"`
	// PredictedS is inspect's recovery estimate for the leader's db size at the join.
	PredictedS float64          `json:"predicted_s"`
	Prediction inspect.Recovery `json:"prediction"`
	// MeasuredOverPredicted is CatchUpS / PredictedS.
	MeasuredOverPredicted *float64      `json:"measured_over_predicted"`
	DBSizeBytes           int64         `json:"db_size_bytes"`
	Snapshot              Snapshot      `json:"snapshot"`
	Client                ClientSummary `json:"client"`
	LeaderChanges         int64         `json:"leader_changes"`
	HeartbeatSendFailures int64         `json:"heartbeat_send_failures"`
	// Exposure is how long the cluster could not lose one more voting member.
	Exposure    Exposure      `json:"exposure"`
	Verify      *Verification `json:"verify,omitempty"`
	Actions     []Action      `json:"actions"`
	Interrupted bool          `json:"interrupted,omitempty"`
	Error       string        `json:"error,omitempty"`
	// Restored says what the drill did after an interruption or error to leave the
	// original number of voters.
	Restored string `json:"restored,omitempty"`
	Voters   int    `json:"voters_after"`
	// RunFile is the run file the drill wrote (its load, with this report).
	RunFile string `json:"run_file,omitempty"`

	// Load is the background load's run, for plots; not part of the JSON.
	Load *results.Run `json:"-"`
}

// Snapshot is what the leader sent the new member.
type Snapshot struct {
	Sent     bool  `json:"sent"`
	Failures int64 `json:"failures"`
	// Bytes is the leader's etcd_network_peer_sent_bytes_total to the new member over
	// the snapshot phase (the snapshot is most of it).
	Bytes int64 `json:"bytes"`
	// SendS is etcd_network_snapshot_send_total_duration_seconds on the leader;
	// ReceiveS, DBSaveS and DBFsyncS the new member's receive, etcd_snap_db_save and
	// etcd_snap_db_fsync totals.
	SendS    *float64 `json:"send_s"`
	ReceiveS *float64 `json:"receive_s"`
	DBSaveS  *float64 `json:"db_save_s"`
	DBFsyncS *float64 `json:"db_fsync_s"`
	// TransferMBps is Bytes / SendS.
	TransferMBps *float64 `json:"transfer_mb_per_s"`
	Note         string   `json:"note,omitempty"`
}

// ClientSummary compares the load before, during and after the replacement.
type ClientSummary struct {
	P99BeforeMs float64 `json:"p99_before_ms"`
	P99DuringMs float64 `json:"p99_during_ms"`
	P99AfterMs  float64 `json:"p99_after_ms"`
	Errors      int64   `json:"errors"`
}

// Exposure is the stretch in which one more failure stops the cluster.
type Exposure struct {
	Seconds float64 `json:"seconds"`
	Why     string  `json:"why"`
}

// replaceRun is one drill in progress.
type replaceRun struct {
	cfg     ReplaceConfig
	env     *Env
	rep     *ReplaceResult
	members []MemberInfo // the membership now, for scrapes
	bounds  []boundary
	leader  string // hex ID

	removed, added, promoted, caughtUp bool
	newID                              uint64
	cand                               Candidate
	joinAt, caughtAt, promotedAt       time.Time
	removeAt                           time.Time
	ready                              *readiness
	snapBoundary                       int // index of the boundary that starts the snapshot phase
}

// ReplaceMember runs the drill: load, remove the planned follower, add a fresh
// member (learner unless AsVoter), wait for its snapshot and catch-up, promote it,
// load a while more, then check the result. Interrupted (ctx done) or failing at
// any step, it still leaves the original number of voters: a member already
// removed is replaced, a learner already added is promoted once it caught up.
func ReplaceMember(ctx context.Context, cfg ReplaceConfig) (*ReplaceResult, error) {
	if cfg.CatchUpTimeout <= 0 {
		cfg.CatchUpTimeout = 3 * time.Minute
	}
	mode := "learner"
	if cfg.AsVoter {
		mode = "voter"
	}
	r := &replaceRun{cfg: cfg, env: cfg.Env, members: cfg.Plan.Survey.Members, leader: fmt.Sprintf("%x", cfg.Plan.Survey.Leader),
		rep: &ReplaceResult{Drill: ReplaceName, Mode: mode, Settings: cfg.Settings, Removed: cfg.Plan.Victim}}
	lctx, stopLoad := context.WithCancel(context.WithoutCancel(ctx))
	defer stopLoad()
	loadDone := make(chan loaded, 1)
	go func() { run, err := cfg.Env.Load(lctx); loadDone <- loaded{run, err} }()

	err := r.steps(ctx, loadDone)
	var loadRes *loaded
	if err != nil {
		select {
		case l := <-loadDone:
			loadRes = &l
		default:
		}
		r.rep.Interrupted = ctx.Err() != nil
		if !r.rep.Interrupted {
			r.rep.Error = err.Error()
		}
		r.restore(context.WithoutCancel(ctx))
	}
	r.mark(context.WithoutCancel(ctx), "end", "")
	if at := r.ready.end(); !at.IsZero() {
		s := at.Sub(r.joinAt).Seconds()
		r.rep.ReadyS = &s
	}
	stopLoad()
	if loadRes == nil {
		l := <-loadDone
		loadRes = &l
	}
	r.rep.Load = loadRes.run
	if perr := r.finish(); perr != nil && err == nil {
		err = perr
	}
	if r.removed {
		r.rep.Verify = verifyCluster(context.WithoutCancel(ctx), r.env)
		r.rep.Voters = r.rep.Verify.Voters
	}
	if loadRes.err != nil && !errors.Is(loadRes.err, context.Canceled) {
		// The load failing (its prefix in use, the cluster gone) is the cause of
		// whatever the steps then said.
		err = fmt.Errorf("background load: %w", loadRes.err)
		r.rep.Error = err.Error()
	}
	if rerr := record(r.rep.Load, r.rep, r.rep.Interrupted, r.rep.Error); rerr != nil && err == nil {
		err = rerr
	}
	return r.rep, err
}

func (r *replaceRun) act(format string, args ...any) {
	what := fmt.Sprintf(format, args...)
	r.rep.Actions = append(r.rep.Actions, Action{At: time.Now().UTC(), What: what})
	r.env.say("drill: %s", what)
}

// mark starts phase name (or ends the last one, for "end") with a scrape of every member.
func (r *replaceRun) mark(ctx context.Context, name, note string) {
	s := r.env.scrapeAll(ctx, r.members)
	if l := s.leader(); l != "" {
		r.leader = l
	}
	r.bounds = append(r.bounds, boundary{name: name, s: s, note: note, leader: r.leader})
	if name != "end" {
		r.env.say("drill: phase %s", name)
	}
}

// wait lets the load run for d; it fails when ctx ends or the load stopped.
func wait[T any](ctx context.Context, d time.Duration, loadDone <-chan T) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-loadDone:
		return errors.New("the background load stopped early")
	case <-t.C:
		return nil
	}
}

// loaded is what the background load returned.
type loaded struct {
	run *results.Run
	err error
}

func (r *replaceRun) steps(ctx context.Context, loadDone <-chan loaded) error {
	r.mark(ctx, PhaseBefore, "")
	if err := wait(ctx, r.cfg.Before, loadDone); err != nil {
		return err
	}
	if err := r.remove(ctx); err != nil {
		return err
	}
	if err := r.add(ctx, !r.cfg.AsVoter); err != nil {
		return err
	}
	if err := r.catchUp(ctx); err != nil {
		return err
	}
	r.mark(ctx, PhaseAfter, "")
	return wait(ctx, r.cfg.After, loadDone)
}

// retryUnhealthy retries a membership call that etcd refuses while a member has
// been connected for less than 5 s (etcdserver's HealthInterval) or the cluster is
// settling: "unhealthy cluster", "not enough started members", "not leader".
func (r *replaceRun) retryUnhealthy(ctx context.Context, what string, call func(context.Context) error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, r.env.timeout())
		err := call(cctx)
		cancel()
		if err == nil {
			return nil
		}
		retry := errors.Is(err, rpctypes.ErrUnhealthy) || errors.Is(err, rpctypes.ErrMemberNotEnoughStarted) ||
			errors.Is(err, rpctypes.ErrNoLeader) || errors.Is(err, rpctypes.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)
		if !retry || time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// remove removes the planned follower, after checking once more that it is
// neither the leader nor needed for the quorum.
func (r *replaceRun) remove(ctx context.Context) error {
	s, err := survey(ctx, r.env.Client, r.env.timeout())
	if err != nil {
		return err
	}
	if err := checkSurvey(s, func(n int) []Step { return replaceSteps(n, r.cfg.AsVoter) }); err != nil {
		return err
	}
	v, ok := s.ByName(r.cfg.Plan.Victim.Name)
	if !ok || v.ID != r.cfg.Plan.Victim.ID {
		return fmt.Errorf("%w: member %s left the cluster meanwhile", ErrRefused, r.cfg.Plan.Victim.Name)
	}
	if v.IsLeader {
		return fmt.Errorf("%w: %s became the leader; a drill never removes the leader", ErrRefused, v.Name)
	}
	if l, ok := s.LeaderInfo(); ok {
		r.rep.DBSizeBytes = l.DBSizeBytes
		r.leader = l.IDHex
	}
	r.mark(ctx, PhaseRemove, "")
	r.removeAt = time.Now()
	// A member that applies its own removal stops and answers "server stopped": the
	// drill's calls go to the members that stay.
	r.env.Client.SetEndpoints(r.cfg.Plan.LoadEndpoints()...)
	err = r.retryUnhealthy(ctx, "remove "+v.Name, func(c context.Context) error {
		_, err := r.env.Client.MemberRemove(c, v.ID)
		return err
	})
	if err != nil {
		// The call may have failed after etcd applied it: the member list decides.
		if ml, lerr := r.memberList(ctx); lerr != nil || slices.ContainsFunc(ml, func(m *pb.Member) bool { return m.ID == v.ID }) {
			return err
		}
		r.act("the removal of %s returned %v, but the member list no longer has it", v.Name, err)
	}
	r.removed = true
	r.act("removed follower %s (%s)", v.Name, v.IDHex)
	r.members = removeID(r.members, v.ID)
	if err := r.cfg.Members.Retire(context.WithoutCancel(ctx), v.Name); err != nil {
		r.act("could not retire %s: %v", v.Name, err)
	}
	return nil
}

// memberList lists the members, also after ctx was cancelled (it decides what a
// failed membership call did).
func (r *replaceRun) memberList(ctx context.Context) ([]*pb.Member, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.env.timeout())
	defer cancel()
	ml, err := r.env.Client.MemberList(cctx)
	if err != nil {
		return nil, err
	}
	return ml.Members, nil
}

func removeID(ms []MemberInfo, id uint64) []MemberInfo {
	var out []MemberInfo
	for _, m := range ms {
		if m.ID != id {
			out = append(out, m)
		}
	}
	return out
}

// add adds a fresh member to the membership and starts it.
func (r *replaceRun) add(ctx context.Context, learner bool) error {
	c, err := r.cfg.Members.Provision(ctx)
	if err != nil {
		return err
	}
	var resp *clientv3.MemberAddResponse
	if err := r.retryUnhealthy(ctx, "add "+c.Name, func(cc context.Context) error {
		var err error
		if learner {
			resp, err = r.env.Client.MemberAddAsLearner(cc, []string{c.PeerURL})
		} else {
			resp, err = r.env.Client.MemberAdd(cc, []string{c.PeerURL})
		}
		return err
	}); err != nil {
		// The call may have failed after etcd applied it: the member list decides.
		ml, lerr := r.memberList(ctx)
		i := slices.IndexFunc(ml, func(m *pb.Member) bool { return slices.Contains(m.PeerURLs, c.PeerURL) })
		if lerr != nil || i < 0 {
			return err
		}
		r.act("adding %s returned %v, but the member list has it", c.Name, err)
		resp = &clientv3.MemberAddResponse{Member: ml[i], Members: ml}
	}
	r.added, r.newID, r.cand = true, resp.Member.ID, c
	r.rep.Added = &c
	as := "voter"
	if learner {
		as = "learner"
	}
	r.act("added %s (%x) as a %s", c.Name, resp.Member.ID, as)
	r.members = append(r.members, MemberInfo{ID: resp.Member.ID, IDHex: fmt.Sprintf("%x", resp.Member.ID), Name: c.Name, ClientURL: c.ClientURL, PeerURL: c.PeerURL,
		IsLearner: learner, metricsURL: c.MetricsURL})
	r.snapBoundary = len(r.bounds)
	r.mark(ctx, PhaseSnapshot, "")
	r.joinAt = time.Now()
	if err := r.cfg.Members.Start(context.WithoutCancel(ctx), c, initialCluster(resp.Members, resp.Member.ID, c.Name)); err != nil {
		return fmt.Errorf("start %s: %w", c.Name, err)
	}
	r.act("started %s", c.Name)
	r.ready = r.env.watchReady(c.ClientURL)
	return nil
}

func (r *replaceRun) isLearner(id uint64) bool {
	for _, m := range r.members {
		if m.ID == id {
			return m.IsLearner
		}
	}
	return false
}

func (r *replaceRun) setVoter(id uint64) {
	for i := range r.members {
		if r.members[i].ID == id {
			r.members[i].IsLearner = false
		}
	}
}

func (r *replaceRun) leaderURL() string {
	for _, m := range r.members {
		if m.IDHex == r.leader {
			return m.ClientURL
		}
	}
	return ""
}
