package measure

import (
	"context"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
)

// TestHostPingKeepsChildren: a child process started with Pdeathsig (as
// embedded etcd members are) dies when the thread that started it ends, and a
// goroutine that returns locked to its thread ends it. The echo's thread must
// survive its PINGs.
func TestHostPingKeepsChildren(t *testing.T) {
	started := make(chan *exec.Cmd)
	go func() {
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Error(err)
			cmd = nil
		}
		started <- cmd
	}()
	cmd := <-started
	if cmd == nil {
		return
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	for range 50 {
		if HostPingRTTMs(context.Background()) <= 0 {
			t.Fatal("no round trip to this host's own echo")
		}
		runtime.Gosched()
	}
	select {
	case <-exited:
		t.Fatal("the child process died: a thread it was started from ended")
	default:
	}
}
