package diskprobe

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"time"
)

// runQueue reads how long the calling OS thread has waited for a CPU: the
// second field of /proc/thread-self/schedstat, the nanoseconds it spent
// runnable on a run queue. An fdatasync's time less what its thread waited
// meanwhile is the disk's: a probe starved of CPU (a saturated host) otherwise
// reads as a slow disk. nil where the kernel does not say; its methods then
// report no wait.
type runQueue struct {
	f   *os.File
	buf [96]byte
}

// onThread locks the calling goroutine to its OS thread for the probe and
// opens that thread's schedstat into rec; the returned func undoes both. A
// goroutine must not end locked: its thread would end with it, and with it
// whatever processes that thread started (Pdeathsig).
func (r *recorder) onThread() func() {
	runtime.LockOSThread()
	if f, err := os.Open("/proc/thread-self/schedstat"); err == nil {
		r.rq = &runQueue{f: f}
		if _, ok := r.rq.read(); !ok {
			f.Close()
			r.rq = nil
		}
	}
	return func() {
		if r.rq != nil {
			r.rq.f.Close()
		}
		runtime.UnlockOSThread()
	}
}

// waited is the thread's run-queue time so far; 0 without a runQueue.
func (q *runQueue) waited() time.Duration {
	if q == nil {
		return 0
	}
	d, _ := q.read()
	return d
}

// read re-reads the file from its start (ReadAt: no new open, no allocation).
func (q *runQueue) read() (time.Duration, bool) {
	n, _ := q.f.ReadAt(q.buf[:], 0)
	return parseSchedstat(q.buf[:n])
}

// parseSchedstat takes the run-queue wait from "cpu_ns wait_ns slices".
func parseSchedstat(b []byte) (time.Duration, bool) {
	fields := bytes.Fields(b)
	if len(fields) < 2 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return time.Duration(v), true
}
