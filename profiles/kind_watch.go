package profiles

import (
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	fc "github.com/etcdperf/etcdperf/internal/flagcheck"
)

var _ = register(30, watchKind())

func watchKind() *Kind {
	return &Kind{
		Name:  OpWatch,
		Short: "Watch keys while putting to them; latency is from each put's send to each watcher",
		Long: `watch opens --watchers watchers over --streams gRPC streams on --watched-keys keys, then
puts to those keys in turn (at --rate, or as fast as --clients go). Each value carries its
send time, so the latency of the "watch" op is from the put's send to the event's arrival at
each watcher. Missed events (acknowledged puts a watcher never saw) and out-of-order events
(revisions going backwards) are counted. The puts are reported as the "put" op.`,
		Command: func(f *pflag.FlagSet) Command {
			var op Op
			watchFlags(f, &op, 10, "")
			return Command{New: func(clis []*clientv3.Client, b Base) (bench.Workload, error) {
				return bench.NewWatch(clis, bench.WatchConfig{
					Prefix: b.Prefix, KeySize: b.KeySize, ValSize: b.ValSize,
					Watchers: op.Watchers, Streams: op.Streams, WatchedKeys: op.WatchedKeys, PrefixWatch: op.Prefix,
				})
			}}
		},
		Rules: map[string]fc.Constraint{
			"streams":      {Kind: fc.Positive},
			"watched-keys": {Kind: fc.Positive},
			"watchers":     {Kind: fc.NonNegative, Why: "0 is no watchers"},
		},
		InProfile: true,
		Fields:    []string{"watchers", "streams", "watched_keys", "prefix"},
		Check: func(c *checker, p *Profile, op Op, at func(string) string) {
			if op.Watchers < 1 || op.Watchers > 100_000 {
				c.add(at("watchers"), "must be between 1 and 100000, got %d", op.Watchers)
			}
			if op.Streams < 0 || op.Streams > op.Watchers {
				c.add(at("streams"), "must be between 1 and the %d watchers, got %d", op.Watchers, op.Streams)
			}
			if op.Prefix && op.WatchedKeys != 0 {
				c.add(at("watched_keys"), "a prefix watch watches every key; watched_keys does not apply")
			}
			if op.WatchedKeys > p.keysPerBucket() {
				c.add(at("watched_keys"), "must be at most the %d keys of one value size, got %d", p.keysPerBucket(), op.WatchedKeys)
			}
			if p.Values.smallest() < stampBytes {
				c.add(at("op"), "watched values carry their send time: values must be at least %d bytes", stampBytes)
			}
		},
		MixFlags: func(f *pflag.FlagSet, opts *Op) { watchFlags(f, opts, 0, " (0: no watch load)") },
	}
}

// watchFlags shape watchers (bench watch and mixed).
func watchFlags(f *pflag.FlagSet, op *Op, watchers int, what string) {
	f.IntVar(&op.Watchers, "watchers", watchers, "watchers in all"+what)
	f.IntVar(&op.Streams, "streams", 1, "gRPC watch streams the watchers spread over (over the --conns connections)")
	f.Uint64Var(&op.WatchedKeys, "watched-keys", 1, "keys the watchers spread over")
	f.BoolVar(&op.Prefix, "watch-prefix", false, "every watcher watches the whole prefix, as kube-apiserver's watch cache watches a resource: each event reaches every watcher")
}
