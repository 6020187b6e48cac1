package serve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/profiles"
)

// Op names of the canary's load in run files and etcdperf_probe_latency_seconds.
const (
	OpWrite = "write"
	OpRange = "range"
)

// Identity is who a canary is: its keys live under Prefix + Instance + "/",
// and it writes exactly one of them, Key, whose value starts with Marker. Two
// canaries with different instances never touch each other's keys; a restart
// with the same instance recognises the key an earlier run of itself left.
type Identity struct {
	Prefix, Instance string
}

// Dir is the per-instance prefix: the canary owns every key under it.
func (id Identity) Dir() string { return id.Prefix + id.Instance + "/" }

// Key is the one key the canary writes (once per probe) and reads.
func (id Identity) Key() string { return id.Dir() + "probe" }

// Marker starts the value of Key: what says "written by this canary".
func (id Identity) Marker() string { return "etcdperf-serve " + id.Instance + " " }

// Check refuses an identity whose keys could reach beyond its own directory.
func (id Identity) Check() error {
	switch {
	case id.Prefix == "" || id.Prefix == "/":
		return errors.New("--prefix must name a prefix of its own, not the whole key space")
	case id.Instance == "":
		return errors.New("--instance must not be empty")
	case strings.Contains(id.Instance, "/"):
		return fmt.Errorf("--instance %q must not hold a /: it names one directory under --prefix", id.Instance)
	}
	return nil
}

// Foreign lists the keys under Dir that this canary did not write: anything
// but Key, and Key itself when its value lacks the marker. At most limit keys
// are read (keys only, one request); n is their count.
func (id Identity) Foreign(ctx context.Context, kv clientv3.KV, limit int64) (keys []string, n int64, err error) {
	resp, err := kv.Get(ctx, id.Dir(), clientv3.WithPrefix(), clientv3.WithLimit(limit+1))
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", id.Dir(), err)
	}
	n = resp.Count
	for _, kv := range resp.Kvs {
		if string(kv.Key) == id.Key() && strings.HasPrefix(string(kv.Value), id.Marker()) {
			n--
			continue
		}
		if int64(len(keys)) < limit {
			keys = append(keys, string(kv.Key))
		}
	}
	return keys, n, nil
}

// Load is the canary's probe load (a bench.Workload): paced writes and
// linearizable reads of its one key, in WriteShare and 1 - WriteShare.
//
// A write is a Txn whose compare never holds (the key's version below 0)
// with a put of the key as its success branch. It is not read-only, so etcd
// proposes it through raft, appends it to the WAL with an fsync on every
// member and applies it, as it does a put; at apply its compare fails and the
// empty failure branch runs, so it writes no revision (see docs/canary.md for
// the etcd source). Prepare writes the key once per probe, bound to Lease:
// the probe's one revision.
type Load struct {
	Clients    []*clientv3.Client
	ID         Identity
	Value      string // of the key, after the marker
	Lease      clientv3.LeaseID
	WriteShare float64
	// Wrote is the bytes of key and value of Prepare's put once it succeeded
	// (one revision), else 0.
	Wrote int
}

// NewLoad is the load of profile p: its rate, clients and duration apply as
// they are; its puts become writes and its ranges reads of the one key. A
// profile of any other op (watch, txn, lease, list) is refused: serve probes,
// bench loads.
func NewLoad(p *profiles.Profile, clients []*clientv3.Client, id Identity) (*Load, error) {
	var put, rng float64
	for _, op := range p.Ops {
		switch op.Op {
		case profiles.OpPut:
			put += op.Ratio
		case profiles.OpRange:
			rng += op.Ratio
		default:
			return nil, fmt.Errorf("profile %s has %s requests: serve probes with puts and gets of one key of its own (bench runs any profile)", p.Name, op.Op)
		}
	}
	if put+rng <= 0 {
		return nil, fmt.Errorf("profile %s has no puts or ranges", p.Name)
	}
	size := int(p.Values.Size)
	if size == 0 {
		size = int(p.Values.Max)
	}
	if err := bench.CheckRequestSize(len(id.Key()), size); err != nil {
		return nil, fmt.Errorf("profile %s: %w", p.Name, err)
	}
	return &Load{Clients: clients, ID: id, Value: strings.Repeat("x", size), WriteShare: put / (put + rng)}, nil
}

// Ops reports the writes and the reads.
func (l *Load) Ops() []bench.OpKind {
	return []bench.OpKind{{Name: OpWrite, Share: l.WriteShare}, {Name: OpRange, Share: 1 - l.WriteShare}}
}

// Prepare writes the key once: its value is the marker and the time (not the
// profile's value, which the writes carry: the revision each probe leaves stays
// small), bound to the lease, so that a canary killed before it could delete
// its key leaves it to expire with the lease.
func (l *Load) Prepare(ctx context.Context, _ bench.Emit) error {
	var opts []clientv3.OpOption
	if l.Lease != clientv3.NoLease {
		opts = append(opts, clientv3.WithLease(l.Lease))
	}
	v := l.ID.Marker() + time.Now().UTC().Format(time.RFC3339)
	if _, err := l.Clients[0].Put(ctx, l.ID.Key(), v, opts...); err != nil {
		return fmt.Errorf("put %s: %w", l.ID.Key(), err)
	}
	l.Wrote = len(l.ID.Key()) + len(v)
	return nil
}

// Worker alternates writes and reads so that the first n requests hold
// WriteShare × n writes, rounded.
func (l *Load) Worker(id int) bench.Op {
	cli := l.Clients[id%len(l.Clients)]
	key, val := l.ID.Key(), l.Value
	never := clientv3.Compare(clientv3.Version(key), "<", 0)
	sent := int64(len(key) + len(val))
	return func(ctx context.Context, seq uint64) bench.Outcome {
		if l.writes(seq+1) > l.writes(seq) {
			_, err := cli.Txn(ctx).If(never).Then(clientv3.OpPut(key, val)).Commit()
			return bench.Outcome{Kind: 0, Sent: sent, Err: err}
		}
		resp, err := cli.Get(ctx, key)
		var recv, keys int64
		if err == nil {
			keys = int64(len(resp.Kvs))
			for _, kv := range resp.Kvs {
				recv += int64(len(kv.Key) + len(kv.Value))
			}
		}
		return bench.Outcome{Kind: 1, Sent: int64(len(key)), Recv: recv, Keys: keys, Err: err}
	}
}

// writes is how many of the first n requests are writes.
func (l *Load) writes(n uint64) uint64 { return uint64(float64(n)*l.WriteShare + 0.5) }
