package units

import "testing"

func TestMs(t *testing.T) {
	for in, want := range map[float64]string{250: "250ms", 12.46: "12.5ms", 0.18: "0.180ms", 100: "100ms", 9.9996: "10.000ms"} {
		if got := Ms(in); got != want {
			t.Errorf("Ms(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestBytes(t *testing.T) {
	for in, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 8 << 30: "8.0 GiB", -2048: "-2.0 KiB"} {
		if got := Bytes(in); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	for in, want := range map[float64]string{950: "950", 12345: "12.3k", 4.5e6: "4.5M", 2e9: "2.0G"} {
		if got := Count(in); got != want {
			t.Errorf("Count(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestSeconds(t *testing.T) {
	for v, want := range map[float64]string{0: "0s", 1.5: "1.5s", 83.4567: "1m23.457s"} {
		if got := Seconds(v); got != want {
			t.Errorf("Seconds(%g) = %q, want %q", v, got, want)
		}
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"10%": 10, "10": 10, " 2.5 % ": 2.5, "0": 0} {
		if got, err := ParsePercent(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "x%", "-5%"} {
		if _, err := ParsePercent(in); err == nil {
			t.Errorf("%q: want an error", in)
		}
	}
}
