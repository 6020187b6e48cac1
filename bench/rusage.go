package bench

import (
	"runtime"
	"syscall"
	"time"
)

// rusage returns the CPU time this process has used and its peak resident set.
// It covers the whole process: with an in-process embedded etcd, the server's
// CPU is in it too.
func rusage() (cpu time.Duration, maxRSS int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	maxRSS = int64(ru.Maxrss)
	if runtime.GOOS != "darwin" { // Linux and the BSDs count kilobytes, macOS bytes
		maxRSS *= 1024
	}
	return cpu, maxRSS
}
