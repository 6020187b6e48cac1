package report

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

type fakeOutput struct {
	N int `json:"n"`
}

func (f fakeOutput) Simple(w io.Writer) error { _, err := fmt.Fprintf(w, "n is %d\n", f.N); return err }

func (f fakeOutput) Table(w io.Writer) error {
	tw := NewTable(w)
	fmt.Fprintf(tw, "N\tDOUBLE\n%d\t%d\n", f.N, 2*f.N)
	return tw.Flush()
}

func TestPrint(t *testing.T) {
	for _, c := range []struct{ format, want string }{
		{"simple", "n is 3\n"},
		{"", "n is 3\n"},
		{"json", "{\n  \"n\": 3\n}\n"},
		{"table", "N  DOUBLE\n3  6\n"},
	} {
		var b bytes.Buffer
		if err := Print(&b, c.format, fakeOutput{N: 3}); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("%q: got %q, want %q", c.format, b.String(), c.want)
		}
	}
}

func TestMs(t *testing.T) {
	for v, want := range map[float64]string{0.18: "0.180ms", 12.5: "12.5ms", 250: "250ms", 60000: "≥60s"} {
		if got := Ms(v); got != want {
			t.Errorf("Ms(%g) = %q, want %q", v, got, want)
		}
	}
}
