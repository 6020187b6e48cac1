package check

import (
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/profiles"
)

func TestLoadProfile(t *testing.T) {
	for _, c := range []struct{ load, want string }{
		{"", "check-perf-s"}, {"s", "check-perf-s"}, {"small", "check-perf-s"},
		{"m", "check-perf-m"}, {"medium", "check-perf-m"}, {"large", "check-perf-l"},
		{"xl", "check-perf-xl"}, {"xLarge", "check-perf-xl"}, {"xlarge", ""}, {"S", ""},
	} {
		got, err := LoadProfile(c.load)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("LoadProfile(%q) = %q, %v; want %q", c.load, got, err, c.want)
		}
		if c.want != "" {
			if _, err := profiles.Load(got); err != nil {
				t.Errorf("--load %s names %s: %v", c.load, got, err)
			}
		}
	}
}

func TestP99Limit(t *testing.T) {
	slo := &profiles.Profile{Name: "kubernetes", SLO: profiles.SLO{P99: profiles.Duration(50 * time.Millisecond)}}
	none := &profiles.Profile{Name: "plain"}
	for _, c := range []struct {
		override time.Duration
		p        *profiles.Profile
		want     time.Duration
		src      string
	}{
		{20 * time.Millisecond, slo, 20 * time.Millisecond, "--p99"},
		{0, slo, 50 * time.Millisecond, "profile kubernetes SLO"},
		{0, none, profiles.DefaultP99, profiles.DefaultP99Source},
	} {
		if got, src := P99Limit(c.override, c.p); got != c.want || src != c.src {
			t.Errorf("P99Limit(%s, %s) = %s, %q; want %s, %q", c.override, c.p.Name, got, src, c.want, c.src)
		}
	}
}
