package profiles

import (
	"errors"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/internal/bench"
	fc "github.com/etcdperf/etcdperf/internal/flagcheck"
)

// mixedKind is bench mixed: reads and writes of one key set by ratio, or, with
// --ratios, any mix of the paced kinds, each with the flags its MixFlags take.
// It is no op of a profile.
func mixedKind() *Kind {
	return &Kind{
		Name:  "mixed",
		Short: "Read and write one key set by ratio, optionally watched; each op type reported",
		Long:  bench.MixedUsage,
		Example: `  etcdperf bench mixed --rate 500 --read-ratio 0.9
  etcdperf bench mixed --rate 300 --ratios txn=0.7,txn-create=0.1,txn-delete=0.1,list=0.01,lease=0.09 --watchers 3 --watch-prefix`,
		Command: func(f *pflag.FlagSet) Command {
			var (
				keySpace  uint64
				readRatio float64
				ratios    string
				opts      Op
				mix       *Profile
			)
			f.Uint64Var(&keySpace, "key-space-size", 1000, "keys filled first, then read and overwritten")
			f.Float64Var(&readRatio, "read-ratio", 0.8, "fraction of requests that are ranges; the rest are puts")
			f.StringVar(&ratios, "ratios", "", "mix ops by ratio instead of --read-ratio: "+MixNames()+", e.g. txn=0.8,list=0.05,lease=0.15")
			for _, k := range Kinds() {
				if k.MixFlags != nil {
					k.MixFlags(f, &opts)
				}
			}
			return Command{
				Check: func(b Base) error {
					if ratios == "" {
						return nil
					}
					if f.Changed("read-ratio") {
						return errors.New("--read-ratio and --ratios exclude each other: give range=R in --ratios")
					}
					// Rate, clients and duration are bench's own and only pass the profile's checks.
					var err error
					mix, err = Mix(ratios, opts, Profile{
						Name: "mixed", Version: 1, Description: "bench mixed --ratios " + ratios,
						Rate: max(b.Rate, 1), Clients: b.Clients, Duration: Duration(time.Second),
						Keys: Keys{Size: Size(b.KeySize), Space: keySpace}, Values: Values{Size: Size(b.ValSize)},
					})
					return err
				},
				New: func(clis []*clientv3.Client, b Base) (bench.Workload, error) {
					if mix != nil {
						w, _, err := Build(mix, clis, b.Prefix)
						return w, err
					}
					return bench.NewMixed(clis, bench.MixedConfig{
						Prefix: b.Prefix, KeySize: b.KeySize, ValSize: b.ValSize, KeySpace: keySpace, ReadRatio: readRatio,
						Width: opts.Width, Limit: opts.Limit, Consistency: opts.Consistency, KeysOnly: opts.KeysOnly, CountOnly: opts.CountOnly,
						Watchers: opts.Watchers, Streams: opts.Streams, WatchedKeys: opts.WatchedKeys, PrefixWatch: opts.Prefix,
					})
				},
			}
		},
		Rules: map[string]fc.Constraint{"read-ratio": {Kind: fc.Fraction}},
	}
}
