package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// How far from now --start-at may be. A start more than startLate in the past means
// this worker came up after the others began; one more than startAhead in the
// future is almost surely unix milliseconds given as seconds, or a typo.
const (
	startLate  = time.Second
	startAhead = 24 * time.Hour
)

// workerFlags let N copies of bench or check, on as many machines, drive one load
// together without talking to each other: each takes its share of the target rate
// and of the request count, writes under its own key prefix, and starts at the
// same wall-clock time. `etcdperf merge` then combines their run files.
type workerFlags struct {
	startAt        time.Time
	index, workers int
}

func (w *workerFlags) register(fs *pflag.FlagSet) {
	fs.Var((*startAtValue)(&w.startAt), "start-at", "wall-clock time to start the load, RFC 3339 or unix seconds (workers of one run share it)")
	fs.IntVar(&w.index, "worker-index", 0, "this worker's index, 0 .. --workers-1")
	fs.IntVar(&w.workers, "workers", 1, "workers driving this load together; each takes 1/N of --rate and --total")
}

// apply checks the flags and gives the worker its own key prefix, so workers
// neither refuse to start on each other's keys nor delete them when they finish.
func (w *workerFlags) apply(prefix *string) error {
	switch {
	case w.workers < 1:
		return fmt.Errorf("--workers must be at least 1, got %d", w.workers)
	case w.index < 0 || w.index >= w.workers:
		return fmt.Errorf("--worker-index %d: must be between 0 and --workers-1 (%d)", w.index, w.workers-1)
	case w.workers > 1 && w.startAt.IsZero():
		return fmt.Errorf("--workers %d needs --start-at, so the workers start together", w.workers)
	}
	if err := w.checkStart(time.Now()); err != nil {
		return err
	}
	if w.workers > 1 {
		*prefix = strings.TrimSuffix(*prefix, "/") + "/w" + strconv.Itoa(w.index) + "/"
	}
	return nil
}

// checkStart refuses a start time that is past or implausibly far ahead.
func (w *workerFlags) checkStart(now time.Time) error {
	if w.startAt.IsZero() {
		return nil
	}
	switch d := w.startAt.Sub(now); {
	case d < -startLate:
		return fmt.Errorf("--start-at %s passed %s ago: this worker would start after the others; pick a time ahead",
			fmtStart(w.startAt), (-d).Round(time.Second))
	case d > startAhead:
		return fmt.Errorf("--start-at %s is %s ahead (unix seconds, not milliseconds?)", fmtStart(w.startAt), d.Round(time.Hour))
	}
	return nil
}

// split returns this worker's share of a target rate and of a request count. The
// counts of all workers add up to total exactly: the first total%workers workers
// take one more.
func (w *workerFlags) split(rate float64, total uint64) (float64, uint64) {
	n := uint64(w.workers)
	share := total / n
	if uint64(w.index) < total%n {
		share++
	}
	return rate / float64(w.workers), share
}

// start takes this worker's share of *rate and *total (either may be nil), records
// what the worker was in flags (the run file's; may be nil), and checks that
// --start-at is still ahead. It does not wait: bench.Run fills keys and opens
// watches first and then waits for the start (bench.Config.StartAt), so the
// workers' clocks start together whatever their setup took.
func (w *workerFlags) start(stderr io.Writer, rate *float64, total *uint64, flags map[string]string) error {
	var r float64
	var n uint64
	if rate != nil {
		r = *rate
	}
	if total != nil {
		n = *total
	}
	if n > 0 && n < uint64(w.workers) {
		return usageErr(fmt.Errorf("--total %d is fewer requests than --workers %d", n, w.workers))
	}
	r, n = w.split(r, n)
	if rate != nil {
		*rate = r
	}
	if total != nil {
		*total = n
	}
	if flags != nil && (w.workers > 1 || !w.startAt.IsZero()) {
		flags["workers"] = strconv.Itoa(w.workers)
		flags["worker-index"] = strconv.Itoa(w.index)
		if rate != nil && r > 0 {
			flags["rate"] = strconv.FormatFloat(r, 'f', -1, 64)
		}
		if total != nil && n > 0 {
			flags["total"] = strconv.FormatUint(n, 10)
		}
		if !w.startAt.IsZero() {
			flags["start-at"] = fmtStart(w.startAt)
		}
	}
	if w.startAt.IsZero() {
		return nil
	}
	// Connecting may have taken long enough to miss the start.
	if err := w.checkStart(time.Now()); err != nil {
		return usageErr(err)
	}
	if d := time.Until(w.startAt); d > 0 {
		fmt.Fprintf(stderr, "etcdperf: worker %d of %d: starting at %s (in %s), after the setup\n", w.index, w.workers, fmtStart(w.startAt), d.Round(time.Millisecond))
	}
	return nil
}

func fmtStart(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// startAtValue is --start-at: RFC 3339 ("2027-01-15T08:00:00Z") or unix seconds
// ("1800000000", "1800000000.5"), the two forms `date` prints most easily.
type startAtValue time.Time

func (v *startAtValue) String() string {
	if time.Time(*v).IsZero() {
		return ""
	}
	return fmtStart(time.Time(*v))
}

func (v *startAtValue) Set(s string) error {
	t, err := parseStartAt(s)
	if err != nil {
		return err
	}
	*v = startAtValue(t)
	return nil
}

func (v *startAtValue) Type() string { return "time" }

func parseStartAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return time.Time{}, errors.New("want RFC 3339 (2027-01-15T08:00:00Z) or unix seconds (1800000000)")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC(), nil
}
