package drill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/etcdperf/etcdperf/cluster"
)

// Candidate is a fresh member before it joins: its name and URLs.
type Candidate struct {
	Name      string `json:"name"`
	PeerURL   string `json:"peer_url"`
	ClientURL string `json:"client_url"`
	// MetricsURL is the member's /metrics when it serves them apart from its client
	// URL (etcd's --listen-metrics-urls), so before it serves clients; "" if not.
	MetricsURL string `json:"metrics_url,omitempty"`
}

// Members starts and retires the processes behind membership changes.
type Members interface {
	// Provision names a fresh member and reserves its URLs and an empty data dir.
	Provision(ctx context.Context) (Candidate, error)
	// Start runs a provisioned member that the membership already lists; initial
	// is etcd's --initial-cluster as the membership now stands.
	Start(ctx context.Context, c Candidate, initial string) error
	// Retire stops a member removed from the membership and discards its data.
	Retire(ctx context.Context, name string) error
}

// Restarter restarts one member by name and returns once the restart was issued.
type Restarter interface {
	Restart(ctx context.Context, name string) error
}

// initialCluster is etcd's --initial-cluster for a member that joins: every
// member's name=peer URL, the new one (still unnamed in the list) as name.
func initialCluster(members []*pb.Member, newID uint64, name string) string {
	var parts []string
	for _, m := range members {
		n := m.Name
		if m.ID == newID {
			n = name
		}
		for _, u := range m.PeerURLs {
			parts = append(parts, n+"="+u)
		}
	}
	return strings.Join(parts, ",")
}

// Embedded runs drills on the embedded cluster: fresh members are new processes
// in their own data dirs under the cluster's folder.
type Embedded struct {
	Cluster  *cluster.Cluster
	prepared map[string]*cluster.Member
}

func (e *Embedded) member(name string) (*cluster.Member, error) {
	for _, m := range e.Cluster.Members() {
		if m.Name == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("embedded cluster has no member %q", name)
}

// Provision prepares a member process of the embedded cluster.
func (e *Embedded) Provision(context.Context) (Candidate, error) {
	m, err := e.Cluster.Prepare()
	if err != nil {
		return Candidate{}, err
	}
	if e.prepared == nil {
		e.prepared = map[string]*cluster.Member{}
	}
	e.prepared[m.Name] = m
	return Candidate{Name: m.Name, PeerURL: m.PeerURL, ClientURL: m.ClientURL, MetricsURL: m.MetricsURL}, nil
}

// Start starts the prepared member's process.
func (e *Embedded) Start(_ context.Context, c Candidate, initial string) error {
	m, ok := e.prepared[c.Name]
	if !ok {
		return fmt.Errorf("member %q was not provisioned", c.Name)
	}
	delete(e.prepared, c.Name)
	return e.Cluster.Join(m, initial)
}

// Retire stops the member's process and deletes its data dir.
func (e *Embedded) Retire(_ context.Context, name string) error {
	m, err := e.member(name)
	if err != nil {
		return err
	}
	return e.Cluster.Remove(m)
}

// Restart stops the member with SIGTERM and starts it again from its data dir.
func (e *Embedded) Restart(_ context.Context, name string) error {
	m, err := e.member(name)
	if err != nil {
		return err
	}
	if err := m.StopGracefully(); err != nil {
		return err
	}
	return e.Cluster.Restart(m)
}

// Commands runs drills on a user's cluster through commands the user gives:
// StartCmd starts the fresh member (named by New) with etcd's own environment
// variables set (ETCD_NAME, ETCD_INITIAL_CLUSTER, ETCD_INITIAL_CLUSTER_STATE=existing,
// ETCD_INITIAL_ADVERTISE_PEER_URLS), and RestartCmd restarts a member, with %s
// replaced by its name. A removed member stops itself (etcd exits once it learns
// it was removed); RetireCmd, when given, then discards it.
type Commands struct {
	New        Candidate
	StartCmd   string
	RestartCmd string
	RetireCmd  string
}

// Provision returns the member the user named.
func (c *Commands) Provision(context.Context) (Candidate, error) {
	if c.New.Name == "" || c.New.PeerURL == "" || c.StartCmd == "" {
		return Candidate{}, errors.New("replacing a member of your cluster needs --new-member NAME=PEER_URL,CLIENT_URL and --start-cmd")
	}
	return c.New, nil
}

// Start runs StartCmd with the new member's etcd environment.
func (c *Commands) Start(ctx context.Context, m Candidate, initial string) error {
	return runShell(ctx, fillName(c.StartCmd, m.Name), "ETCD_NAME="+m.Name, "ETCD_INITIAL_CLUSTER="+initial,
		"ETCD_INITIAL_CLUSTER_STATE=existing", "ETCD_INITIAL_ADVERTISE_PEER_URLS="+m.PeerURL)
}

// Retire runs RetireCmd, if any.
func (c *Commands) Retire(ctx context.Context, name string) error {
	if c.RetireCmd == "" {
		return nil
	}
	return runShell(ctx, fillName(c.RetireCmd, name))
}

// Restart runs RestartCmd for the member.
func (c *Commands) Restart(ctx context.Context, name string) error {
	if c.RestartCmd == "" {
		return errors.New("restarting a member of your cluster needs --restart-cmd")
	}
	return runShell(ctx, fillName(c.RestartCmd, name))
}

// fillName replaces %s in a command with the member's name.
func fillName(cmd, name string) string { return strings.ReplaceAll(cmd, "%s", name) }

func runShell(ctx context.Context, command string, env ...string) error {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 200 {
			msg = msg[len(msg)-200:]
		}
		return fmt.Errorf("%q: %w: %s", command, err, msg)
	}
	return nil
}

// ParseCandidate reads a fresh member as NAME=PEER_URL,CLIENT_URL (--new-member).
func ParseCandidate(s string) (Candidate, error) {
	name, urls, ok := strings.Cut(s, "=")
	peer, client, ok2 := strings.Cut(urls, ",")
	if !ok || !ok2 || name == "" || peer == "" || client == "" {
		return Candidate{}, fmt.Errorf("a new member is NAME=PEER_URL,CLIENT_URL, not %q", s)
	}
	return Candidate{Name: name, PeerURL: peer, ClientURL: client}, nil
}
