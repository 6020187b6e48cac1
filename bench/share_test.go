package bench

import (
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	cases := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "2027-01-15T08:00:00Z", want: time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)},
		{in: "2027-01-15T09:00:00.25+01:00", want: time.Date(2027, 1, 15, 8, 0, 0, 250e6, time.UTC)},
		{in: "1800000000", want: time.Unix(1800000000, 0).UTC()},
		{in: "1800000000.5", want: time.Unix(1800000000, 5e8).UTC()},
		{in: "tomorrow", bad: true},
		{in: "-5", bad: true},
		{in: "", bad: true},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in)
		if c.bad != (err != nil) || !got.Equal(c.want) {
			t.Errorf("ParseTime(%q) = %s, %v", c.in, got, err)
		}
	}
}

func TestTimeValue(t *testing.T) {
	var v TimeValue
	if v.String() != "" || v.Type() != "time" {
		t.Fatalf("unset: String %q, Type %q", v.String(), v.Type())
	}
	if err := v.Set("1800000000.5"); err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), "2027-01-15T08:00:00.5Z"; got != want {
		t.Errorf("String after Set = %q, want %q", got, want)
	}
	if err := v.Set("tomorrow"); err == nil {
		t.Error("Set(tomorrow): no error")
	}
}

func TestShareCheck(t *testing.T) {
	now := time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)
	soon := now.Add(time.Minute)
	for _, c := range []struct {
		s          Share
		prefix     string
		wantPrefix string
		err        string
	}{
		{s: Share{Workers: 1}, prefix: "/etcdperf/", wantPrefix: "/etcdperf/"},
		{s: Share{Workers: 4, Index: 2, StartAt: soon}, prefix: "/etcdperf/", wantPrefix: "/etcdperf/w2/"},
		{s: Share{Workers: 2, Index: 1, StartAt: soon}, prefix: "/bench", wantPrefix: "/bench/w1/"},
		{s: Share{Workers: 1, StartAt: soon}, prefix: "/p/", wantPrefix: "/p/"},
		{s: Share{Workers: 1, StartAt: now.Add(-500 * time.Millisecond)}, prefix: "/p/", wantPrefix: "/p/"}, // within startLate
		{s: Share{Workers: 0}, err: "--workers must be at least 1"},
		{s: Share{Workers: 4, Index: 4, StartAt: soon}, err: "between 0 and --workers-1 (3)"},
		{s: Share{Workers: 1, Index: -1}, err: "between 0"},
		{s: Share{Workers: 4, Index: 1}, err: "needs --start-at"},
		{s: Share{Workers: 1, StartAt: now.Add(-time.Hour)}, err: "passed 1h0m0s ago"},
		{s: Share{Workers: 1, StartAt: now.Add(25 * time.Hour)}, err: "not milliseconds"},
	} {
		err := c.s.Check(now)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%+v: error %v, want %q", c.s, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%+v: %v", c.s, err)
		case c.err == "" && c.s.Prefix(c.prefix) != c.wantPrefix:
			t.Errorf("%+v: prefix %q, want %q", c.s, c.s.Prefix(c.prefix), c.wantPrefix)
		}
	}
}

// TestShareSplit: the shares add up to the whole, whatever the remainder.
func TestShareSplit(t *testing.T) {
	for _, c := range []struct {
		rate    float64
		total   uint64
		workers int
	}{{1000, 10000, 4}, {150, 7, 4}, {8000, 1001, 3}, {0, 0, 5}, {1, 1, 1}} {
		var rate float64
		var total uint64
		for i := range c.workers {
			r, n := Share{Index: i, Workers: c.workers}.Split(c.rate, c.total)
			rate += r
			total += n
			if lo := c.total / uint64(c.workers); n != lo && n != lo+1 {
				t.Errorf("%+v worker %d: %d requests, want %d or %d", c, i, n, lo, lo+1)
			}
		}
		if total != c.total || rate < c.rate*(1-1e-12) || rate > c.rate*(1+1e-12) {
			t.Errorf("%+v: shares sum to rate %g, total %d", c, rate, total)
		}
	}
}

func TestShareTake(t *testing.T) {
	now := time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)
	at := now.Add(300 * time.Millisecond)
	s := Share{StartAt: at, Index: 1, Workers: 4}
	rate, total := 1000.0, uint64(10)
	flags := map[string]string{"rate": "1000", "val-size": "256"}
	if err := s.Take(&rate, &total, flags, now); err != nil {
		t.Fatal(err)
	}
	if rate != 250 || total != 3 {
		t.Errorf("share: rate %g total %d, want 250 and 3", rate, total)
	}
	want := map[string]string{"rate": "250", "total": "3", "workers": "4", "worker-index": "1", "start-at": FormatTime(at), "val-size": "256"}
	for k, v := range want {
		if flags[k] != v {
			t.Errorf("run flag %s = %q, want %q (flags %v)", k, flags[k], v, flags)
		}
	}
	// Only the rate: the total stays unrecorded.
	rate, flags = 150, map[string]string{}
	if err := s.Take(&rate, nil, flags, now); err != nil || rate != 37.5 || flags["total"] != "" {
		t.Errorf("rate only: %v, rate %g, flags %v", err, rate, flags)
	}
	// A lone worker without --start-at records nothing.
	flags = map[string]string{}
	if err := (Share{Workers: 1}).Take(&rate, nil, flags, now); err != nil || len(flags) != 0 {
		t.Errorf("lone worker: %v, flags %v", err, flags)
	}
	if err := s.Take(nil, nil, nil, at.Add(2*time.Second)); err == nil || !strings.Contains(err.Error(), "passed") {
		t.Errorf("start missed while connecting: %v", err)
	}
	total = 3
	if err := s.Take(nil, &total, nil, now); err == nil || !strings.Contains(err.Error(), "fewer requests than --workers 4") {
		t.Errorf("--total 3 over 4 workers: %v", err)
	}
}
