package hardware

import (
	"time"

	"github.com/prometheus/procfs"
)

// CPU pressure (Linux PSI, Documentation/accounting/psi.rst): /proc/pressure/cpu's
// "some" line counts the wall time in which at least one runnable task waited for
// a CPU. It sees what a process's own CPU time cannot: other work on the host
// crowding the members and the generator out.

// ReadCPUPressure returns the cumulative "some" stall time of the host's CPUs
// under root ("" is "/"); ok is false where the kernel has no PSI.
func ReadCPUPressure(root string) (time.Duration, bool) {
	fs, err := procFS(root)
	if err != nil {
		return 0, false
	}
	return readPressure(fs)
}

func readPressure(fs procfs.FS) (time.Duration, bool) {
	psi, err := fs.PSIStatsForResource("cpu")
	if err != nil || psi.Some == nil {
		return 0, false
	}
	return time.Duration(psi.Some.Total) * time.Microsecond, true
}

// PressureMeter measures the share of a window in which some task waited for a
// CPU, and how busy the host's CPUs were meanwhile.
type PressureMeter struct {
	fs          procfs.FS
	start       time.Time
	stall       time.Duration
	ok          bool
	busy, total float64 // /proc/stat's cpu line at the start, in seconds
	perCPU      map[int64][2]float64
	statOK      bool
}

// StartCPUPressure begins a window on the host under root ("" is "/").
func StartCPUPressure(root string) *PressureMeter {
	m := &PressureMeter{start: time.Now()}
	fs, err := procFS(root)
	if err != nil {
		return m
	}
	m.fs = fs
	m.stall, m.ok = readPressure(fs)
	m.busy, m.total, m.statOK = readCPUTime(fs)
	m.perCPU = readPerCPUTime(fs)
	return m
}

// Busy is the share of all the host's CPU time in the window so far that was
// busy (user, system, interrupts, steal; idle and iowait are not): whoever ran,
// the load or other work. ok is false without /proc/stat.
func (m *PressureMeter) Busy() (float64, bool) {
	if m == nil || !m.statOK {
		return 0, false
	}
	busy, total, ok := readCPUTime(m.fs)
	if !ok || total <= m.total || busy < m.busy {
		return 0, false
	}
	return min((busy-m.busy)/(total-m.total), 1), true
}

// Busiest is the busy share of the busiest single CPU in the window so far. A
// CPU that tasks are pinned to (a cpuset, taskset) can be saturated while the
// host's average has idle time to spare: waits there are a want of CPU, not
// wake-up latency. ok is false without /proc/stat's per-CPU lines.
func (m *PressureMeter) Busiest() (float64, bool) {
	if m == nil || len(m.perCPU) == 0 {
		return 0, false
	}
	now := readPerCPUTime(m.fs)
	top, ok := 0.0, false
	for cpu, was := range m.perCPU {
		is, found := now[cpu]
		if !found || is[1] <= was[1] || is[0] < was[0] {
			continue
		}
		top, ok = max(top, min((is[0]-was[0])/(is[1]-was[1]), 1)), true
	}
	return top, ok
}

// readCPUTime reads the busy and total CPU seconds of /proc/stat's aggregate
// cpu line (proc(5)); guest time is already in user, so it is not added.
func readCPUTime(fs procfs.FS) (busy, total float64, ok bool) {
	st, err := fs.Stat()
	if err != nil {
		return 0, 0, false
	}
	busy, total = cpuTime(st.CPUTotal)
	return busy, total, true
}

// readPerCPUTime is readCPUTime for each cpuN line; nil without them.
func readPerCPUTime(fs procfs.FS) map[int64][2]float64 {
	st, err := fs.Stat()
	if err != nil || len(st.CPU) == 0 {
		return nil
	}
	out := make(map[int64][2]float64, len(st.CPU))
	for n, c := range st.CPU {
		busy, total := cpuTime(c)
		out[n] = [2]float64{busy, total}
	}
	return out
}

func cpuTime(c procfs.CPUStat) (busy, total float64) {
	busy = c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
	return busy, busy + c.Idle + c.Iowait
}

// Share is the stalled share of the window so far; ok is false without PSI (or
// without a window: m is nil).
func (m *PressureMeter) Share() (float64, bool) {
	if m == nil || !m.ok {
		return 0, false
	}
	now, ok := readPressure(m.fs)
	wall := time.Since(m.start)
	if !ok || wall <= 0 || now < m.stall {
		return 0, false
	}
	return min(float64(now-m.stall)/float64(wall), 1), true
}
