package main

import (
	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
)

// The bench subcommands of kube-apiserver's request shapes: txn, lease, list.

func newBenchTxnCmd(a *app, bf *benchFlags) *cobra.Command {
	var cfg bench.TxnConfig
	cmd := &cobra.Command{
		Use:   "txn",
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
