package check

import (
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/profiles"
)

// loads maps etcdctl check perf's --load values (and its aliases, from etcd
// 3.6.16 etcdctl/ctlv3/command/check.go) to the profiles of their loads.
var loads = map[string]string{
	"s": "check-perf-s", "small": "check-perf-s",
	"m": "check-perf-m", "medium": "check-perf-m",
	"l": "check-perf-l", "large": "check-perf-l",
	"xl": "check-perf-xl", "xLarge": "check-perf-xl",
}

// LoadProfile names the profile of etcdctl check perf's --load; "" is s, etcdctl's default.
func LoadProfile(load string) (string, error) {
	if load == "" {
		load = "s"
	}
	name, ok := loads[load]
	if !ok {
		return "", fmt.Errorf("--load %q: want s, m, l or xl (small, medium, large, xLarge)", load)
	}
	return name, nil
}

// P99Limit is the default verdict's p99 threshold and where it comes from:
// override when positive (--p99), else p's SLO, else profiles.DefaultP99.
func P99Limit(override time.Duration, p *profiles.Profile) (time.Duration, string) {
	switch {
	case override > 0:
		return override, "--p99"
	case p.SLO.P99 > 0:
		return time.Duration(p.SLO.P99), "profile " + p.Name + " SLO"
	}
	return profiles.DefaultP99, profiles.DefaultP99Source
}
