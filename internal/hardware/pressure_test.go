package hardware

import (
	"testing"
	"testing/fstest"
	"time"
)

func TestParsePressureSome(t *testing.T) {
	const text = "some avg10=90.05 avg60=85.85 avg300=81.98 total=1411386857\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	d, err := parsePressureSome(text)
	if err != nil || d != 1411386857*time.Microsecond {
		t.Errorf("got %v, %v", d, err)
	}
	for _, bad := range []string{"", "full total=3", "some total=x", "some total=-1"} {
		if _, err := parsePressureSome(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, ok := ReadCPUPressure(fstest.MapFS{}); ok {
		t.Error("no PSI file: ok")
	}
}

func FuzzParsePressureSome(f *testing.F) {
	f.Add("some avg10=0.00 avg60=0.00 avg300=0.00 total=12\n")
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := parsePressureSome(s); err == nil && d < 0 {
			t.Errorf("negative stall %v", d)
		}
	})
}

func TestParseCPUTicks(t *testing.T) {
	const text = "cpu  100 5 50 800 40 3 2 1 7 0\ncpu0 50 2 25 400 20 1 1 0 0 0\nintr 1\n"
	busy, total, err := parseCPUTicks(text)
	if err != nil || busy != 161 || total != 1001 {
		t.Errorf("got busy %d total %d, %v; want 161 of 1001", busy, total, err)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 3", "cpu 1 2 3 x 5 6 7 8"} {
		if _, _, err := parseCPUTicks(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	m := StartCPUPressure(fstest.MapFS{"proc/stat": {Data: []byte(text)}})
	m.fsys = fstest.MapFS{"proc/stat": {Data: []byte("cpu  200 5 100 850 40 3 2 1 0 0\n")}}
	if b, ok := m.Busy(); !ok || b < 0.749 || b > 0.751 {
		t.Errorf("busy %v %v, want 150 of 200 ticks = 0.75", b, ok)
	}
}

func FuzzParseCPUTicks(f *testing.F) {
	f.Add("cpu  100 5 50 800 40 3 2 1 7 0\n")
	f.Fuzz(func(t *testing.T, s string) {
		if busy, total, err := parseCPUTicks(s); err == nil && busy > total {
			t.Errorf("busy %d over total %d", busy, total)
		}
	})
}
