package qualify

import (
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/hardware"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// loadProfile is the built-in profile whose shape every tier's load takes:
// puts of 1 KiB as etcdctl check perf writes them.
const loadProfile = "check-perf-s"

// Profile is the tier's load run as a profile: check perf's puts of 1 KiB at
// the tier's rate (TierLoad) from its clients, each over its own connection,
// measured for duration with no warm-up.
func Profile(t hardware.Tier, duration time.Duration) (*profiles.Profile, error) {
	e, err := profiles.Load(loadProfile)
	if err != nil {
		return nil, err
	}
	p := *e.Profile
	load := TierLoad(t)
	p.Name, p.Rate, p.Clients, p.Connections = "qualify-"+t.Name, load.Rate, load.Clients, load.Clients
	p.Duration, p.Warmup = profiles.Duration(duration), 0
	p.Description = fmt.Sprintf("the %s tier's load: %g puts/s of 1 KiB from %d clients", t.Name, load.Rate, load.Clients)
	return &p, nil
}

// RunFile makes run, the last load run (or a run of no ops when no load ran),
// qualify's run file: with the host, the disk probe, and qualify's own verdict
// beside that load's findings.
func (q *Result) RunFile(run *results.Run, host *results.Host, disk results.DiskResult) *results.Run {
	if run.Diagnosis == nil {
		run.Diagnosis = &finding.Diagnosis{}
	}
	run.Command = "qualify"
	run.Host = host
	run.Disk = []results.DiskResult{disk}
	run.Diagnosis.Verdict = &q.Verdict
	return run
}
