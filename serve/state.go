package serve

import (
	"context"
	"errors"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// MinLeaseTTL is the shortest lease the canary takes (seconds): a few of etcd's
// election timeouts (1 s by default), so that a leader change does not expire it.
const MinLeaseTTL = 10

// ClusterState is what one member's Status and a few reads say of the
// cluster's database, for the footprint series.
type ClusterState struct {
	Known bool
	// DBSize and DBSizeInUse are the member's backend file and its used part (bytes).
	DBSize, DBSizeInUse int64
	// Revision is the cluster's current revision; CompactRevision the oldest
	// revision still readable, 0 when none was ever compacted (CompactKnown).
	Revision, CompactRevision int64
	CompactKnown              bool
}

// Uncompacted is how many revisions the cluster keeps: every one since the
// last compaction, each a copy of a key's value in its database.
func (s ClusterState) Uncompacted() int64 {
	return s.Revision - max(s.CompactRevision, 1)
}

// state reads the cluster's footprint from st and the oldest readable
// revision. Reads only: the canary never compacts nor defragments.
func (p *Prober) state(ctx context.Context, st *pb.StatusResponse) ClusterState {
	if st == nil {
		return ClusterState{}
	}
	s := ClusterState{Known: true, DBSize: st.DbSize, DBSizeInUse: st.DbSizeInUse, Revision: st.Header.GetRevision()}
	p.mu.Lock()
	hint := p.compact
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, p.CommandTimeout)
	defer cancel()
	c, err := compactRevision(ctx, p.Target.Client, p.ID.Key(), s.Revision, hint)
	if err == nil {
		s.CompactRevision, s.CompactKnown = c, true
		p.mu.Lock()
		p.compact = c
		p.mu.Unlock()
	}
	return s
}

// compactRevision finds the cluster's compact revision in [hint, rev]: the
// oldest revision a range can still read (etcd answers an older one with
// ErrCompacted), 0 when revision 1 still reads. Serializable count-only reads
// of one key, about log2(rev) of them, two when hint is still right.
func compactRevision(ctx context.Context, kv clientv3.KV, key string, rev, hint int64) (int64, error) {
	readable := func(r int64) (bool, error) {
		_, err := kv.Get(ctx, key, clientv3.WithRev(r), clientv3.WithSerializable(), clientv3.WithCountOnly())
		if errors.Is(err, rpctypes.ErrCompacted) {
			return false, nil
		}
		return err == nil, err
	}
	if ok, err := readable(1); err != nil || ok {
		return 0, err
	}
	lo, hi := int64(1), rev // lo unreadable, hi readable
	if hint > 1 && hint <= rev {
		ok, err := readable(hint)
		if err != nil {
			return 0, err
		}
		if !ok {
			lo = hint // compacted further since
		} else if before, err := readable(hint - 1); err != nil || !before {
			return hint, err // unchanged
		} else {
			hi = hint // compacted below the hint: a restored cluster
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := readable(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
