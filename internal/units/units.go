// Package units parses and formats the quantities etcdperf's flags take and its
// outputs print. One syntax everywhere, so `--size 1MB` means the same in every
// command, and one way to print each: Bytes for sizes, Duration for durations
// in findings and prose, Ms for latency columns and verdict lines (fixed
// precision per range, so a column lines up), Count for counts.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Ms renders a latency in milliseconds with a fixed precision per range, for
// latency columns and verdict lines: "250ms", "12.5ms", "0.180ms".
func Ms(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0fms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.3fms", ms)
	}
}

// Number is what the formatters take: byte counts arrive as int64 from the
// run file and as float64 from /metrics and averages.
type Number interface {
	~int | ~int64 | ~uint64 | ~float64
}

// Bytes renders a byte count with a binary unit and at most three significant
// digits, trailing zeros trimmed: "512 B", "64 KiB", "1.5 MiB", "8 GiB". A value
// that would round up to 1024 of a unit is shown in the next one ("1 MiB", not
// "1024 KiB").
func Bytes[N Number](n N) string {
	v := float64(n)
	if math.Abs(v) < promote {
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	}
	names := [...]string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v /= 1024
	i := 0
	for math.Abs(v) >= promote && i < len(names)-1 {
		v /= 1024
		i++
	}
	return Trim(v) + " " + names[i]
}

// promote is where a value moves to the next 1024× unit: Trim prints values
// ≥ 100 without decimals, so 1023.5 and above would read "1024".
const promote = 1023.5

// Duration renders seconds as a short duration in the most readable unit, with
// Trim's precision: "0", "500 µs", "12.3 ms", "2.5 s". Analyzer evidence and
// rule thresholds use it; latency columns use Ms.
func Duration(s float64) string {
	a := math.Abs(s)
	switch {
	case s == 0:
		return "0"
	case a < 0.9995e-3: // 999.5 µs and above prints as "1 ms", not "1000 µs"
		return Trim(s*1e6) + " µs"
	case a < 0.9995:
		return Trim(s*1e3) + " ms"
	}
	return Trim(s) + " s"
}

// Trim prints v with at most three significant digits (no decimals from 100,
// one from 10, two below) and without trailing zeros: "256", "12.5", "1.5", "0.18".
func Trim(v float64) string {
	prec := 2
	switch a := math.Abs(v); {
	case a >= 100:
		prec = 0
	case a >= 10:
		prec = 1
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Count renders a count with a k/M/G suffix: "950", "12.3k", "4.5M".
func Count(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.1fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// Seconds renders an estimate in seconds as a duration to the millisecond: "1m23.456s".
func Seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// ParsePercent reads "10%" or "10" as 10 percent.
func ParsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a percentage like 10%%", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q: must not be negative", s)
	}
	return v, nil
}
