package hardware

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// CPU pressure (Linux PSI, Documentation/accounting/psi.rst): /proc/pressure/cpu's
// "some" line counts the wall time in which at least one runnable task waited for
// a CPU. It sees what a process's own CPU time cannot: other work on the host
// crowding the members and the generator out.

// ReadCPUPressure returns the cumulative "some" stall time of the host's CPUs;
// ok is false where the kernel has no PSI.
func ReadCPUPressure(fsys fs.FS) (time.Duration, bool) {
	b, err := fs.ReadFile(fsys, "proc/pressure/cpu")
	if err != nil {
		return 0, false
	}
	d, err := parsePressureSome(string(b))
	return d, err == nil
}

// parsePressureSome reads total= of the "some" line ("some avg10=.. total=N", N in µs).
func parsePressureSome(s string) (time.Duration, error) {
	for _, line := range strings.Split(s, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] != "some" {
			continue
		}
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(f, "total="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 {
					return 0, fmt.Errorf("pressure: bad total %q", v)
				}
				return time.Duration(n) * time.Microsecond, nil
			}
		}
	}
	return 0, fmt.Errorf("pressure: no some total in %q", s)
}

// PressureMeter measures the share of a window in which some task waited for a
// CPU, and how busy the host's CPUs were meanwhile.
type PressureMeter struct {
	fsys        fs.FS
	start       time.Time
	stall       time.Duration
	ok          bool
	busy, total uint64 // /proc/stat's cpu line at the start, in ticks
	statOK      bool
}

// StartCPUPressure begins a window.
func StartCPUPressure(fsys fs.FS) *PressureMeter {
	m := &PressureMeter{fsys: fsys, start: time.Now()}
	m.stall, m.ok = ReadCPUPressure(fsys)
	m.busy, m.total, m.statOK = readCPUTicks(fsys)
	return m
}

// Busy is the share of all the host's CPU time in the window so far that was
// busy (user, system, interrupts, steal; idle and iowait are not): whoever ran,
// the load or other work. ok is false without /proc/stat.
func (m *PressureMeter) Busy() (float64, bool) {
	if m == nil || !m.statOK {
		return 0, false
	}
	busy, total, ok := readCPUTicks(m.fsys)
	if !ok || total <= m.total || busy < m.busy {
		return 0, false
	}
	return min(float64(busy-m.busy)/float64(total-m.total), 1), true
}

// readCPUTicks reads the busy and total ticks of /proc/stat's aggregate cpu line.
func readCPUTicks(fsys fs.FS) (busy, total uint64, ok bool) {
	b, err := fs.ReadFile(fsys, "proc/stat")
	if err != nil {
		return 0, 0, false
	}
	busy, total, err = parseCPUTicks(string(b))
	return busy, total, err == nil
}

// parseCPUTicks reads "cpu user nice system idle iowait irq softirq steal ..."
// (proc(5)); guest time is already in user, so the fields after steal are left.
func parseCPUTicks(s string) (busy, total uint64, err error) {
	line, _, _ := strings.Cut(s, "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("stat: no aggregate cpu line in %q", line)
	}
	for i, f := range fields[1:9] {
		n, err := strconv.ParseUint(f, 10, 64)
		if err != nil || total+n < total {
			return 0, 0, fmt.Errorf("stat: bad cpu field %q", f)
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, nil
}

// Share is the stalled share of the window so far; ok is false without PSI (or
// without a window: m is nil).
func (m *PressureMeter) Share() (float64, bool) {
	if m == nil || !m.ok {
		return 0, false
	}
	now, ok := ReadCPUPressure(m.fsys)
	wall := time.Since(m.start)
	if !ok || wall <= 0 || now < m.stall {
		return 0, false
	}
	return min(float64(now-m.stall)/float64(wall), 1), true
}
