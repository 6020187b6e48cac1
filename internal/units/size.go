package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// SizeSyntax says in words what ParseSize reads, for flag help and errors.
const SizeSyntax = "a byte count such as 2300, 512k, 22MiB or 1.5g: suffixes k, m, g, t with an optional b or ib, any case, are powers of 1024 (as fio and etcd's limits read them)"

// sizeMult are the suffixes ParseSize accepts (lower-cased), all binary: fio
// reads "22m" and "22mb" as 22 MiB, and etcd's limits (1.5 MiB requests, the
// backend quota) are binary, so "MB" never means 10^6 here.
var sizeMult = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}

// ParseSize reads a size in the one syntax every flag and profile uses (see
// SizeSyntax). A fraction is accepted when the byte count it names is whole.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	mult, ok := sizeMult[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || v < 0 || v*mult >= math.MaxInt64 || v*mult != math.Trunc(v*mult) {
		return 0, fmt.Errorf("%q is not a byte size: want %s", s, SizeSyntax)
	}
	return int64(v * mult), nil
}

// ByteSize is a flag value (pflag.Value) holding a byte count in the one size
// syntax (SizeSyntax); it prints as the plain count.
type ByteSize int64

// String prints the count in bytes.
func (b *ByteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

// Type names the flag's kind in help text.
func (b *ByteSize) Type() string { return "bytes" }

// Set parses s (ParseSize).
func (b *ByteSize) Set(s string) error {
	v, err := ParseSize(s)
	*b = ByteSize(v)
	return err
}
