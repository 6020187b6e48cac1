// Package results holds the run file: the versioned JSON document that every
// measuring command writes and every reporting command reads. It is data only;
// the packages that measure fill it, the packages that judge read it.
package results

import (
	"slices"
	"time"

	"github.com/etcdperf/etcdperf/finding"
)

// ValidRateFraction is the least fraction of its target rate a valid run
// achieves (docs/measurement.md, validity: under 95% of the target rate a run is
// invalid, never silently passed). The one rule: bench judges a run by it, merge
// the merged run, check and qualify their criteria.
const ValidRateFraction = 0.95

// RateKept reports whether achieved req/s is at least ValidRateFraction of target.
func RateKept(achieved, target float64) bool { return achieved >= ValidRateFraction*target }

// Version is the run file format version this build writes. It reads this one
// and those before (see Decode): version 1 held a judging command's result as
// that command's printed output (fields job and drill); version 2 holds it in
// typed Sections and adds the measured round trips (Network); version 3 grades
// check's and qualify's criteria and tiers with a status (pass, fail, invalid
// for a value not measured) where version 2 wrote a boolean pass, which their
// types still read.
const Version = 3

// Run is one run file.
type Run struct {
	Version   int         `json:"version"`
	Tool      Tool        `json:"tool"`
	Command   string      `json:"command"` // e.g. "bench put"
	StartedAt time.Time   `json:"started_at"`
	EndedAt   time.Time   `json:"ended_at"`
	Target    ClusterInfo `json:"target"`
	// Flags are the options that shaped the run, by flag name; secrets are never stored.
	Flags map[string]string `json:"flags,omitempty"`

	Valid         bool   `json:"valid"`
	InvalidReason string `json:"invalid_reason,omitempty"`
	// Interrupted is set when the run was stopped early (Ctrl-C, fatal error); what it holds is partial.
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"`
	// SetupS is how long the workload's setup (key fill, watch creation) took
	// before the load: outside the measured window and its scrapes.
	SetupS    float64 `json:"setup_s,omitempty"`
	WarmupS   float64 `json:"warmup_s"`
	DurationS float64 `json:"duration_s"` // measured window, warm-up excluded

	Ops []Op `json:"ops,omitempty"`
	// Stall is the longest span of the measured window in which a request was
	// outstanding and no reply came; nil where none was measured (no request, or
	// a run file from before it was kept).
	Stall *Stall `json:"stall,omitempty"`
	// EndpointLoads are the stall and the PING round trips measured on the load
	// connections to each endpoint; empty where the transport does not say
	// which endpoint carried a request (grpc) or in older files.
	EndpointLoads []EndpointLoad `json:"endpoint_loads,omitempty"`
	Client        Client         `json:"client"`
	Disk          []DiskResult   `json:"disk,omitempty"`
	Scrapes       []Scrape       `json:"scrapes,omitempty"`
	// HostCPUPressure is the share of the run in which some runnable task on the
	// measuring host waited for a CPU (Linux PSI, /proc/pressure/cpu "some"); nil
	// where the kernel has no PSI.
	HostCPUPressure *float64 `json:"host_cpu_pressure,omitempty"`
	// HostCPUBusy is the share of all the measuring host's CPU time over the same
	// window that was busy (/proc/stat), whoever ran; nil where it was not read.
	HostCPUBusy *float64 `json:"host_cpu_busy,omitempty"`
	// HostCPUBusiest is the busy share of the measuring host's busiest single
	// CPU over the same window (/proc/stat's cpuN lines): tasks pinned to one
	// CPU wait for it while the average has idle time; nil where not read.
	HostCPUBusiest *float64 `json:"host_cpu_busiest,omitempty"`
	// Alarms are the cluster's alarms read after the load (Maintenance API); nil
	// when they were not read, empty when none was raised.
	Alarms []Alarm `json:"alarms"`
	Host   *Host   `json:"host,omitempty"`

	// Diagnosis is what the command that wrote the run concluded (its verdict,
	// findings, budget, hardware grade, plan curve), so a report made later from
	// the file shows the same; nil in run files written before it was stored.
	Diagnosis *finding.Diagnosis `json:"diagnosis,omitempty"`
	// Steps are the runs of every step of a plan, in the order they ran (each
	// without steps of its own); the file's own ops and scrapes are those of the
	// knee's step. Empty for every other command.
	Steps []*Run `json:"steps,omitempty"`
	// Network is what the run measured of the way from the generator to the
	// cluster, for the network class; nil when it was not measured.
	Network *Network `json:"network,omitempty"`
	// Sections hold the result of the command beyond its load (check's criteria,
	// a plan's steps, a qualification, a drill's phases), each typed by the
	// package that produces it; see Section. Empty for bench.
	Sections Sections `json:"sections,omitempty"`
}

// Network is the round trips measured from the generator to the first endpoint
// just before the load, over one connection of their own: the baselines the
// network class is judged by, kept so that a later analysis judges the same.
type Network struct {
	// Endpoint is the endpoint the round trips went to.
	Endpoint string `json:"endpoint"`
	// StatusRTTMs is the fastest of a few Maintenance.Status calls: a whole gRPC
	// request that does almost no server work (the client's share of every request).
	StatusRTTMs float64 `json:"status_rtt_ms"`
	// PingRTTMs is the fastest of a few HTTP/2 PINGs on the same connection: a
	// round trip no gRPC or etcd code handles, so it is the network and the
	// kernels alone; 0 when not measured.
	PingRTTMs float64 `json:"ping_rtt_ms,omitempty"`
	// HostPingRTTMs is the same PING to an echo on this host's loopback, taken
	// with it: the part of a round trip the kernels and thread wake-ups at its
	// ends take, with no network between them; 0 when not measured.
	HostPingRTTMs float64 `json:"host_ping_rtt_ms,omitempty"`
	// Endpoints are the rounds measured to every endpoint of a cluster of more
	// than one, for the links between the members; empty otherwise.
	Endpoints []EndpointRound `json:"endpoints,omitempty"`
}

// EndpointRound is one endpoint's fastest Status call and fastest linearizable
// read, each over one connection to it alone. A follower answers a linearizable
// read only once the leader has confirmed its commit index (raft's ReadIndex), so
// the read crosses the peer link between the two, as every write sent to that
// follower does (the forwarded proposal, then the commit notice).
type EndpointRound struct {
	Endpoint    string  `json:"endpoint"`
	StatusRTTMs float64 `json:"status_rtt_ms"`
	ReadMs      float64 `json:"read_ms"`
}

// PeerMs is the read's time beyond the endpoint's own round trip: the leader's
// confirmation round, plus the way to the leader and back from a follower.
func (e EndpointRound) PeerMs() float64 { return max(e.ReadMs-e.StatusRTTMs, 0) }

// RTTMs is the network's round trip: the PING's where it was measured, else
// the Status call's (which also holds both ends' gRPC work); 0 for nil.
func (n *Network) RTTMs() float64 {
	if n == nil {
		return 0
	}
	if n.PingRTTMs > 0 {
		return n.PingRTTMs
	}
	return n.StatusRTTMs
}

// Alarm is one raised alarm as the Maintenance API lists it.
type Alarm struct {
	// Member is the id of the member that raised it.
	Member string `json:"member"`
	// Type is etcd's alarm name: NOSPACE, CORRUPT.
	Type string `json:"type"`
}

// Tool identifies the build that wrote the run file.
type Tool struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	GoVersion string `json:"go_version"`
	// Commit and Dirty are the VCS revision the binary was built from and whether
	// the tree had uncommitted changes; empty without VCS stamping (go run).
	Commit string `json:"commit,omitempty"`
	Dirty  bool   `json:"dirty,omitempty"`
	// EmbeddedEtcd is the etcd server release linked into the binary.
	EmbeddedEtcd string `json:"embedded_etcd,omitempty"`
}

// ClusterInfo describes the cluster the load went to (the run file's "target").
type ClusterInfo struct {
	Endpoints []string `json:"endpoints"`
	Embedded  bool     `json:"embedded"`
	// InProcess is set when the embedded etcd ran inside etcdperf's own process,
	// so process_* metrics count server and generator together.
	InProcess     bool     `json:"in_process,omitempty"`
	ServerVersion string   `json:"server_version,omitempty"`
	ClusterID     string   `json:"cluster_id,omitempty"`
	Members       []Member `json:"members,omitempty"`
}

// Member is one cluster member as the member list reported it.
type Member struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	ClientURLs []string `json:"client_urls"`
	PeerURLs   []string `json:"peer_urls,omitempty"`
	IsLeader   bool     `json:"is_leader,omitempty"`
	IsLearner  bool     `json:"is_learner,omitempty"`

	// Pid is the member's process when it runs on the measuring host, set together
	// with the limits below once they were read from its cgroup: a zero limit then
	// means none is set (the member has the machine's CPUs and RAM). Absent for a
	// remote or in-process member, whose resources are not its own cgroup's.
	Pid int `json:"pid,omitempty"`
	// ProcessStartS is when process Pid started (Unix seconds, from its
	// proc/PID/stat): the analyzer takes Pid for the member only when this equals
	// the process_start_time_seconds the member exports, since any process here
	// may own a loopback port (a tunnel, a proxy, a port-forward). 0 in run files
	// from before it was kept, whose Pid is trusted.
	ProcessStartS float64 `json:"process_start_s,omitempty"`
	// MemoryLimitBytes is the memory limit of the member's cgroup; 0 when none is set.
	MemoryLimitBytes int64 `json:"memory_limit_bytes,omitempty"`
	// CPUQuotaCores is the CFS quota of the member's cgroup in CPUs; 0 when none is set.
	CPUQuotaCores float64 `json:"cpu_quota_cores,omitempty"`
	// DataDir is the member's data dir on this host (embedded, or read from its
	// process's flags and environment); empty when not known.
	DataDir string `json:"data_dir,omitempty"`
	// CPUWaitS is how long the threads of process Pid waited for a CPU over the
	// measured window (their run-queue delay, proc/PID/task/*/schedstat); nil
	// where it was not read.
	CPUWaitS *float64 `json:"cpu_wait_s,omitempty"`
}

// Op is the result of one operation type (put, range, watch, ...) over the measured window.
// Merge sums its numeric fields (see addFigures): a figure that must not be
// summed says so in a merge tag.
type Op struct {
	Op           string           `json:"op" merge:"caller"`
	Requests     int64            `json:"requests"`
	Errors       int64            `json:"errors"`
	ErrorsByCode map[string]int64 `json:"errors_by_code,omitempty" merge:"caller"`
	// ThroughputRPS counts successful requests per second of the measured window.
	ThroughputRPS float64 `json:"throughput_rps" merge:"derived"`
	// SentRPS counts the requests sent and completed (successes and errors) per
	// second of the measured window: the load the generator produced, which is
	// what the run's validity grades.
	SentRPS   float64 `json:"sent_rps,omitempty" merge:"derived"`
	TargetRPS float64 `json:"target_rps"` // 0 in closed loop
	// LateStarts counts requests that began more than a pacing tolerance after their intended time.
	LateStarts int64 `json:"late_starts"`
	// Unsent counts requests that were due in the measured window but never sent:
	// every client was still waiting on an earlier reply when the run ended. They
	// are not in Requests; the response time (Latency, ResponseHist) charges each
	// from its due time to the end of the run.
	Unsent int64 `json:"unsent,omitempty"`
	// OverMaxLatency counts requests whose response time passed the histograms'
	// range (HistMaxUs, 60 s): they are recorded at 60 s, so percentiles that reach
	// them read "≥ 60 s".
	OverMaxLatency int64 `json:"over_max_latency,omitempty"`

	// Latency is response time: from the intended start (open loop) or the send (closed loop) to the reply.
	Latency Summary `json:"latency_ms" merge:"caller"`
	// Service is service time: from the actual send to the reply.
	Service Summary `json:"service_ms" merge:"caller"`

	// ResponseHist and ServiceHist are the whole-window histograms (microseconds).
	ResponseHist Hist `json:"response_hist" merge:"caller"`
	ServiceHist  Hist `json:"service_hist" merge:"caller"`
	// Intervals are per-second slices of the measured window.
	Intervals []Interval `json:"intervals,omitempty" merge:"caller"`
	// Members split the op's requests by the endpoint whose connection carried
	// them; empty where the transport does not say (grpc) or in older files.
	Members []MemberOp `json:"members,omitempty" merge:"caller"`
	// ServiceOK holds exact figures (max, sum, sum of squares) of the service time
	// of the successful requests, as etcdctl check perf grades them; nil in run
	// files from before it was kept.
	ServiceOK *Moments `json:"service_ok,omitempty" merge:"caller"`

	// Watch-only fields.
	Events       int64 `json:"events,omitempty"`
	Watchers     int   `json:"watchers,omitempty"`
	MissedEvents int64 `json:"missed_events,omitempty"`
	// UndeliveredEvents are events of acknowledged puts that were still on their
	// way to a live watcher when bench stopped waiting for them (delivered in
	// order, they lie past its last event): late beyond the wait, not missed.
	UndeliveredEvents int64    `json:"undelivered_events,omitempty"`
	OutOfOrder        int64    `json:"out_of_order_events,omitempty"`
	CreateMs          *Summary `json:"watch_create_ms,omitempty" merge:"caller"`

	// BytesSent and BytesReceived are payload bytes (keys+values) the op moved, for value/range size analysis.
	BytesSent     int64 `json:"bytes_sent,omitempty"`
	BytesReceived int64 `json:"bytes_received,omitempty"`
	// KeysReceived counts keys returned by ranges.
	KeysReceived int64 `json:"keys_received,omitempty"`

	// Conflicts counts the failed compares of txn ops that were retried with the
	// revision the failure returned (kube-apiserver's GuaranteedUpdate).
	Conflicts int64 `json:"conflicts,omitempty"`
	// Retried counts the requests the transport's retry policy made again
	// (clientv3's: reads on Unavailable, see docs/measurement.md); their
	// latency includes the retries.
	Retried int64 `json:"retried,omitempty"`
}

// Interval is one second of an op's measured window, by completion time.
type Interval struct {
	// Start is the wall-clock start of the second, so runs of several workers align.
	Start time.Time `json:"start" merge:"caller"`
	// Seconds is how much of the second the load covered: less than 1 for the
	// first and last seconds of a run, which begin and end mid-second. 0 in run
	// files from before it was kept (read as 1; see Covered). A merge keeps the
	// widest worker's, an approximation of the union of their coverage.
	Seconds  float64 `json:"seconds,omitempty" merge:"max"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	// Unsent counts requests charged as unsent in this second (see Op.Unsent).
	Unsent   int64 `json:"unsent,omitempty"`
	Response Hist  `json:"response_hist" merge:"caller"`
	Service  Hist  `json:"service_hist,omitempty" merge:"caller"`
}

// Covered is the time the interval covers in seconds (1 when not recorded).
func (iv Interval) Covered() float64 {
	if iv.Seconds > 0 {
		return iv.Seconds
	}
	return 1
}

// Rate is the interval's successful requests per second of the time it covers.
func (iv Interval) Rate() float64 { return float64(iv.Requests-iv.Errors) / iv.Covered() }

// Summary is the latency digest of a histogram, in milliseconds.
type Summary struct {
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p999"`
	Max    float64 `json:"max"`
}

// Client describes the load generator's own resource use over the run.
type Client struct {
	CPUSeconds  float64 `json:"cpu_seconds"`
	MaxRSSBytes int64   `json:"max_rss_bytes" merge:"max"`
	// Cores is the number of CPUs the generator could use.
	Cores int `json:"cores,omitempty"`
	// CPUWaitS is how long the generator's threads waited for a CPU over the
	// measured window (their run-queue delay, proc/self/task/*/schedstat); 0
	// where it was not read.
	CPUWaitS float64 `json:"cpu_wait_s,omitempty"`
	// PacingLagP99Ms is how late the pacer itself fired (a scheduler-lag signal of a saturated client).
	PacingLagP99Ms float64 `json:"pacing_lag_p99_ms,omitempty" merge:"max"`
	// PacingWakeups counts the pacer's wake-ups behind PacingLagP99Ms; 0 with no
	// lag means the lag was not measured (the pacer never slept), not that it was 0.
	PacingWakeups int64 `json:"pacing_wakeups,omitempty"`
	// Transport is what carried the load's unary calls (--transport): "lean"
	// (etcdperf's own, internal/leanrpc), "grpc" (clientv3's connection) or
	// "grpc-tuned" (gRPC-go without clientv3); empty in older files.
	Transport string `json:"transport,omitempty" merge:"caller"`
}

// OpNames are the run's op names, sorted.
func (r *Run) OpNames() []string {
	names := make([]string, len(r.Ops))
	for i, op := range r.Ops {
		names[i] = op.Op
	}
	slices.Sort(names)
	return names
}

// FindOp is the run's op of that name; nil when it has none.
func (r *Run) FindOp(name string) *Op {
	for i := range r.Ops {
		if r.Ops[i].Op == name {
			return &r.Ops[i]
		}
	}
	return nil
}
