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
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1 KiB"},
		{1536, "1.5 KiB"},
		{64 << 10, "64 KiB"},
		{1<<20 - 1, "1 MiB"}, // 1023.999 KiB rounds into the next unit
		{1<<20 + 1<<19, "1.5 MiB"},
		{1288490189, "1.2 GiB"},
		{8 << 30, "8 GiB"},
		{123 << 20, "123 MiB"},
		{10*1<<20 + 1<<18, "10.2 MiB"},
		{1 << 60, "1 EiB"},
		{-2048, "-2 KiB"},
		{-100 << 20, "-100 MiB"},
	} {
		if got := Bytes(tc.in); got != tc.want {
			t.Errorf("Bytes(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{312.6, "313 B"},
		{1023.4, "1023 B"},
		{1023.6, "1 KiB"},
		{1.5 * (1 << 20), "1.5 MiB"},
		{1.234 * (1 << 20), "1.23 MiB"},
	} {
		if got := Bytes(tc.in); got != tc.want {
			t.Errorf("Bytes(%g) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want string
	}{
		{0, "0"},
		{0.0005, "500 µs"},
		{0.00018, "180 µs"},
		{0.0009996, "1 ms"}, // not "1000 µs"
		{0.008, "8 ms"},
		{0.0123, "12.3 ms"},
		{0.25, "250 ms"},
		{0.9996, "1 s"},
		{2.5, "2.5 s"},
		{125, "125 s"},
		{-0.002, "-2 ms"},
	} {
		if got := Duration(tc.s); got != tc.want {
			t.Errorf("Duration(%g) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestTrim(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0"}, {0.18, "0.18"}, {1.5, "1.5"}, {1.999, "2"}, {12.46, "12.5"}, {99.96, "100"}, {256, "256"}, {-12.46, "-12.5"}, {-250, "-250"}} {
		if got := Trim(tc.v); got != tc.want {
			t.Errorf("Trim(%g) = %q, want %q", tc.v, got, tc.want)
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
