package serve

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/etcdperf/etcdperf/internal/units"
)

// Startup is serve's startup line (-w simple|json|table): where it listens,
// what it probes and how often. Probe results go to /metrics and /, not stdout.
type Startup struct {
	Listen     string   `json:"listen"`
	Endpoints  []string `json:"endpoints"`
	Embedded   bool     `json:"embedded"`
	Profile    string   `json:"profile"`
	RatePerS   float64  `json:"rate_rps"`
	DurationS  float64  `json:"probe_duration_s"`
	EveryS     float64  `json:"every_s"`
	Prefix     string   `json:"prefix"`
	DiskDir    string   `json:"disk_dir,omitempty"`
	ResultsDir string   `json:"results_dir"`
	Keep       int      `json:"keep"`
	// Modules are --config.file's: the canary probes what /probe is asked.
	Modules []string `json:"modules,omitempty"`
}

// Simple writes one line.
func (s Startup) Simple(w io.Writer) error {
	if len(s.Modules) > 0 {
		_, err := fmt.Fprintf(w, "etcdperf serve: http://%s/probe?target=<endpoints>&module=<%s> (/metrics, /healthz, /-/reload) — one probe a scrape, keys under %s\n",
			s.Listen, strings.Join(s.Modules, "|"), s.Prefix)
		return err
	}
	disk := ""
	if s.DiskDir != "" {
		disk = ", fsync probe of " + s.DiskDir
	}
	_, err := fmt.Fprintf(w, "etcdperf serve: http://%s/ (/metrics, /healthz) — every %s: %s (%g req/s for %s) under %s at %s%s; last %d run files in %s\n",
		s.Listen, units.Duration(s.EveryS), s.Profile, s.RatePerS, units.Duration(s.DurationS), s.Prefix, strings.Join(s.Endpoints, ","), disk, s.Keep, s.ResultsDir)
	return err
}

// Table writes the same as columns.
func (s Startup) Table(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(s.Modules) > 0 {
		fmt.Fprintf(tw, "LISTEN\tMODULES\tPREFIX\n%s\t%s\t%s\n", s.Listen, strings.Join(s.Modules, ","), s.Prefix)
		return tw.Flush()
	}
	fmt.Fprintf(tw, "LISTEN\tENDPOINTS\tPROFILE\tRATE\tDURATION\tEVERY\tPREFIX\tKEEP\n%s\t%s\t%s\t%g\t%s\t%s\t%s\t%d\n",
		s.Listen, strings.Join(s.Endpoints, ","), s.Profile, s.RatePerS, units.Duration(s.DurationS), units.Duration(s.EveryS), s.Prefix, s.Keep)
	return tw.Flush()
}
