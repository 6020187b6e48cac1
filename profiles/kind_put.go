package profiles

import (
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
)

var _ = register(10, putKind())

func putKind() *Kind {
	return &Kind{
		Name:  OpPut,
		Short: "Put a value to keys under the prefix",
		Command: func(f *pflag.FlagSet) Command {
			var keySpace uint64
			var sequential bool
			f.Uint64Var(&keySpace, "key-space-size", 1, "distinct keys written (1, as etcd's benchmark)")
			f.BoolVar(&sequential, "sequential-keys", false, "write keys in order; default is uniformly random")
			return Command{New: func(clis []*clientv3.Client, b Base) (bench.Workload, error) {
				return bench.NewPut(clis, bench.PutConfig{Prefix: b.Prefix, KeySize: b.KeySize, ValSize: b.ValSize, KeySpace: keySpace, Sequential: sequential})
			}}
		},
		InProfile: true,
		Paced:     true,
	}
}
