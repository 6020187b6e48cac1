package inspect

import (
	"math"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := LiveOptions{Options: Options{Depth: 2, Top: 10, MaxRequestBytes: DefaultMaxRequestBytes}, PageSize: 1000, PageBytes: 2 << 20, MaxRPS: 10, Values: ValuesAuto}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		want string
		set  func(*LiveOptions)
	}{
		{"--depth", func(o *LiveOptions) { o.Depth = 0 }},
		{"--top", func(o *LiveOptions) { o.Top = -1 }},
		{"--page-size", func(o *LiveOptions) { o.PageSize = 0 }},
		{"--page-bytes", func(o *LiveOptions) { o.PageBytes = 0 }},
		{"--max-rps", func(o *LiveOptions) { o.MaxRPS = math.Inf(1) }},
		{"--values", func(o *LiveOptions) { o.Values = "some" }},
		{"--max-request-bytes", func(o *LiveOptions) { o.MaxRequestBytes = 0 }},
		{"must not be negative", func(o *LiveOptions) { o.SnapshotCount = -1 }},
	} {
		o := ok
		tc.set(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error naming %q, got %v", tc.want, err)
		}
	}
}
