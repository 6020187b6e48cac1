package profiles

import (
	"cmp"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	fc "github.com/etcdperf/etcdperf/internal/flagcheck"
)

var _ = register(60, leaseKind())

func leaseKind() *Kind {
	return &Kind{
		Name:  OpLease,
		Short: "Grant leases, attach puts, keep them alive on a stream, revoke them; latency per call",
		Long: `lease runs the life of leases, one call per request: grant (--lease-ttl), --lease-keys
puts attached to the lease (kube-apiserver attaches the events it writes to a lease for
their TTL), --keepalives renewals on the worker's LeaseKeepAlive stream, and a revoke.
Each call kind is its own op: lease-grant, lease-put, lease-keepalive, lease-revoke.
--expire leaves the leases to expire instead, as events' leases do; the server then
deletes their keys. With --expire and --keepalives 0 the workers share their leases,
as an apiserver attaches the events of all its requests to one lease: one grant per
1+--lease-keys calls over all workers. Leases still alive after the run are revoked
(expiring ones that end within 10 s are left to expire).`,
		Example: `  etcdperf bench lease --rate 300 --lease-ttl 60s --lease-keys 2 --keepalives 3
  etcdperf bench lease --lease-ttl 5s --lease-keys 10 --keepalives 0 --expire`,
		Command: func(f *pflag.FlagSet) Command {
			cfg := bench.LeaseConfig{TTL: 60 * time.Second, KeysPerLease: 1, KeepAlives: 1}
			f.DurationVar(&cfg.TTL, "lease-ttl", cfg.TTL, "TTL of each lease, whole seconds (kube-apiserver's --event-ttl is 1h)")
			f.IntVar(&cfg.KeysPerLease, "lease-keys", cfg.KeysPerLease, "puts attached to each lease")
			f.IntVar(&cfg.KeepAlives, "keepalives", cfg.KeepAlives, "keep-alives per lease before it is revoked")
			f.BoolVar(&cfg.Expire, "expire", false, "let leases expire instead of revoking them")
			return Command{
				Check: func(b Base) error {
					cfg.Prefix, cfg.ValSize = b.Prefix, b.ValSize
					return cfg.Check()
				},
				New: func(clis []*clientv3.Client, b Base) (bench.Workload, error) {
					cfg.Prefix = b.Prefix
					return bench.NewLease(clis, cfg)
				},
			}
		},
		Rules: map[string]fc.Constraint{
			"lease-ttl":  {Kind: fc.Positive},
			"keepalives": {Kind: fc.NonNegative},
			"lease-keys": {Kind: fc.NonNegative},
		},
		InProfile: true,
		Paced:     true,
		Fields:    []string{"leases", "ttl", "lease_keys", "keepalives", "expire", "value_size"},
		Check: func(c *checker, _ *Profile, op Op, at func(string) string) {
			if op.Leases < 0 || op.Leases > 100_000 {
				c.add(at("leases"), "must be between 1 and 100000, got %d", op.Leases)
			}
			if op.Leases > 0 && (op.LeaseKeys != 0 || op.KeepAlives != 0 || op.Expire) {
				c.add(at("leases"), "a pool of leases is kept alive; lease_keys, keepalives and expire belong to the lease life (without leases)")
			}
			if op.LeaseKeys < 0 || op.KeepAlives < 0 {
				c.add(at("lease_keys"), "lease_keys and keepalives must not be negative, got %d and %d", op.LeaseKeys, op.KeepAlives)
			}
			if op.TTL != 0 && (Duration(minTTL) > op.TTL || time.Duration(op.TTL)%time.Second != 0) {
				c.add(at("ttl"), "must be whole seconds, at least %s, got %s", minTTL, op.TTL)
			}
		},
		MixFlags: func(f *pflag.FlagSet, opts *Op) {
			f.DurationVar((*time.Duration)(&opts.TTL), "lease-ttl", 60*time.Second, "--ratios: lease TTL, whole seconds")
			f.IntVar(&opts.LeaseKeys, "lease-keys", 1, "--ratios: puts attached to each lease")
			f.IntVar(&opts.KeepAlives, "keepalives", 1, "--ratios: keep-alives per lease")
			f.BoolVar(&opts.Expire, "expire", false, "--ratios: let leases expire instead of revoking them")
		},
		Part: func(e PartEnv, op Op) (bench.Workload, error) {
			if op.Leases > 0 {
				return bench.NewLeaseKeepAlive(e.Clients, op.Leases, cmp.Or(time.Duration(op.TTL), defaultTTL))
			}
			return bench.NewLease(e.Clients, bench.LeaseConfig{
				Prefix: e.Prefix, ValSize: objectSize(op, e.Profile), TTL: cmp.Or(time.Duration(op.TTL), defaultTTL),
				KeysPerLease: op.LeaseKeys, KeepAlives: op.KeepAlives, Expire: op.Expire,
			})
		},
	}
}
