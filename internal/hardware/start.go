package hardware

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// userHZ is the kernel's USER_HZ, the unit of proc/PID/stat's starttime: 100 on
// every Linux architecture Go supports (as prometheus/procfs and client_golang's
// process collector assume when they export process_start_time_seconds).
const userHZ = 100

// ProcessStart is when process pid started, in Unix seconds, as client_golang's
// process collector computes a process's process_start_time_seconds: starttime
// (field 22 of proc/PID/stat, in USER_HZ ticks since boot) plus btime of proc/stat.
// Equal values identify one process, so a listener found on a member's port is the
// member only when its start matches the one the member exports. fsys is rooted
// at "/"; nil means the real one.
func ProcessStart(fsys fs.FS, pid int) (float64, error) {
	if fsys == nil {
		fsys = os.DirFS("/")
	}
	stat, err := fs.ReadFile(fsys, "proc/"+strconv.Itoa(pid)+"/stat")
	if err != nil {
		return 0, err
	}
	ticks, err := startTicks(string(stat))
	if err != nil {
		return 0, fmt.Errorf("proc/%d/stat: %w", pid, err)
	}
	sys, err := fs.ReadFile(fsys, "proc/stat")
	if err != nil {
		return 0, err
	}
	boot, err := bootTime(string(sys))
	if err != nil {
		return 0, fmt.Errorf("proc/stat: %w", err)
	}
	return float64(boot) + float64(ticks)/userHZ, nil
}

// startTicks is field 22 (starttime) of a proc/PID/stat line. The command name
// (field 2) is in parentheses and may hold spaces and ")", so the fields are
// counted from the last ")".
func startTicks(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): starttime, field 22, is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("%d fields after the command name, want 20 or more", len(f))
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// bootTime is the btime line of proc/stat: the boot time in Unix seconds.
func bootTime(stat string) (uint64, error) {
	for line := range strings.Lines(stat) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no btime line")
}
