package drill

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// MinVoters is the least number of voting members a drill runs on: with fewer,
// removing one leaves a cluster that cannot lose any member (etcd's FAQ: a
// cluster of n members tolerates (n-1)/2 failures).
const MinVoters = 3

// ErrRefused marks a drill the guard would not start: the cluster is unhealthy,
// too small, or a step would risk its quorum.
var ErrRefused = errors.New("refused")

// MemberInfo is one member as the guard saw it.
type MemberInfo struct {
	ID        uint64 `json:"-"`
	IDHex     string `json:"id"`
	Name      string `json:"name"`
	ClientURL string `json:"client_url"`
	PeerURL   string `json:"peer_url"`
	IsLearner bool   `json:"is_learner,omitempty"`
	IsLeader  bool   `json:"is_leader,omitempty"`
	// Healthy is set when the member answered Status with no errors and agreed on
	// the leader.
	Healthy bool `json:"healthy"`
	// DBSizeBytes is the member's backend size as Status reported it.
	DBSizeBytes int64 `json:"db_size_bytes"`
	// metricsURL is the member's own metrics listener, when it has one.
	metricsURL string
}

// Survey is the cluster as the guard found it.
type Survey struct {
	Members []MemberInfo `json:"members"`
	Leader  uint64       `json:"-"`
}

// Voters are the voting members.
func (s *Survey) Voters() []MemberInfo {
	return slices.DeleteFunc(slices.Clone(s.Members), func(m MemberInfo) bool { return m.IsLearner })
}

// ByName finds a member by name.
func (s *Survey) ByName(name string) (MemberInfo, bool) {
	for _, m := range s.Members {
		if m.Name == name {
			return m, true
		}
	}
	return MemberInfo{}, false
}

// LeaderInfo is the leader's entry.
func (s *Survey) LeaderInfo() (MemberInfo, bool) {
	for _, m := range s.Members {
		if m.ID == s.Leader {
			return m, true
		}
	}
	return MemberInfo{}, false
}

// survey lists the members and asks each for its Status, within timeout per call.
func survey(ctx context.Context, cli *clientv3.Client, timeout time.Duration) (*Survey, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	ml, err := cli.MemberList(cctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	return surveyMembers(ctx, cli, ml.Members, timeout), nil
}

func surveyMembers(ctx context.Context, cli *clientv3.Client, members []*pb.Member, timeout time.Duration) *Survey {
	s := &Survey{}
	leaders := map[uint64]int{}
	statuses := make([]*clientv3.StatusResponse, len(members))
	for i, m := range members {
		info := MemberInfo{ID: m.ID, IDHex: fmt.Sprintf("%x", m.ID), Name: m.Name, IsLearner: m.IsLearner}
		if len(m.ClientURLs) > 0 {
			info.ClientURL = m.ClientURLs[0]
		}
		if len(m.PeerURLs) > 0 {
			info.PeerURL = m.PeerURLs[0]
		}
		if info.ClientURL != "" {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			st, err := cli.Status(cctx, info.ClientURL)
			cancel()
			if err == nil && len(st.Errors) == 0 && st.Leader != 0 {
				statuses[i] = st
				leaders[st.Leader]++
				info.DBSizeBytes = st.DbSize
			}
		}
		s.Members = append(s.Members, info)
	}
	for id, n := range leaders {
		if n > len(members)/2 {
			s.Leader = id
		}
	}
	for i := range s.Members {
		m := &s.Members[i]
		m.IsLeader = m.ID == s.Leader && s.Leader != 0
		m.Healthy = statuses[i] != nil && statuses[i].Leader == s.Leader
	}
	return s
}

// quorum is the number of voters a cluster of n voters needs to commit.
func quorum(n int) int { return n/2 + 1 }

// Step is one membership change of a drill and the voters it leaves.
type Step struct {
	What string `json:"what"`
	// Voters is the size of the voting membership after the step; Up is how many of
	// them can vote (a new voter cannot until it has caught up).
	Voters, Up int
}

// replaceSteps are the membership changes of replace-member on a cluster of n
// healthy voters: remove one follower, add a fresh member (as a learner, or
// straight as a voter), and promote the learner once it has caught up.
func replaceSteps(n int, asVoter bool) []Step {
	steps := []Step{{What: "remove a follower", Voters: n - 1, Up: n - 1}}
	if asVoter {
		// The new voter counts towards the quorum at once but cannot vote until it
		// has the data: the window in which one more failure stops the cluster.
		return append(steps, Step{What: "add a fresh member as a voter", Voters: n, Up: n - 1},
			Step{What: "the new voter catches up", Voters: n, Up: n})
	}
	return append(steps, Step{What: "add a fresh member as a learner", Voters: n - 1, Up: n - 1},
		Step{What: "promote the learner once it has caught up", Voters: n, Up: n})
}

// restartSteps are the steps of a rolling restart: each member down in turn.
func restartSteps(n int) []Step {
	return []Step{{What: "stop one member", Voters: n, Up: n - 1}, {What: "restart it", Voters: n, Up: n}}
}

// checkSurvey refuses a drill on a cluster that is not healthy, has fewer than
// MinVoters voters or a learner already, or where a step would leave fewer voters
// up than the quorum.
func checkSurvey(s *Survey, steps func(n int) []Step) error {
	var unhealthy, learners []string
	for _, m := range s.Members {
		if !m.Healthy {
			unhealthy = append(unhealthy, m.Name)
		}
		if m.IsLearner {
			learners = append(learners, m.Name)
		}
	}
	switch {
	case s.Leader == 0:
		return fmt.Errorf("%w: the members agree on no leader", ErrRefused)
	case len(unhealthy) > 0:
		return fmt.Errorf("%w: member(s) %s unhealthy (no Status, an alarm, or another leader)", ErrRefused, strings.Join(unhealthy, ", "))
	case len(learners) > 0:
		return fmt.Errorf("%w: the cluster already has learner(s) %s; finish or undo that change first", ErrRefused, strings.Join(learners, ", "))
	}
	n := len(s.Voters())
	if n < MinVoters {
		return fmt.Errorf("%w: %d voting member(s); a drill needs at least %d so that the cluster survives it", ErrRefused, n, MinVoters)
	}
	for _, st := range steps(n) {
		if st.Up < quorum(st.Voters) {
			return fmt.Errorf("%w: step %q would leave %d of %d voters up, under the quorum of %d", ErrRefused, st.What, st.Up, st.Voters, quorum(st.Voters))
		}
	}
	return nil
}

// pickFollower is the member to replace: the one named, which must be a healthy
// voting follower, or else the last follower by name.
func pickFollower(s *Survey, name string) (MemberInfo, error) {
	if name != "" {
		m, ok := s.ByName(name)
		switch {
		case !ok:
			return MemberInfo{}, fmt.Errorf("%w: no member named %q", ErrRefused, name)
		case m.IsLeader:
			return MemberInfo{}, fmt.Errorf("%w: %s is the leader; a drill never removes the leader", ErrRefused, name)
		case m.IsLearner:
			return MemberInfo{}, fmt.Errorf("%w: %s is a learner", ErrRefused, name)
		}
		return m, nil
	}
	var pick MemberInfo
	for _, m := range s.Voters() {
		if !m.IsLeader && m.Name >= pick.Name {
			pick = m
		}
	}
	if pick.ID == 0 {
		return MemberInfo{}, fmt.Errorf("%w: no follower to replace", ErrRefused)
	}
	return pick, nil
}
