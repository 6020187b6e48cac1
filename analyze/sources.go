package analyze

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// ErrWindow marks a Prometheus window that cannot be read: no start, or an end
// not after it (the user's input).
var ErrWindow = errors.New("--prometheus window")

// PrometheusRun is run with its scrapes replaced by the samples p stored over
// from..to, which default to the run's window (to: now). Without a run (nil) it is
// the members' metrics alone: a run with no load results, so the client-side
// rules are unknown, written by tool.
func (p *Prometheus) PrometheusRun(ctx context.Context, run *results.Run, from, to time.Time, tool results.Tool) (*results.Run, error) {
	if run != nil {
		if from.IsZero() {
			from = run.StartedAt
		}
		if to.IsZero() {
			to = run.EndedAt
		}
	}
	switch {
	case from.IsZero():
		return nil, fmt.Errorf("%w: needs --from (or a run file, whose window it takes)", ErrWindow)
	case to.IsZero():
		to = time.Now()
	}
	if !to.After(from) {
		return nil, fmt.Errorf("%w: --to %s is not after --from %s", ErrWindow, to.UTC().Format(time.RFC3339Nano), from.UTC().Format(time.RFC3339Nano))
	}
	if run == nil {
		run = &results.Run{
			Version: results.Version, Command: "analyze --prometheus", Valid: true, Tool: tool,
			StartedAt: from.UTC(), EndedAt: to.UTC(), DurationS: to.Sub(from).Seconds(),
		}
	}
	scrapes, err := p.Scrapes(ctx, from, to)
	if err != nil {
		return nil, err
	}
	run.Scrapes = scrapes
	return run, nil
}

// DumpFiles grades two saved /metrics dumps of one member (curl -s
// http://MEMBER:2379/metrics > before.txt), as Dumps does. A dump keeps the time
// it was written, which is when it was scraped: without opts.WindowSeconds the
// files' modification times say how far apart they are.
func DumpFiles(beforePath, afterPath string, opts Options) (Result, error) {
	before, bt, err := readDump(beforePath)
	if err != nil {
		return Result{}, err
	}
	after, at, err := readDump(afterPath)
	if err != nil {
		return Result{}, err
	}
	if opts.WindowSeconds <= 0 && at.After(bt) {
		opts.WindowSeconds = at.Sub(bt).Seconds()
	}
	rep, err := Dumps(before, after, opts)
	if err != nil {
		return Result{}, fmt.Errorf("--metrics %s, %s: %w", beforePath, afterPath, err)
	}
	return rep, nil
}

func readDump(path string) (string, time.Time, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("read metrics dump: %w", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("read metrics dump: %w", err)
	}
	return string(b), st.ModTime(), nil
}

// Merged merges the workers' runs (results.Merge) and grades the merged run as
// bench grades its own, on the merged load and the merged scrapes: the merged
// run keeps that diagnosis, not any worker's.
func Merged(runs []*results.Run, names []string) (*results.Run, Result, error) {
	merged, err := results.Merge(runs, names)
	if err != nil {
		return nil, Result{}, err
	}
	rep, err := Run(merged, Options{})
	if err != nil {
		return nil, Result{}, err
	}
	merged.Diagnosis = rep.Diagnosis()
	return merged, rep, nil
}
