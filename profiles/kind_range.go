package profiles

import (
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	fc "github.com/etcdperf/etcdperf/internal/flagcheck"
)

var _ = register(20, rangeKind())

func rangeKind() *Kind {
	return &Kind{
		Name:  OpRange,
		Short: "Fill keys under the prefix, then range over them",
		Command: func(f *pflag.FlagSet) Command {
			var keys uint64
			var op Op
			f.Uint64Var(&keys, "keys", 1000, "keys filled (not measured) before the run")
			rangeFlags(f, &op)
			return Command{New: func(clis []*clientv3.Client, b Base) (bench.Workload, error) {
				return bench.NewRange(clis, bench.RangeConfig{
					Prefix: b.Prefix, KeySize: b.KeySize, ValSize: b.ValSize, Keys: keys,
					Width: op.Width, Limit: op.Limit, Consistency: op.Consistency, KeysOnly: op.KeysOnly, CountOnly: op.CountOnly,
				})
			}}
		},
		Rules: map[string]fc.Constraint{
			"range-width": {Kind: fc.Positive},
			"limit":       {Kind: fc.NonNegative, Why: "0 is no limit"},
		},
		InProfile: true,
		Paced:     true,
		Fields:    []string{"width", "limit", "consistency", "keys_only", "count_only"},
		Check: func(c *checker, p *Profile, op Op, at func(string) string) {
			if op.Width < 1 || op.Width > p.keysPerBucket() {
				c.add(at("width"), "must be between 1 and the %d keys of one value size, got %d", p.keysPerBucket(), op.Width)
			}
			if op.Limit < 0 {
				c.add(at("limit"), "must not be negative, got %d", op.Limit)
			}
			checkConsistency(c, op, at)
			if op.KeysOnly && op.CountOnly {
				c.add(at("count_only"), "keys_only and count_only exclude each other")
			}
		},
		MixFlags: rangeFlags,
	}
}

// rangeFlags shape range requests (bench range and mixed).
func rangeFlags(f *pflag.FlagSet, op *Op) {
	f.Uint64Var(&op.Width, "range-width", 1, "keys per range request: [start, start+N) from a random start; 1 is a single-key get")
	f.Int64Var(&op.Limit, "limit", 0, "maximum keys a range returns (0: no limit)")
	f.StringVar(&op.Consistency, "consistency", "l", "l (linearizable) or s (serializable)")
	f.BoolVar(&op.KeysOnly, "keys-only", false, "return keys only")
	f.BoolVar(&op.CountOnly, "count-only", false, "return the count only")
}

// checkConsistency checks a range's or a list's consistency.
func checkConsistency(c *checker, op Op, at func(string) string) {
	if op.Consistency != "" && op.Consistency != "l" && op.Consistency != "s" {
		c.add(at("consistency"), "want l (linearizable) or s (serializable), got %q", op.Consistency)
	}
}
