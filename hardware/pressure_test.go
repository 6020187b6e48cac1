package hardware

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"
)

func TestReadCPUPressure(t *testing.T) {
	root := tree(t, fstest.MapFS{"proc/pressure/cpu": file(
		"some avg10=90.05 avg60=85.85 avg300=81.98 total=1411386857\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")})
	if d, ok := ReadCPUPressure(root); !ok || d != 1411386857*time.Microsecond {
		t.Errorf("got %v, %v", d, ok)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"no PSI file":  {},
		"no some line": {"proc/pressure/cpu": file("full avg10=0.00 avg60=0.00 avg300=0.00 total=3\n")},
		"bad total":    {"proc/pressure/cpu": file("some avg10=0.00 avg60=0.00 avg300=0.00 total=x\n")},
	} {
		if d, ok := ReadCPUPressure(tree(t, fsys)); ok {
			t.Errorf("%s: %v, ok", name, d)
		}
	}
}

func TestCPUBusy(t *testing.T) {
	root := tree(t, fstest.MapFS{"proc/stat": file("cpu  100 5 50 800 40 3 2 1 7 0\ncpu0 50 2 25 400 20 1 1 0 0 0\nintr 1\n")})
	m := StartCPUPressure(root)
	if err := os.WriteFile(filepath.Join(root, "proc/stat"), []byte("cpu  200 5 100 850 40 3 2 1 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, ok := m.Busy(); !ok || b < 0.749 || b > 0.751 {
		t.Errorf("busy %v %v, want 150 of 200 ticks = 0.75", b, ok)
	}
	if _, ok := StartCPUPressure(tree(t, fstest.MapFS{})).Busy(); ok {
		t.Error("no proc/stat: ok")
	}
}

// TestCPUBusiest: one CPU saturated while the other idles reads 100%, where the
// host's average reads half.
func TestCPUBusiest(t *testing.T) {
	root := tree(t, fstest.MapFS{"proc/stat": file("cpu  100 0 0 100 0 0 0 0 0 0\ncpu0 50 0 0 50 0 0 0 0 0 0\ncpu1 50 0 0 50 0 0 0 0 0 0\n")})
	m := StartCPUPressure(root)
	if err := os.WriteFile(filepath.Join(root, "proc/stat"), []byte("cpu  200 0 0 200 0 0 0 0 0 0\ncpu0 150 0 0 50 0 0 0 0 0 0\ncpu1 50 0 0 150 0 0 0 0 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, ok := m.Busy(); !ok || b != 0.5 {
		t.Errorf("busy %v %v, want 0.5", b, ok)
	}
	if b, ok := m.Busiest(); !ok || b != 1 {
		t.Errorf("busiest %v %v, want cpu0's 100 of 100 ticks = 1", b, ok)
	}
	if _, ok := StartCPUPressure(tree(t, fstest.MapFS{})).Busiest(); ok {
		t.Error("no proc/stat: ok")
	}
}
