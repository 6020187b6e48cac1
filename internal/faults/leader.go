package faults

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// MoveLeader hands leadership to another member after a delay, through etcd's
// own API (what `etcdctl move-leader` calls): a leader change at a known time, the
// members all healthy. It returns at once; cleanup waits for the move, and the
// test fails if it did not happen.
func MoveLeader(t testing.TB, endpoints []string, delay time.Duration) {
	t.Helper()
	after(t, delay, "leader move", func() error { return moveLeader(endpoints) })
}

// moveLeader asks the leader to transfer leadership to the first follower.
func moveLeader(endpoints []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var leader string
	var target uint64
	for _, ep := range endpoints {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return err
		}
		st, err := cli.Status(ctx, ep)
		cli.Close()
		if err != nil {
			return fmt.Errorf("status of %s: %w", ep, err)
		}
		if st.Leader == st.Header.MemberId {
			leader = ep
		} else if target == 0 {
			target = st.Header.MemberId
		}
	}
	if leader == "" || target == 0 {
		return fmt.Errorf("no leader and follower among %v", endpoints)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{leader}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.MoveLeader(ctx, target); err != nil {
		return fmt.Errorf("move leader from %s to %x: %w", leader, target, err)
	}
	return nil
}
