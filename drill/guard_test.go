package drill

import (
	"errors"
	"os"
	"strings"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
)

func survey3(mod func(s *Survey)) *Survey {
	s := &Survey{Leader: 1, Members: []MemberInfo{
		{ID: 1, Name: "a", IsLeader: true, Healthy: true},
		{ID: 2, Name: "b", Healthy: true},
		{ID: 3, Name: "c", Healthy: true},
	}}
	if mod != nil {
		mod(s)
	}
	return s
}

func TestCheckSurvey(t *testing.T) {
	for _, tc := range []struct {
		name    string
		s       *Survey
		asVoter bool
		want    string // "" means allowed
	}{
		{"three healthy voters", survey3(nil), false, ""},
		{"three healthy voters, as voter", survey3(nil), true, ""},
		{"no leader", survey3(func(s *Survey) { s.Leader = 0 }), false, "no leader"},
		{"unhealthy member", survey3(func(s *Survey) { s.Members[2].Healthy = false }), false, "c unhealthy"},
		{"a learner already", survey3(func(s *Survey) {
			s.Members = append(s.Members, MemberInfo{ID: 4, Name: "d", IsLearner: true, Healthy: true})
		}), false, "already has learner(s) d"},
		{"two voters", survey3(func(s *Survey) { s.Members = s.Members[:2] }), false, "2 voting member(s)"},
		{"one voter", survey3(func(s *Survey) { s.Members = s.Members[:1] }), true, "1 voting member(s)"},
		{"five voters", survey3(func(s *Survey) {
			s.Members = append(s.Members, MemberInfo{ID: 4, Name: "d", Healthy: true}, MemberInfo{ID: 5, Name: "e", Healthy: true})
		}), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkSurvey(tc.s, func(n int) []Step { return replaceSteps(n, tc.asVoter) })
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a refusal containing %q", err, tc.want)
			}
		})
	}
}

// Every step of both drills keeps a quorum of voters up on a cluster of at least
// MinVoters, and the guard's arithmetic refuses a step that would not.
func TestStepsKeepQuorum(t *testing.T) {
	for n := MinVoters; n <= 7; n++ {
		for _, steps := range [][]Step{replaceSteps(n, false), replaceSteps(n, true), restartSteps(n)} {
			for _, st := range steps {
				if st.Up < quorum(st.Voters) {
					t.Errorf("n=%d: step %q leaves %d of %d up", n, st.What, st.Up, st.Voters)
				}
			}
		}
	}
	bad := func(int) []Step { return []Step{{What: "lose two", Voters: 3, Up: 1}} }
	if err := checkSurvey(survey3(nil), bad); err == nil || !strings.Contains(err.Error(), "under the quorum of 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestPickFollower(t *testing.T) {
	s := survey3(nil)
	if m, err := pickFollower(s, ""); err != nil || m.Name != "c" {
		t.Fatalf("pick = %v, %v; want c", m.Name, err)
	}
	if m, err := pickFollower(s, "b"); err != nil || m.Name != "b" {
		t.Fatalf("pick b = %v, %v", m.Name, err)
	}
	for name, want := range map[string]string{"a": "is the leader", "x": "no member named"} {
		if _, err := pickFollower(s, name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("pick %s: err = %v, want %q", name, err, want)
		}
	}
}

func TestInitialCluster(t *testing.T) {
	ms := []*pb.Member{
		{ID: 1, Name: "a", PeerURLs: []string{"http://h1:2380"}},
		{ID: 9, PeerURLs: []string{"http://h9:2380"}},
	}
	if got, want := initialCluster(ms, 9, "new"), "a=http://h1:2380,new=http://h9:2380"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := fillName("systemctl restart etcd@%s", "m1"); got != "systemctl restart etcd@m1" {
		t.Fatalf("fillName = %q", got)
	}
}

// TestCommands: the user's commands get etcd's environment for the new member
// and the member's name for %s; a failing command's output is in the error.
func TestCommands(t *testing.T) {
	dir := t.TempDir()
	c := &Commands{New: Candidate{Name: "m9", PeerURL: "http://h:2380", ClientURL: "http://h:2379"},
		StartCmd:   "echo $ETCD_NAME $ETCD_INITIAL_CLUSTER_STATE $ETCD_INITIAL_CLUSTER $ETCD_INITIAL_ADVERTISE_PEER_URLS > " + dir + "/start",
		RestartCmd: "echo restart %s > " + dir + "/restart; echo boom >&2; exit 3"}
	cand, err := c.Provision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context(), cand, "a=http://a:2380,m9=http://h:2380"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(dir + "/start")
	if got, want := strings.TrimSpace(string(b)), "m9 existing a=http://a:2380,m9=http://h:2380 http://h:2380"; got != want {
		t.Fatalf("start saw %q, want %q", got, want)
	}
	err = c.Restart(t.Context(), "m1")
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("restart err = %v", err)
	}
	if b, _ := os.ReadFile(dir + "/restart"); strings.TrimSpace(string(b)) != "restart m1" {
		t.Fatalf("restart ran %q", b)
	}
	if err := (&Commands{}).Retire(t.Context(), "m1"); err != nil {
		t.Fatalf("retire without a command: %v", err)
	}
	if _, err := (&Commands{}).Provision(t.Context()); err == nil {
		t.Fatal("provision without --new-member accepted")
	}
}
