package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Prepare names a fresh member (m3, m4, ... after the initial ones) and reserves
// its client and peer URLs and an empty data dir of its own, without starting
// it: the caller adds it to the cluster's membership first (MemberAdd or
// MemberAddAsLearner with PeerURL), then starts it with Join.
func (c *Cluster) Prepare() (*Member, error) {
	if !c.cfg.Processes {
		return nil, errors.New("embedded etcd: members can join only in process mode")
	}
	name := fmt.Sprintf("m%d", c.next)
	c.next++
	m, err := c.newMember(name)
	if err != nil {
		return nil, err
	}
	mport, err := freePort()
	if err != nil {
		return nil, err
	}
	m.MetricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", mport)
	// A data dir left by an earlier member of that name would make etcd restart it
	// instead of joining.
	if err := os.RemoveAll(m.DataDir); err != nil {
		return nil, fmt.Errorf("embedded etcd: clear %s: %w", m.DataDir, err)
	}
	return m, nil
}

// Join starts a prepared member with --initial-cluster-state=existing and the
// cluster as its membership now stands (initial is etcd's --initial-cluster: every
// member's name=peer URL, the new one's included). It returns once the process
// runs; a new member serves clients only once it has caught up with the leader,
// so the caller polls it for that (WaitHealthy, or Status for a learner).
func (c *Cluster) Join(m *Member, initial string) error {
	argv := m.args(c.cfg, initial, "existing")
	if m.MetricsURL != "" {
		argv = append(argv, "--listen-metrics-urls="+strings.TrimSuffix(m.MetricsURL, "/metrics"))
	}
	if err := m.startProcess(c.cfg, argv); err != nil {
		return err
	}
	c.members = append(c.members, m)
	return nil
}

// Remove stops m (a member already removed from the membership, or one whose
// Join failed) and deletes its data dir, so the cluster no longer lists it.
func (c *Cluster) Remove(m *Member) error {
	m.Stop()
	c.members = slices.DeleteFunc(c.members, func(x *Member) bool { return x == m })
	if err := os.RemoveAll(m.DataDir); err != nil {
		return fmt.Errorf("embedded etcd: remove %s: %w", m.DataDir, err)
	}
	return nil
}

// WaitHealthy waits until m answers /health with "true" (it has a leader and
// serves linearizable reads), for at most the cluster's start timeout.
func (c *Cluster) WaitHealthy(ctx context.Context, m *Member) error {
	hc, err := healthClient(c.cfg.TLS)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StartTimeout)
	defer cancel()
	if err := m.waitHealthy(ctx, hc); err != nil {
		return fmt.Errorf("embedded etcd member %s did not become healthy (log: %s): %w", m.Name, m.LogFile, err)
	}
	return nil
}

// StopGracefully stops a member's process with SIGTERM, as a service manager
// would, and waits for it to exit; Restart starts it again.
func (m *Member) StopGracefully() error {
	if m.cmd == nil {
		return errors.New("member runs in-process; start the cluster with Processes")
	}
	select {
	case <-m.exited:
		return nil
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot handle SIGTERM
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("embedded etcd: stop %s: %w", m.Name, err)
	}
	select {
	case <-m.exited:
	case <-time.After(10 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.exited
	}
	return nil
}

// Restart starts a stopped member again from its data dir, with the command line
// it was first started with (etcd ignores the --initial-cluster flags once the
// data dir holds a member), and returns once the process runs.
func (c *Cluster) Restart(m *Member) error {
	if m.argv == nil {
		return errors.New("member runs in-process; start the cluster with Processes")
	}
	select {
	case <-m.exited:
	default:
		return fmt.Errorf("embedded etcd: member %s is still running", m.Name)
	}
	return m.startProcess(c.cfg, m.argv)
}
