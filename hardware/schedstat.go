package hardware

import (
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// RunQueueWait is how long the threads of process pid have waited for a CPU so
// far: the sum over proc/PID/task/*/schedstat of the second field, the
// nanoseconds each spent runnable on a run queue (Documentation/scheduler/
// sched-stats.rst). It is the wait itself, where utilisation and PSI only hint
// at it: a member starved by other work on its host waits here whatever its own
// CPU use. Threads that ended before a reading are not in it. root holds proc/;
// "" means "/".
func RunQueueWait(root string, pid int) (time.Duration, error) {
	proc, err := procFS(root)
	if err != nil {
		return 0, err
	}
	threads, err := proc.AllThreads(pid)
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	read := 0
	for _, t := range threads {
		s, err := t.Schedstat()
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			continue // the thread ended since
		}
		if err != nil {
			return 0, fmt.Errorf("proc/%d/task/%d/schedstat: %w", pid, t.PID, err)
		}
		sum += time.Duration(s.WaitingNanoseconds)
		read++
	}
	if read == 0 {
		return 0, fmt.Errorf("proc/%d/task: no schedstat: %w", pid, ErrNoData)
	}
	return sum, nil
}
