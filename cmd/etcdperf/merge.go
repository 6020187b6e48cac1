package main

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/results"
)

func newMergeCmd(a *app) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge RUN...",
		Short: "Merge the run files of several workers of one run into one run file, exactly",
		Long:  results.MergeUsage,
		Example: `  etcdperf merge worker-0.json worker-1.json worker-2.json worker-3.json -o merged.json
  etcdperf merge results/w*.json -w json
  kubectl logs -l etcdperf.io/job=NAME --tail=-1 --max-log-requests=8 | etcdperf merge - -o NAME.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.merge(args, out)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "path of the merged run file (default: --run-file, else a new file in --results-dir)")
	return cmd
}

func (a *app) merge(paths []string, out string) error {
	if out == "" {
		out = a.runFile
	}
	runs, names, err := results.ReadRuns(paths, a.stdin, out)
	if err != nil {
		return err
	}
	merged, rep, err := analyze.Merged(runs, names)
	if errors.Is(err, results.ErrUnlike) {
		return usageErr(err)
	}
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(merged.Flags["workers"]); err == nil && n != len(runs) {
		fmt.Fprintf(a.stderr, "etcdperf: warning: merged %d run files of a %d-worker run; the merged load is that of the workers given\n", len(runs), n)
	}
	if out == "" {
		// Not DefaultPath of the command alone: the workers' files, started in the
		// same second, have that name.
		out = results.DefaultPath(a.resultsDir, merged.Command+" merged", merged.StartedAt)
	}
	if _, err := results.Save(merged, out, "", a.runOut); err != nil {
		return err
	}
	if err := a.printBench(merged, out, &rep); err != nil {
		return err
	}
	if !merged.Valid {
		return withCode(ExitInvalid, fmt.Errorf("invalid run: %s", merged.InvalidReason))
	}
	return verdictExit(rep.Verdict.Status)
}
