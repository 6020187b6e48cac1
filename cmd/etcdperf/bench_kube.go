package main

import (
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/profiles"
)

// The bench subcommands of kube-apiserver's request shapes: txn, lease, list.

func newBenchTxnCmd(a *app, bf *benchFlags) *cobra.Command {
	var cfg bench.TxnConfig
	cmd := &cobra.Command{
		Use:   "txn",
		Short: "Compare-and-swap updates, creates and deletes, as kube-apiserver writes objects",
		Long:  bench.TxnUsage,
		Example: `  etcdperf bench txn --clients 50 --key-space-size 100 --val-size 4096
  etcdperf bench txn --rate 500 --create-ratio 0.1 --delete-ratio 0.1 --duration 30s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Prefix, cfg.KeySize, cfg.ValSize = bf.prefix, bf.keySize, bf.valSize
			if err := cfg.Check(); err != nil {
				return usageErr(err) // before connecting: etcd would refuse the txns
			}
			return a.runBench(cmd, bf, func(clis []*clientv3.Client) (bench.Workload, error) {
				cfg.Prefix = bf.prefix // --worker-index may have moved it
				return bench.NewTxn(clis, cfg)
			})
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&cfg.KeySpace, "key-space-size", 1000, "objects filled first, then updated")
	f.IntVar(&cfg.Ops, "txn-ops", 1, "keys per txn, each with its compare and put (at most etcd's --max-txn-ops, 128)")
	f.Float64Var(&cfg.CreateRatio, "create-ratio", 0, "fraction of txns that create new objects")
	f.Float64Var(&cfg.DeleteRatio, "delete-ratio", 0, "fraction of txns that delete objects created earlier")
	return cmd
}

func newBenchLeaseCmd(a *app, bf *benchFlags) *cobra.Command {
	cfg := bench.LeaseConfig{TTL: 60 * time.Second, KeysPerLease: 1, KeepAlives: 1}
	cmd := &cobra.Command{
		Use:   "lease",
		Short: "Grant leases, attach puts, keep them alive on a stream, revoke them; latency per call",
		Long:  bench.LeaseUsage,
		Example: `  etcdperf bench lease --rate 300 --lease-ttl 60s --lease-keys 2 --keepalives 3
  etcdperf bench lease --lease-ttl 5s --lease-keys 10 --keepalives 0 --expire`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Prefix, cfg.ValSize = bf.prefix, bf.valSize
			if err := cfg.Check(); err != nil {
				return usageErr(err)
			}
			return a.runBench(cmd, bf, func(clis []*clientv3.Client) (bench.Workload, error) {
				cfg.Prefix = bf.prefix
				return bench.NewLease(clis, cfg)
			})
		},
	}
	f := cmd.Flags()
	f.DurationVar(&cfg.TTL, "lease-ttl", cfg.TTL, "TTL of each lease, whole seconds (kube-apiserver's --event-ttl is 1h)")
	f.IntVar(&cfg.KeysPerLease, "lease-keys", cfg.KeysPerLease, "puts attached to each lease")
	f.IntVar(&cfg.KeepAlives, "keepalives", cfg.KeepAlives, "keep-alives per lease before it is revoked")
	f.BoolVar(&cfg.Expire, "expire", false, "let leases expire instead of revoking them")
	return cmd
}

func newBenchListCmd(a *app, bf *benchFlags) *cobra.Command {
	cfg := bench.ListConfig{PageSize: bench.DefaultPageSize}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "LIST a prefix page by page at one revision, as client-go's pager does",
		Long:  bench.ListUsage,
		Example: `  etcdperf bench list --keys 10000 --val-size 4096 --rate 2
  etcdperf bench list --keys 5000 --page-size 100 --exact --compact-interval 5s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Prefix, cfg.KeySize, cfg.ValSize = bf.prefix, bf.keySize, bf.valSize
			if err := cfg.Check(); err != nil {
				return usageErr(err)
			}
			return a.runBench(cmd, bf, func(clis []*clientv3.Client) (bench.Workload, error) {
				cfg.Prefix = bf.prefix
				return bench.NewList(clis, cfg)
			})
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&cfg.Keys, "keys", 5000, "objects filled (not measured) before the run")
	f.Int64Var(&cfg.PageSize, "page-size", cfg.PageSize, "keys per page (client-go's pager: 500)")
	f.StringVar(&cfg.Consistency, "consistency", "l", "first page l (linearizable) or s (serializable)")
	f.BoolVar(&cfg.Exact, "exact", false, "list at the revision of the start of the load (resourceVersionMatch=Exact)")
	return cmd
}

// mixFlags are bench mixed's --ratios and the flags of the ops it can mix.
type mixFlags struct {
	ratios    string
	txnOps    int
	pageSize  int64
	exact     bool
	leaseTTL  time.Duration
	leaseKeys int
	keepAlive int
	expire    bool
}

func (m *mixFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&m.ratios, "ratios", "", "mix ops by ratio instead of --read-ratio: put, range, txn, txn-create, txn-delete, list, lease, e.g. txn=0.8,list=0.05,lease=0.15")
	f.IntVar(&m.txnOps, "txn-ops", 1, "--ratios: keys per txn (at most 128)")
	f.Int64Var(&m.pageSize, "page-size", bench.DefaultPageSize, "--ratios: keys per LIST page")
	f.BoolVar(&m.exact, "exact", false, "--ratios: LIST at the revision of the start of the load")
	f.DurationVar(&m.leaseTTL, "lease-ttl", 60*time.Second, "--ratios: lease TTL, whole seconds")
	f.IntVar(&m.leaseKeys, "lease-keys", 1, "--ratios: puts attached to each lease")
	f.IntVar(&m.keepAlive, "keepalives", 1, "--ratios: keep-alives per lease")
	f.BoolVar(&m.expire, "expire", false, "--ratios: let leases expire instead of revoking them")
}

// profile is the mix as a profile (profiles.Mix); rate, clients and duration
// are bench's own and only pass its checks.
func (m *mixFlags) profile(bf *benchFlags, keySpace uint64, rf rangeFlags, wf watchFlags) (*profiles.Profile, error) {
	opts := profiles.Op{Width: rf.width, Limit: rf.limit, Consistency: rf.consistency, KeysOnly: rf.keysOnly, CountOnly: rf.countOnly,
		TxnOps: m.txnOps, PageSize: m.pageSize, Exact: m.exact, TTL: profiles.Duration(m.leaseTTL), LeaseKeys: m.leaseKeys, KeepAlives: m.keepAlive, Expire: m.expire}
	watch := profiles.Op{Watchers: wf.watchers, Streams: wf.streams, Prefix: wf.prefix}
	if !wf.prefix {
		watch.WatchedKeys = wf.watchedKeys
	}
	return profiles.Mix(m.ratios, opts, watch, profiles.Profile{
		Name: "mixed", Version: 1, Description: "bench mixed --ratios " + m.ratios,
		Rate: max(bf.rate, 1), Clients: bf.clients, Duration: profiles.Duration(time.Second),
		Keys: profiles.Keys{Size: profiles.Size(bf.keySize), Space: keySpace}, Values: profiles.Values{Size: profiles.Size(bf.valSize)},
	})
}
