// Package units parses and formats the quantities etcdperf's flags take and its
// outputs print: sizes in bytes and latencies in milliseconds. One syntax
// everywhere, so `--size 1MB` means the same in every command.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Ms renders a latency in milliseconds with sensible precision: "250ms",
// "12.5ms", "0.180ms".
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

// Bytes renders a byte count with a binary unit: "512 B", "1.5 KiB", "8.0 GiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	v, names := float64(n), []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	i := -1
	for math.Abs(v) >= unit && i < len(names)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, names[i])
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
