package units

import "testing"

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"22m", 22 << 20, true},
		{"22M", 22 << 20, true},
		{"22mb", 22 << 20, true},
		{"22MB", 22 << 20, true}, // disk --size 1MB and inspect --exact-under 1MB: one meaning
		{"22MiB", 22 << 20, true},
		{"4k", 4096, true},
		{"1KiB", 1024, true},
		{"10 KiB", 10240, true},
		{"1.5MiB", 1536 << 10, true},
		{"1.5m", 1536 << 10, true},
		{"1g", 1 << 30, true},
		{"2t", 2 << 40, true},
		{"2300", 2300, true},
		{"256B", 256, true},
		{" 8m ", 8 << 20, true},
		{"0", 0, true},
		{"", 0, false},
		{"m", 0, false},
		{"-1m", 0, false},
		{"1.5", 0, false},
		{"10x", 0, false},
		{"1e20", 0, false},
		{"NaN", 0, false},
		{"9999999999t", 0, false},
	} {
		got, err := ParseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok=%t", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"22m", "1.5MiB", "0", "-1", "1e9", "9999999999t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseSize(s); err == nil && n < 0 {
			t.Errorf("ParseSize(%q) = %d", s, n)
		}
	})
}

func TestByteSize(t *testing.T) {
	var b ByteSize
	if err := b.Set("1.5MiB"); err != nil || b != 3<<19 || b.String() != "1572864" || b.Type() != "bytes" {
		t.Errorf("Set(1.5MiB): %d %q %v", b, b.String(), err)
	}
	if err := b.Set("1MB"); err != nil || b != 1<<20 {
		t.Errorf("Set(1MB) = %d, %v: want 1 MiB (every suffix is binary)", b, err)
	}
	if err := b.Set("lots"); err == nil {
		t.Error("Set(lots): want an error")
	}
}
