package faults

import (
	"sync"
	"syscall"
	"testing"
	"time"
)

// Stall stops process pid (SIGSTOP) after a delay and lets it go on (SIGCONT)
// for a span later: a member that answers nothing, as a long GC pause, a frozen
// VM or a blocked disk make one. It returns at once; cleanup waits for the stall
// to end and sends SIGCONT again, so no test leaves a stopped process behind.
func Stall(t testing.TB, pid int, after, span time.Duration) {
	t.Helper()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-time.After(after):
		case <-stop:
			return
		}
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Errorf("stall pid %d: %v", pid, err)
			return
		}
		select {
		case <-time.After(span):
		case <-stop:
		}
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}()
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		_ = syscall.Kill(pid, syscall.SIGCONT)
	})
}
