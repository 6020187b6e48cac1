package hardware

import (
	"fmt"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// TiersSource is where the tier table comes from.
const TiersSource = "etcd op-guide/hardware.md (example hardware configurations, AWS)"

// Tier is one row of the hardware guide: the workload it is sized for and the
// machine it suggests. Workload limits are exclusive upper bounds ("< 100 clients");
// the last tier has none.
type Tier struct {
	Name string `json:"name"`
	// Workload the tier is sized for; 0 means unbounded.
	MaxClients   int     `json:"max_clients,omitempty"`
	MaxRPS       float64 `json:"max_rps,omitempty"`
	MaxDataBytes int64   `json:"max_data_bytes,omitempty"`
	// Machine the tier suggests.
	CPUs        int    `json:"cpus"`
	MemoryBytes int64  `json:"memory_bytes"`
	DiskIOPS    int    `json:"disk_iops"`
	DiskMBPerS  int    `json:"disk_mb_per_s"`
	Example     string `json:"example"`
}

const gb = 1_000_000_000

// Tiers is the hardware guide's table, smallest first.
var Tiers = []Tier{
	{Name: "small", MaxClients: 100, MaxRPS: 200, MaxDataBytes: 100_000_000, CPUs: 2, MemoryBytes: 8 * gb, DiskIOPS: 3600, DiskMBPerS: 56, Example: "m4.large"},
	{Name: "medium", MaxClients: 500, MaxRPS: 1000, MaxDataBytes: 500_000_000, CPUs: 4, MemoryBytes: 16 * gb, DiskIOPS: 6000, DiskMBPerS: 94, Example: "m4.xlarge"},
	{Name: "large", MaxClients: 1500, MaxRPS: 10000, MaxDataBytes: 1 * gb, CPUs: 8, MemoryBytes: 32 * gb, DiskIOPS: 8000, DiskMBPerS: 125, Example: "m4.2xlarge"},
	{Name: "xlarge", CPUs: 16, MemoryBytes: 64 * gb, DiskIOPS: 16000, DiskMBPerS: 250, Example: "m4.4xlarge"},
}

// BelowSmall names a host that does not meet the smallest tier.
const BelowSmall = "below small"

// MemorySlack accepts a host whose reported memory is a little under the tier's:
// an "8 GB" machine reports 7.6–7.8 GB after the kernel and firmware take theirs.
const MemorySlack = 0.9

// WorkloadTier is the smallest tier whose limits cover every known dimension of w.
func WorkloadTier(w finding.Workload) Tier {
	for _, t := range Tiers[:len(Tiers)-1] {
		if (w.Clients == 0 || w.Clients < t.MaxClients) &&
			(w.RPS == 0 || w.RPS < t.MaxRPS) &&
			(w.DataBytes == 0 || w.DataBytes <= t.MaxDataBytes) {
			return t
		}
	}
	return Tiers[len(Tiers)-1]
}

// HostTier is the largest tier whose CPUs and memory the host has; ok is false when
// the host is below the smallest tier or its facts are unknown.
func HostTier(h *results.Host) (Tier, bool) {
	if h == nil || h.CPUs == 0 || h.MemoryBytes == 0 {
		return Tier{}, false
	}
	var best Tier
	ok := false
	for _, t := range Tiers {
		if meets(h, t) {
			best, ok = t, true
		}
	}
	return best, ok
}

func meets(h *results.Host, t Tier) bool {
	return h.EffectiveCPUs() >= float64(t.CPUs) && float64(h.MemoryBytes) >= MemorySlack*float64(t.MemoryBytes)
}

// GradeHost grades h against the tier w needs, in words: "this workload is large;
// this host meets medium: 2 CPUs where large wants 8".
func GradeHost(h *results.Host, w finding.Workload) finding.HardwareGrade {
	wt := WorkloadTier(w)
	g := finding.HardwareGrade{WorkloadTier: wt.Name, Workload: w, Source: TiersSource}
	ht, ok := HostTier(h)
	switch {
	case h == nil || h.CPUs == 0 || h.MemoryBytes == 0:
		g.HostTier = "unknown"
		g.Summary = fmt.Sprintf("this workload is %s; this host's CPUs and memory are unknown", wt.Name)
		return g
	case ok:
		g.HostTier = ht.Name
	default:
		g.HostTier = BelowSmall
	}
	if cpus := h.EffectiveCPUs(); cpus < float64(wt.CPUs) {
		g.Shortfalls = append(g.Shortfalls, fmt.Sprintf("%s CPUs where %s wants %d", trim(cpus), wt.Name, wt.CPUs))
	}
	if float64(h.MemoryBytes) < MemorySlack*float64(wt.MemoryBytes) {
		g.Shortfalls = append(g.Shortfalls, fmt.Sprintf("%.1f GB of memory where %s wants %d GB", float64(h.MemoryBytes)/gb, wt.Name, wt.MemoryBytes/gb))
	}
	if len(g.Shortfalls) == 0 {
		g.Summary = fmt.Sprintf("this workload is %s; this host meets %s, enough for it", wt.Name, g.HostTier)
		return g
	}
	meets := "meets " + g.HostTier
	if g.HostTier == BelowSmall {
		meets = "is below small"
	}
	g.Summary = fmt.Sprintf("this workload is %s; this host %s: %s", wt.Name, meets, strings.Join(g.Shortfalls, ", "))
	return g
}

// trim prints a CPU count without a needless fraction.
func trim(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}
