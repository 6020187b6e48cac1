package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/etcdperf/etcdperf/internal/cli"
	"github.com/etcdperf/etcdperf/internal/etcdctl"
	"github.com/etcdperf/etcdperf/internal/flagcheck"
	"github.com/etcdperf/etcdperf/internal/version"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

// app is everything a command needs besides its own flags: the streams and the
// global options. Commands get it as an argument; there are no package globals.
type app struct {
	stdin          *os.File
	stdout, stderr io.Writer
	stderrTTY      bool
	// startAt is --start-at of a coordinated worker: measure hands it to bench,
	// which waits for it after the setup.
	startAt time.Time

	conn       connFlags
	output     string // simple | json | table
	resultsDir string
	runFile    string
	// runOut is where --run-file - writes the run file: the real stdout, while
	// stdout is stderr.
	runOut     io.Writer
	debug      bool
	verbose    bool // -v: every signal, not only those at warn or above
	cpuProfile string
	// stopProfile ends the CPU profile started for --cpu-profile.
	stopProfile func()
}

func newApp(stdin *os.File, stdout, stderr *os.File) *app {
	return &app{
		stdin: stdin, stdout: stdout, stderr: stderr,
		stderrTTY: term.IsTerminal(int(stderr.Fd())),
	}
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "etcdperf",
		Short:         "Benchmark an etcd cluster and name its bottleneck",
		Long:          "etcdperf drives put, range and watch load against etcd, probes the fsync latency of the disk,\nscrapes the members' metrics and says which of disk, network, memory, CPU, value size or range\nsize is the bottleneck. With no --endpoints it starts an embedded etcd in a temp dir.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := etcdctl.FromEnv(cmd.Flags(), a.stderr); err != nil {
				return usageErr(err)
			}
			if err := cli.CheckOutput(cmd, a.output); err != nil {
				return usageErr(err)
			}
			if err := flagcheck.Check(cmd.Flags(), flagRules); err != nil {
				return usageErr(err)
			}
			a.runFileToStdout()
			if err := a.conn.Validate(); err != nil {
				return err
			}
			return a.startProfile()
		},
	}
	pf := root.PersistentFlags()
	a.conn.register(pf)
	pf.StringVarP(&a.output, "write-out", "w", "simple", "output format: simple, json or table")
	pf.StringVar(&a.resultsDir, "results-dir", "results", "folder for run files")
	pf.StringVar(&a.runFile, "run-file", "", "path of the run file to write (default: a new file in --results-dir); - writes it to stdout, and the summary to stderr")
	pf.StringVar(&a.cpuProfile, "cpu-profile", "", "write a Go CPU profile of etcdperf itself to this file (for developers)")
	_ = pf.MarkHidden("cpu-profile")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "show every signal of the diagnosis, not only the findings at warn or above (JSON always holds everything)")
	pf.BoolVar(&a.debug, "debug", false, "etcdperf's own, not etcdctl's (which logs gRPC): after an error, show the chain of wrapped errors with their types")
	root.AddCommand(newVersionCmd(a), newDiskCmd(a), newBenchCmd(a), newInspectCmd(a), newReportCmd(a), newAnalyzeCmd(a), newCompareCmd(a),
		newProfilesCmd(a), newCheckCmd(a), newQualifyCmd(a), newPlanCmd(a), newMergeCmd(a), newK8sCmd(a), newDrillCmd(a), newServeCmd(a), newBundleCmd(a))
	cli.GuardGroups(root, usageErr)
	cli.DeclareOutputs(root, declaredOutputs)
	root.Version = buildInfo().String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr(err) })
	return root
}

// execute runs the command line and turns its outcome into an exit code.
func (a *app) execute(ctx context.Context, args []string) int {
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	if a.stopProfile != nil {
		a.stopProfile()
	}
	cli.PrintError(a.stderr, err, a.debug)
	return cli.Code(err)
}

// buildInfo is this binary's version, commit, Go version and embedded etcd.
func buildInfo() version.Info {
	i := version.Get()
	// The release the server package declares, whatever the module graph says.
	i.Etcd = embeddedEtcdVersion()
	return i
}

// toolInfo is what run files record of the binary that wrote them.
func toolInfo() results.Tool {
	i := buildInfo()
	return results.Tool{Name: "etcdperf", Version: i.Version, GoVersion: i.Go, Commit: i.Commit, Dirty: i.Dirty, EmbeddedEtcd: i.Etcd}
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the etcdperf version, its commit, Go version and the etcd release it embeds",
		Long:  version.Usage,
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return report.Print(a.stdout, a.output, report.Version(buildInfo()))
		},
	}
}

// startProfile starts the CPU profile of --cpu-profile.
func (a *app) startProfile() (err error) {
	if a.cpuProfile != "" {
		a.stopProfile, err = cli.StartCPUProfile(a.cpuProfile)
	}
	return err
}
