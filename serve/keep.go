package serve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/etcdperf/etcdperf/results"
)

// keepCommand names serve's run files: serve-<start time>.json.
const keepCommand = "serve"

// Keeper stores each probe's run file in Dir and keeps only the newest N, so a
// canary that runs for months uses a bounded amount of disk.
type Keeper struct {
	Dir string
	N   int
}

// Save writes run to a new file in Dir, then removes serve's oldest run files
// beyond N (files of other commands are left alone), and returns the new path.
func (k *Keeper) Save(run *results.Run) (string, error) {
	if k.N < 1 {
		return "", fmt.Errorf("--keep %d: keep at least one run file", k.N)
	}
	if err := os.MkdirAll(k.Dir, 0o755); err != nil {
		return "", err
	}
	path, err := results.Save(run, "", k.Dir, nil)
	if err != nil {
		return "", err
	}
	return path, k.prune()
}

// History is the plot's points of the run files serve kept in Dir, oldest
// first: a restarted canary's page starts with what it measured before. A
// file that does not read is left out.
func (k *Keeper) History() []Point {
	files, err := filepath.Glob(filepath.Join(k.Dir, keepCommand+"-*.json"))
	if err != nil {
		return nil
	}
	slices.Sort(files)
	var pts []Point
	for _, f := range files {
		run, err := results.ReadFile(f)
		if err != nil || run.Command != keepCommand {
			continue
		}
		pt := Point{T: run.EndedAt, Status: "error"}
		if pt.T.IsZero() {
			pt.T = run.StartedAt
		}
		if d := run.Diagnosis; d != nil && d.Verdict != nil {
			pt.Status = string(d.Verdict.Status)
		}
		pt.P50, pt.P99 = pacedLatency(run)
		pts = append(pts, pt)
	}
	return pts
}

// prune removes the oldest of serve's run files in Dir beyond N. Their names
// hold the start time in a layout that sorts as time does.
func (k *Keeper) prune() error {
	files, err := filepath.Glob(filepath.Join(k.Dir, keepCommand+"-*.json"))
	if err != nil {
		return err
	}
	slices.Sort(files)
	var errs []error
	for len(files) > k.N {
		if err := os.Remove(files[0]); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		files = files[1:]
	}
	return errors.Join(errs...)
}
