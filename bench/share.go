package bench

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// How far from now a shared start time may be. A start more than startLate in
// the past means this worker came up after the others began; one more than
// startAhead in the future is almost surely unix milliseconds given as seconds,
// or a typo.
const (
	startLate  = time.Second
	startAhead = 24 * time.Hour
)

// Share is one worker's part of a load that N copies of bench or check, on as
// many machines, drive together without talking to each other: each takes its
// share of the target rate and of the request count, writes under its own key
// prefix, and starts at the same wall-clock time (Config.StartAt). `etcdperf
// merge` then combines their run files.
type Share struct {
	StartAt time.Time // zero: start when ready
	Index   int       // this worker, 0 .. Workers-1
	Workers int       // workers driving the load together
}

// Check refuses an index outside 0 .. Workers-1, several workers without a
// start time, and a start time that is past or implausibly far ahead of now.
func (s Share) Check(now time.Time) error {
	switch {
	case s.Workers < 1:
		return fmt.Errorf("--workers must be at least 1, got %d", s.Workers)
	case s.Index < 0 || s.Index >= s.Workers:
		return fmt.Errorf("--worker-index %d: must be between 0 and --workers-1 (%d)", s.Index, s.Workers-1)
	case s.Workers > 1 && s.StartAt.IsZero():
		return fmt.Errorf("--workers %d needs --start-at, so the workers start together", s.Workers)
	}
	return s.checkStart(now)
}

// checkStart refuses a start time that is past or implausibly far ahead.
func (s Share) checkStart(now time.Time) error {
	if s.StartAt.IsZero() {
		return nil
	}
	switch d := s.StartAt.Sub(now); {
	case d < -startLate:
		return fmt.Errorf("--start-at %s passed %s ago: this worker would start after the others; pick a time ahead",
			FormatTime(s.StartAt), (-d).Round(time.Second))
	case d > startAhead:
		return fmt.Errorf("--start-at %s is %s ahead (unix seconds, not milliseconds?)", FormatTime(s.StartAt), d.Round(time.Hour))
	}
	return nil
}

// Prefix is the worker's own key prefix under prefix, so workers neither refuse
// to start on each other's keys nor delete them when they finish.
func (s Share) Prefix(prefix string) string {
	if s.Workers <= 1 {
		return prefix
	}
	return strings.TrimSuffix(prefix, "/") + "/w" + strconv.Itoa(s.Index) + "/"
}

// Split returns this worker's share of a target rate and of a request count. The
// counts of all workers add up to total exactly: the first total%Workers workers
// take one more.
func (s Share) Split(rate float64, total uint64) (float64, uint64) {
	n := uint64(s.Workers)
	share := total / n
	if uint64(s.Index) < total%n {
		share++
	}
	return rate / float64(s.Workers), share
}

// Take replaces *rate and *total (either may be nil) by this worker's share,
// records what the worker was in flags (a run file's; may be nil), and checks
// that the start time is still ahead of now (connecting may have taken long
// enough to miss it). It does not wait: Run prepares first and then waits for
// Config.StartAt, so the workers' clocks start together whatever their setup took.
func (s Share) Take(rate *float64, total *uint64, flags map[string]string, now time.Time) error {
	var r float64
	var n uint64
	if rate != nil {
		r = *rate
	}
	if total != nil {
		n = *total
	}
	if n > 0 && n < uint64(s.Workers) {
		return fmt.Errorf("--total %d is fewer requests than --workers %d", n, s.Workers)
	}
	r, n = s.Split(r, n)
	if rate != nil {
		*rate = r
	}
	if total != nil {
		*total = n
	}
	if flags != nil && (s.Workers > 1 || !s.StartAt.IsZero()) {
		flags["workers"] = strconv.Itoa(s.Workers)
		flags["worker-index"] = strconv.Itoa(s.Index)
		if rate != nil && r > 0 {
			flags["rate"] = strconv.FormatFloat(r, 'f', -1, 64)
		}
		if total != nil && n > 0 {
			flags["total"] = strconv.FormatUint(n, 10)
		}
		if !s.StartAt.IsZero() {
			flags["start-at"] = FormatTime(s.StartAt)
		}
	}
	return s.checkStart(now)
}

// FormatTime is a start time as the flags and run files write it.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ParseTime reads a wall-clock time as RFC 3339 ("2027-01-15T08:00:00Z") or unix
// seconds ("1800000000", "1800000000.5"), the two forms `date` prints most easily.
func ParseTime(s string) (time.Time, error) {
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

// TimeValue is a wall-clock time flag (a pflag.Value): ParseTime's forms in,
// FormatTime's out, empty while unset.
type TimeValue time.Time

func (v *TimeValue) String() string {
	if time.Time(*v).IsZero() {
		return ""
	}
	return FormatTime(time.Time(*v))
}

// Set parses s with ParseTime.
func (v *TimeValue) Set(s string) error {
	t, err := ParseTime(s)
	if err != nil {
		return err
	}
	*v = TimeValue(t)
	return nil
}

// Type names the flag's value in --help.
func (v *TimeValue) Type() string { return "time" }
