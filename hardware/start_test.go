package hardware

import (
	"os"
	"testing"
	"testing/fstest"
	"time"
)

func TestProcessStart(t *testing.T) {
	fsys := fstest.MapFS{
		// A command name with a space and a ")" in it.
		"proc/42/stat": {Data: []byte("42 (etcd ) x) S 1 42 42 0 -1 4194560 3000 0 0 0 120 30 0 0 20 0 12 0 123456 1000000 5000 18446744073709551615" +
			" 1 1 1 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 1 1 1 1 1 1 1 0\n")},
		"proc/stat": {Data: []byte("cpu  1 2 3 4\nbtime 1765000000\nprocesses 9\n")},
	}
	root := tree(t, fsys)
	got, err := ProcessStart(root, 42)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1765000000 + 1234.56; got != want {
		t.Errorf("start %v, want %v", got, want)
	}
	if _, err := ProcessStart(root, 7); err == nil {
		t.Error("no error for a missing process")
	}
}

// TestProcessStartSelf: this process's start, read from the real /proc, is
// within seconds before now.
func TestProcessStartSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	got, err := ProcessStart("", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	age := time.Since(time.Unix(0, int64(got*1e9)))
	if age < -2*time.Second || age > time.Hour {
		t.Errorf("this process started %v ago by /proc", age)
	}
}
