package plan

import (
	"fmt"
	"math"
	"time"

	"github.com/etcdperf/etcdperf/profiles"
)

// KubeStep is the bench load of one cluster size: the profile that sends the
// model's traffic, and how it departs from the model.
type KubeStep struct {
	Profile *profiles.Profile
	// FillObjects is the objects the step fills (at most max_fill_objects).
	FillObjects int
	// ListScale is how many times more often the step LISTs than the model, so a
	// capped fill is listed at the model's bytes per second.
	ListScale float64
}

// minStepClients is the least concurrency of a step: enough workers that a slow
// LIST does not hold back the txns behind it.
const minStepClients = 32

// KubeProfile turns the model's traffic into a profile: updates, creates and
// deletes as bench txns (GuaranteedUpdate) over the objects; events as puts
// attached to leases that expire; LISTs of the objects, paginated; one prefix
// watch per apiserver; compaction every interval. Node, lease and pod objects
// share one key space of their mean size. duration and warmup bound the step.
func KubeProfile(t KubeTraffic, as Assumptions, duration, warmup time.Duration) KubeStep {
	fill := min(t.Objects, int(as.Get(MaxFillObjects)))
	s := KubeStep{FillObjects: fill, ListScale: float64(t.Objects) / float64(fill)}
	lists := t.ListsPerS * s.ListScale
	leaseCalls := t.EventsPerS + t.LeaseGrantsPerS
	rate := t.UpdatesPerS + t.CreatesPerS + t.DeletesPerS + leaseCalls + lists
	ratio := func(x float64) float64 { return x / rate }
	objBytes := profiles.Size(math.Round(t.ObjectBytes))
	p := &profiles.Profile{
		Name:    "kubernetes-model",
		Version: 1,
		Description: fmt.Sprintf("Kubernetes model: %d nodes, %d pods, %.3g pods/s churn, %d apiservers",
			t.Nodes, t.Pods, t.Churn, t.APIServers),
		Source:          "etcdperf plan --kubernetes model (plan/kubernetes.go); every number in its assumptions table",
		Rate:            rate,
		Clients:         min(1000, max(minStepClients, int(math.Ceil(rate/10)))),
		Connections:     t.APIServers,
		Duration:        profiles.Duration(duration),
		Warmup:          profiles.Duration(warmup),
		Keys:            profiles.Keys{Size: profiles.Size(as.Get(KeyBytes)), Space: uint64(fill)},
		Values:          profiles.Values{Size: objBytes},
		CompactInterval: profiles.Duration(time.Duration(as.Get(CompactionS) * float64(time.Second))),
		Ops: []profiles.Op{
			{Op: profiles.OpTxn, Ratio: ratio(t.UpdatesPerS)},
			{Op: profiles.OpTxnCreate, Ratio: ratio(t.CreatesPerS)},
			{Op: profiles.OpTxnDelete, Ratio: ratio(t.DeletesPerS)},
			{Op: profiles.OpWatch, Watchers: t.APIServers, Streams: t.APIServers, Prefix: true},
		},
	}
	p.Connections = min(p.Connections, p.Clients)
	if lists > 0 {
		p.Ops = append(p.Ops, profiles.Op{Op: profiles.OpList, Ratio: ratio(lists), PageSize: int64(as.Get(PageSize)), Consistency: "l"})
	}
	if leaseCalls > 0 {
		p.Ops = append(p.Ops, profiles.Op{
			Op: profiles.OpLease, Ratio: ratio(leaseCalls), TTL: profiles.Duration(time.Duration(as.Get(EventTTLS)) * time.Second),
			LeaseKeys: max(1, int(math.Round(t.EventsPerLease))), Expire: true, ValueSize: profiles.Size(as.Get(EventBytes)),
		})
	}
	// The ratios are rounded by nothing; make them sum to 1 exactly for validation.
	var sum float64
	for _, op := range p.Ops {
		sum += op.Ratio
	}
	for i := range p.Ops {
		p.Ops[i].Ratio /= sum
	}
	s.Profile = p
	return s
}
