package hardware

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// RunQueueWait is how long the threads of process pid have waited for a CPU so
// far: the sum over proc/PID/task/*/schedstat of the second field, the
// nanoseconds each spent runnable on a run queue (Documentation/scheduler/
// sched-stats.rst). It is the wait itself, where utilisation and PSI only hint
// at it: a member starved by other work on its host waits here whatever its own
// CPU use. Threads that ended before a reading are not in it. fsys is rooted at
// "/"; nil means the real one.
func RunQueueWait(fsys fs.FS, pid int) (time.Duration, error) {
	if fsys == nil {
		fsys = os.DirFS("/")
	}
	dir := path.Join("proc", strconv.Itoa(pid), "task")
	tasks, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	read := 0
	for _, t := range tasks {
		b, err := fs.ReadFile(fsys, path.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread ended since
		}
		d, err := schedWait(string(b))
		if err != nil {
			return 0, fmt.Errorf("%s/%s/schedstat: %w", dir, t.Name(), err)
		}
		sum += d
		read++
	}
	if read == 0 {
		return 0, fmt.Errorf("%s: no schedstat: %w", dir, ErrNoData)
	}
	return sum, nil
}

// schedWait is the run-queue wait of a schedstat line "cpu_ns wait_ns timeslices".
func schedWait(s string) (time.Duration, error) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0, fmt.Errorf("%d fields, want 3", len(f))
	}
	ns, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || ns < 0 {
		return 0, fmt.Errorf("wait %q: not a count of nanoseconds", f[1])
	}
	return time.Duration(ns), nil
}
