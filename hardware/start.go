package hardware

// ProcessStart is when process pid started, in Unix seconds, as client_golang's
// process collector computes a process's process_start_time_seconds (both through
// prometheus/procfs): starttime of proc/PID/stat, in USER_HZ ticks since boot,
// plus btime of proc/stat. Equal values identify one process, so a listener found
// on a member's port is the member only when its start matches the one the
// member exports. root holds proc/; "" means "/".
func ProcessStart(root string, pid int) (float64, error) {
	fs, err := procFS(root)
	if err != nil {
		return 0, err
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return st.StartTime()
}
