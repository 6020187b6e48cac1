package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/internal/version"
	"github.com/etcdperf/etcdperf/k8s"
	"github.com/etcdperf/etcdperf/report"
)

// defaultImage is the etcdperf image the worker pods run unless --image says
// otherwise: the one make image builds from this binary's commit.
func defaultImage() string { return k8s.Repository + ":" + version.Get().Tag() }

func newK8sCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s",
		Short: "Write Kubernetes manifests that run etcdperf from many machines",
	}
	cmd.AddCommand(newK8sJobCmd(a), newK8sCanaryCmd(a), newK8sWorkerCmd())
	return cmd
}

// newK8sWorkerCmd is the worker pods' command (k8s.Worker says what it does); the
// image has no shell to do it.
func newK8sWorkerCmd() *cobra.Command {
	w := k8s.Worker{}
	cmd := &cobra.Command{
		Use:    "worker --results stdout|pvc -- bench|check ARGS...",
		Short:  "Run one worker of a k8s job in its pod (the Job's command)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 || len(args) == 0 {
				return usageErr(errors.New("give the worker's command after --"))
			}
			w.Args = args
			code, err := w.Run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil {
				return usageErr(err)
			}
			if code != 0 {
				return withCode(code, nil)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&w.Results, "results", k8s.ResultsStdout, "stdout: print the run file alone; pvc: it is on the claim")
	return cmd
}

func newK8sJobCmd(a *app) *cobra.Command {
	j := k8s.Job{}
	var delay time.Duration
	cmd := &cobra.Command{
		Use:   "job --workers N [flags] -- bench|check ARGS...",
		Short: "Print an Indexed Job whose N pods drive one load together, and the merge step",
		Long:  k8s.JobUsage,
		Example: `  etcdperf k8s job --workers 4 --tls-secret etcd-client -- \
    bench put --endpoints=https://etcd-0.etcd:2379 --rate 20000 --duration 60s | kubectl apply -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash != 0 || len(args) == 0 {
				return usageErr(errors.New("give the worker's command after --, e.g. -- bench put --endpoints=https://etcd:2379 --rate 1000"))
			}
			j.Args = args
			if err := j.Schedule(time.Now(), delay); err != nil {
				return usageErr(err)
			}
			out, err := k8s.Manifest(j)
			if err != nil {
				return usageErr(err)
			}
			return report.Print(a.stdout, a.output, report.K8sJob{Manifest: string(out), Name: j.Name, StartAt: j.StartAt, Workers: j.Workers, Objects: j.Objects()})
		},
	}
	f := cmd.Flags()
	f.IntVar(&j.Workers, "workers", 0, "worker pods, each driving 1/N of the load (required)")
	f.StringVar(&j.Image, "image", defaultImage(), "etcdperf image of the pods (default: what make image builds)")
	f.StringVar(&j.CPU, "cpu", "2", "CPU each worker requests and is limited to (a Kubernetes quantity: 2, 1500m)")
	f.StringVar(&j.Memory, "memory", "1Gi", "memory each worker requests and is limited to (a Kubernetes quantity: 1Gi, 512Mi)")
	f.DurationVar(&j.TTL, "ttl", 24*time.Hour, "delete the finished Jobs and their pods this long after they end (0 keeps them)")
	f.StringVar(&j.Namespace, "namespace", "", "namespace of the Job (default: kubectl's)")
	f.StringVar(&j.Name, "name", "", "Job name (default etcdperf-<start time>)")
	f.StringVar(&j.TLSSecret, "tls-secret", "", "Secret with the client's ca.crt, tls.crt and tls.key")
	f.StringVar(&j.Results, "results", k8s.ResultsStdout, "where run files go: stdout (pod logs) or pvc")
	f.StringVar(&j.PVC, "pvc", "etcdperf-results", "PersistentVolumeClaim for --results pvc")
	f.Var((*bench.TimeValue)(&j.StartAt), "start-at", "when the workers start, RFC 3339 or unix seconds (default: now + --start-delay)")
	f.DurationVar(&delay, "start-delay", 2*time.Minute, "time from now to the start, to apply the manifest and pull the image")
	return cmd
}
