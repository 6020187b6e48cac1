package hardware

import (
	"os"
	"testing"
	"testing/fstest"
	"time"
)

func TestRunQueueWait(t *testing.T) {
	fsys := fstest.MapFS{
		"proc/9/task/9/schedstat":  {Data: []byte("5000000 1500000 40\n")},
		"proc/9/task/10/schedstat": {Data: []byte("7000000 2500000 12\n")},
		"proc/8/task/8/schedstat":  {Data: []byte("1 x 2\n")},
		"proc/7/task/7/comm":       {Data: []byte("etcd\n")},
	}
	root := tree(t, fsys)
	got, err := RunQueueWait(root, 9)
	if err != nil || got != 4*time.Millisecond {
		t.Errorf("wait %v, %v; want 4ms", got, err)
	}
	for _, pid := range []int{8, 7, 6} {
		if _, err := RunQueueWait(root, pid); err == nil {
			t.Errorf("pid %d: no error", pid)
		}
	}
}

// TestRunQueueWaitSelf reads this process's threads from the real /proc.
func TestRunQueueWaitSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := RunQueueWait("", os.Getpid()); err != nil {
		t.Skipf("no schedstat here: %v", err) // kernels built without CONFIG_SCHED_INFO
	}
}
