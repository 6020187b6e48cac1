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
