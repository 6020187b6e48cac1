package profiles

import (
	"cmp"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
)

var _ = register(50, listKind())

func listKind() *Kind {
	return &Kind{
		Name:  OpList,
		Short: "LIST a prefix page by page at one revision, as client-go's pager does",
		Long: `list fills --keys objects of --val-size bytes, then LISTs them the way client-go's
pager does through kube-apiserver: a range of --page-size keys (500, client-go's
default), then ranges from just after the last key at the first page's revision until
the server says there are no more. The first page is linearizable (--consistency l, a
LIST without resourceVersion) or serializable (s); --exact lists at the revision the data
had when the load started (resourceVersionMatch=Exact), which fails once compacted.
Each whole LIST is the "list" op (with the keys and bytes read), each page "list-page".`,
		Example: `  etcdperf bench list --keys 10000 --val-size 4096 --rate 2
  etcdperf bench list --keys 5000 --page-size 100 --exact --compact-interval 5s`,
		Command: func(f *pflag.FlagSet) Command {
			cfg := bench.ListConfig{PageSize: bench.DefaultPageSize}
			f.Uint64Var(&cfg.Keys, "keys", 5000, "objects filled (not measured) before the run")
			f.Int64Var(&cfg.PageSize, "page-size", cfg.PageSize, "keys per page (client-go's pager: 500)")
			f.StringVar(&cfg.Consistency, "consistency", "l", "first page l (linearizable) or s (serializable)")
			f.BoolVar(&cfg.Exact, "exact", false, "list at the revision of the start of the load (resourceVersionMatch=Exact)")
			return Command{
				Check: func(b Base) error {
					cfg.Prefix, cfg.KeySize, cfg.ValSize = b.Prefix, b.KeySize, b.ValSize
					return cfg.Check()
				},
				New: func(clis []*clientv3.Client, b Base) (bench.Workload, error) {
					cfg.Prefix = b.Prefix
					return bench.NewList(clis, cfg)
				},
			}
		},
		InProfile: true,
		Paced:     true,
		Fields:    []string{"page_size", "exact", "consistency"},
		Check: func(c *checker, _ *Profile, op Op, at func(string) string) {
			if op.PageSize < 0 {
				c.add(at("page_size"), "must not be negative, got %d", op.PageSize)
			}
			checkConsistency(c, op, at)
		},
		MixFlags: func(f *pflag.FlagSet, opts *Op) {
			f.Int64Var(&opts.PageSize, "page-size", bench.DefaultPageSize, "--ratios: keys per LIST page")
			f.BoolVar(&opts.Exact, "exact", false, "--ratios: LIST at the revision of the start of the load")
			// --consistency is range's: a mix's lists read as its ranges do.
		},
		// A list reads the txns' objects when there are txns, else its own.
		Part: func(e PartEnv, op Op) (bench.Workload, error) {
			prefix, keys := e.Prefix, e.Profile.Keys.Space
			if e.Objects != "" {
				prefix, keys = e.Objects, 0
			}
			return bench.NewList(e.Clients, bench.ListConfig{
				Prefix: prefix, KeySize: int(e.Profile.Keys.Size), ValSize: objectSize(op, e.Profile), Keys: keys,
				PageSize: cmp.Or(op.PageSize, bench.DefaultPageSize), Consistency: cmp.Or(op.Consistency, "l"), Exact: op.Exact,
			})
		},
	}
}
