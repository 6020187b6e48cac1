package profiles

import (
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	fc "github.com/etcdperf/etcdperf/internal/flagcheck"
)

// The txns are kube-apiserver's object writes (GuaranteedUpdate): txn updates,
// txn-create creates and txn-delete deletes; in a profile they are one bench
// txn workload over one key space (see Build), so only txn has a command.

var _ = register(40, txnKind(), txnCreateKind(), txnDeleteKind())

func txnKind() *Kind {
	return &Kind{
		Name:  OpTxn,
		Short: "Compare-and-swap updates, creates and deletes, as kube-apiserver writes objects",
		Long: `txn fills --key-space-size objects of --val-size bytes, then updates them the way
kube-apiserver's GuaranteedUpdate does: If mod_revision(key) == seen Then Put(key, object)
Else Get(key). A failed compare (another client updated the object first) is retried
with the revision the Else branch returned; each retry counts as a conflict ("conflicts"
in the op's JSON), and the op's latency covers every attempt, as the API caller waits
for all of them. --txn-ops N puts N keys per txn (checked against etcd's --max-txn-ops,
128 by default). --create-ratio of the txns create new objects (If create_revision == 0
Then Put), reported as "txn-create"; --delete-ratio delete objects created earlier
(If mod_revision == seen Then Delete Else Get), reported as "txn-delete".`,
		Example: `  etcdperf bench txn --clients 50 --key-space-size 100 --val-size 4096
  etcdperf bench txn --rate 500 --create-ratio 0.1 --delete-ratio 0.1 --duration 30s`,
		Command: func(f *pflag.FlagSet) Command {
			var cfg bench.TxnConfig
			f.Uint64Var(&cfg.KeySpace, "key-space-size", 1000, "objects filled first, then updated")
			f.IntVar(&cfg.Ops, "txn-ops", 1, "keys per txn, each with its compare and put (at most etcd's --max-txn-ops, 128)")
			f.Float64Var(&cfg.CreateRatio, "create-ratio", 0, "fraction of txns that create new objects")
			f.Float64Var(&cfg.DeleteRatio, "delete-ratio", 0, "fraction of txns that delete objects created earlier")
			return Command{
				Check: func(b Base) error {
					cfg.Prefix, cfg.KeySize, cfg.ValSize = b.Prefix, b.KeySize, b.ValSize
					return cfg.Check() // before connecting: etcd would refuse the txns
				},
				New: func(clis []*clientv3.Client, b Base) (bench.Workload, error) {
					cfg.Prefix = b.Prefix // --worker-index may have moved it
					return bench.NewTxn(clis, cfg)
				},
			}
		},
		Rules: map[string]fc.Constraint{
			"txn-ops":      {Kind: fc.Positive},
			"create-ratio": {Kind: fc.Fraction},
			"delete-ratio": {Kind: fc.Fraction},
		},
		InProfile: true,
		Paced:     true,
		Fields:    []string{"txn_ops", "value_size"},
		Check: func(c *checker, p *Profile, op Op, at func(string) string) {
			if op.TxnOps < 0 || op.TxnOps > bench.MaxTxnOps {
				c.add(at("txn_ops"), "must be between 1 and %d (etcd's --max-txn-ops), got %d", bench.MaxTxnOps, op.TxnOps)
			} else if uint64(max(op.TxnOps, 1)) > p.Keys.Space {
				c.add(at("txn_ops"), "%d keys per txn over %d keys", op.TxnOps, p.Keys.Space)
			}
		},
		MixFlags: func(f *pflag.FlagSet, opts *Op) {
			f.IntVar(&opts.TxnOps, "txn-ops", 1, "--ratios: keys per txn (at most 128)")
		},
	}
}

func txnCreateKind() *Kind { return &Kind{Name: OpTxnCreate, InProfile: true, Paced: true} }

func txnDeleteKind() *Kind { return &Kind{Name: OpTxnDelete, InProfile: true, Paced: true} }
