package faults

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// PeerURLApplied waits until each member's own member list (a serializable read
// of its applied state) shows member id at peerURL: after a MemberUpdate, a
// member that has not applied it yet would redial the old URL.
func PeerURLApplied(endpoints []string, id uint64, peerURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, ep := range endpoints {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return err
		}
		applied := func() bool {
			resp, err := cli.MemberList(ctx, clientv3.WithSerializable())
			if err != nil {
				return false
			}
			for _, m := range resp.Members {
				if m.ID == id && len(m.PeerURLs) == 1 && m.PeerURLs[0] == peerURL {
					return true
				}
			}
			return false
		}
		for !applied() {
			if ctx.Err() != nil {
				cli.Close()
				return fmt.Errorf("member at %s has not applied the peer URL %s after 30 s", ep, peerURL)
			}
			time.Sleep(20 * time.Millisecond)
		}
		cli.Close()
	}
	return nil
}
