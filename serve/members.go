package serve

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// MemberState is what one member said on the canary's own connection to it.
type MemberState struct {
	// Name is the member's name, or its ID in hex when it has none (not
	// started yet); Endpoint the client URL the canary asked.
	Name, ID, Endpoint string
	// Up is whether it answered Status within the command timeout; Latency is
	// that round trip.
	Up      bool
	Latency time.Duration
	// IsLeader and HasLeader are its own view: whether it leads, and whether
	// it knows a leader.
	IsLeader, HasLeader bool
	Version             string
	DBSize              int64
	// Alarms are the cluster's alarms raised on this member (NOSPACE, CORRUPT).
	Alarms []string
	Err    error
}

// members probes each member on a connection of its own, all at once, each
// bounded by the command timeout: a member that does not answer is down,
// whatever the others say. The member list is read anew (serializable, so it
// answers without a leader) and kept for when no member answers it.
func (p *Prober) members(ctx context.Context) []MemberState {
	p.refreshMembers(ctx)
	p.mu.Lock()
	list := slices.Clone(p.memberList)
	p.mu.Unlock()
	alarms := p.alarms(ctx)
	out := make([]MemberState, len(list))
	var wg sync.WaitGroup
	for i, m := range list {
		wg.Go(func() {
			out[i] = p.member(ctx, m)
			out[i].Alarms = alarms[m.ID]
		})
	}
	wg.Wait()
	return out
}

// refreshMembers reads the member list on the session's connection.
func (p *Prober) refreshMembers(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, p.CommandTimeout)
	defer cancel()
	resp, err := p.Target.Client.MemberList(cctx, clientv3.WithSerializable())
	if err != nil {
		return
	}
	list := make([]*pb.Member, 0, len(resp.Members))
	for _, m := range resp.Members {
		if len(m.ClientURLs) > 0 {
			list = append(list, m)
		}
	}
	p.mu.Lock()
	p.memberList = list
	p.mu.Unlock()
}

// alarms lists the cluster's alarms by member ID; none when it cannot tell.
func (p *Prober) alarms(ctx context.Context) map[uint64][]string {
	cctx, cancel := context.WithTimeout(ctx, p.CommandTimeout)
	defer cancel()
	resp, err := p.Target.Client.AlarmList(cctx)
	if err != nil {
		return nil
	}
	out := map[uint64][]string{}
	for _, a := range resp.Alarms {
		out[a.MemberID] = append(out[a.MemberID], a.Alarm.String())
	}
	return out
}

// member asks one member its Status on its own client.
func (p *Prober) member(ctx context.Context, m *pb.Member) MemberState {
	s := MemberState{Name: m.Name, ID: strconv.FormatUint(m.ID, 16), Endpoint: m.ClientURLs[0]}
	if s.Name == "" {
		s.Name = s.ID
	}
	cli, err := p.memberClient(s.Endpoint)
	if err != nil {
		s.Err = err
		return s
	}
	cctx, cancel := context.WithTimeout(ctx, p.CommandTimeout)
	defer cancel()
	start := time.Now()
	st, err := cli.Status(cctx, s.Endpoint)
	if err != nil {
		s.Err = fmt.Errorf("member %s: %w", s.Name, err)
		return s
	}
	s.Up, s.Latency = true, time.Since(start)
	s.IsLeader, s.HasLeader = st.Leader == m.ID, st.Leader != 0
	s.Version, s.DBSize = st.Version, st.DbSize
	return s
}

// memberClient is the member's own client, opened once (without blocking:
// a member that is down makes its requests time out, not the dial).
func (p *Prober) memberClient(ep string) (*clientv3.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cli, ok := p.memberClients[ep]; ok {
		return cli, nil
	}
	cfg := clientv3.Config{Endpoints: []string{ep}, DialTimeout: p.DialTimeout, TLS: p.Target.TLS,
		Username: p.Target.Client.Username, Password: p.Target.Client.Password, Logger: p.Target.Client.GetLogger()}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", ep, err)
	}
	if p.memberClients == nil {
		p.memberClients = map[string]*clientv3.Client{}
	}
	p.memberClients[ep] = cli
	return cli, nil
}

// closeMembers closes the members' clients.
func (p *Prober) closeMembers() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ep, cli := range p.memberClients {
		cli.Close()
		delete(p.memberClients, ep)
	}
}
