package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/cli"
	"github.com/etcdperf/etcdperf/results"
)

// newRun starts a run file for command with the header filled in.
func (a *app) newRun(cmd *cobra.Command, command string, t *target) *results.Run {
	run := &results.Run{
		Version:   results.Version,
		Tool:      toolInfo(),
		Command:   command,
		StartedAt: time.Now().UTC(),
		Flags:     cli.FlagsOf(cmd.Flags()),
		Valid:     true,
	}
	if t != nil {
		run.Target = t.Info
		run.Client.Transport = t.Transport
	}
	return run
}

// writeRun writes the run file atomically where --run-file says and returns its path.
func (a *app) writeRun(run *results.Run) (string, error) {
	return results.Save(run, a.runFile, a.resultsDir, a.runOut)
}

// runFileToStdout handles --run-file -: standard output carries the run file
// alone, so the summary and everything else a command prints go to stderr.
func (a *app) runFileToStdout() {
	if a.runFile == results.Stdin {
		a.runOut, a.stdout = a.stdout, a.stderr
	}
}
