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

// PressureMeter measures the share of a window in which some task waited for a CPU.
type PressureMeter struct {
	fsys  fs.FS
	start time.Time
	stall time.Duration
	ok    bool
}

// StartCPUPressure begins a window.
func StartCPUPressure(fsys fs.FS) *PressureMeter {
	m := &PressureMeter{fsys: fsys, start: time.Now()}
	m.stall, m.ok = ReadCPUPressure(fsys)
	return m
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
