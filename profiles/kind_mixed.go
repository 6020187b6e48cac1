package profiles

import (
	"errors"
	"strings"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	fc "github.com/etcdperf/etcdperf/internal/flagcheck"
)

// mixed is the registered kind; its help names the other kinds, so it is
// written once every file's register has run (init runs after all of a
// package's variables).
var mixed = mixedKind()

var _ = register(90, mixed)

func init() { mixed.Long = mixedUsage() }

// mixedUsage is 'bench mixed' help text, naming the ops --ratios mixes.
func mixedUsage() string {
	return wrap("mixed fills --key-space-size keys, then ranges over them (--read-ratio) and puts to "+
		"them (the rest), optionally watched (--watchers). --ratios mixes any of bench's ops by "+
		"ratio instead, as a profile does: "+kindNames(inMix, "and")+", e.g. --ratios "+
		"txn=0.8,list=0.05,lease=0.15; each op keeps its own flags here (--range-width, "+
		"--txn-ops, --page-size, --lease-ttl, ...), and watchers then watch the txns' objects "+
		"when there are txns.", 86)
}

// wrap breaks text into lines of at most width bytes at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		switch {
		case n == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// mixedKind is bench mixed: reads and writes of one key set by ratio, or, with
// --ratios, any mix of the paced kinds, each with the flags its MixFlags take.
// It is no op of a profile.
func mixedKind() *Kind {
	return &Kind{
		Name:  "mixed",
		Short: "Read and write one key set by ratio, optionally watched; each op type reported",
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
