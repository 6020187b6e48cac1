package plan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/bench"
)

type fakeFill struct{ err error }

func (f fakeFill) Prepare(context.Context, bench.Emit) error { return f.err }

func TestDatascaleFillConfig(t *testing.T) {
	for _, tc := range []struct {
		c    DatascaleConfig
		want string
	}{
		{DatascaleConfig{Keys: 10, KeySize: 64, ValSize: "big", Prefix: "/p/"}, "--val-size"},
		{DatascaleConfig{Keys: 0, KeySize: 64, ValSize: "1KiB", Prefix: "/p/"}, "--keys"},
		{DatascaleConfig{Keys: 10, KeySize: 64, ValSize: "1KiB"}, "--prefix"},
		{DatascaleConfig{Keys: 10, KeySize: 64, ValSize: "2MiB", Prefix: "/p/"}, "request"},
	} {
		if _, _, err := tc.c.Fill(nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: want an error naming %q, got %v", tc.c, tc.want, err)
		}
	}
}

func TestDatascaleMeasure(t *testing.T) {
	reads := []Sizes{{DB: 1 << 20, DBInUse: 1 << 20, RSS: 40 << 20, Quota: 2 << 30}, {DB: 3 << 20, DBInUse: 3 << 20, RSS: 60 << 20, Quota: 2 << 30}}
	n := 0
	sizes := func() (Sizes, error) { n++; return reads[n-1], nil }
	d := Datascale{Keys: 1024, KeySize: 64, ValueSize: 1024}
	if err := d.Measure(context.Background(), fakeFill{}, sizes, 0, func() (int64, string) { return 8 << 30, "" }); err != nil {
		t.Fatal(err)
	}
	if n != 2 || d.DBPerKey != 2048 || d.RSSPerKey == nil || *d.RSSPerKey != 20480 || d.KeysInMemory == nil {
		t.Errorf("datascale %+v after %d reads", d, n)
	}
	boom := errors.New("boom")
	n = 0
	if err := (&Datascale{Keys: 1}).Measure(context.Background(), fakeFill{err: boom}, sizes, 0, func() (int64, string) { return 0, "" }); !errors.Is(err, boom) || n != 1 {
		t.Errorf("a failed fill: %v after %d reads", err, n)
	}
}
