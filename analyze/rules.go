package analyze

import (
	"fmt"
	"math"
	"strings"

	"github.com/etcdperf/etcdperf/internal/units"

	"github.com/etcdperf/etcdperf/diskprobe"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/metrics"
)

// Sizes in bytes.
const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// minSamples is the fewest observations a histogram needs before its p99 may fail a
// run: with fewer, "p99" is the slowest one or two events, and a single hiccup of a
// noisy machine must not fail a cluster.
const minSamples = 100

// Sources of thresholds; docs/verdict.md lists every rule with its source.
const (
	srcWAL        = "etcd FAQ; IBM/fio guidance (p99 fdatasync < 10 ms); OpenShift warns at 20 ms"
	srcBackend    = "etcd FAQ (backend commit p99 < 25 ms); etcdperf: fails at twice that, the ratio OpenShift's 20 ms fail keeps to the 10 ms WAL bound"
	srcRTT        = "OpenShift docs (p99 < 50 ms); etcd mixin alert fires at 150 ms"
	srcLeader     = "etcd mixin (etcdHighNumberOfLeaderChanges: ≥ 4 leader changes in 15 min); etcd server (a request past 100 ms is logged as too long)"
	srcLost       = "etcdperf: a member that stops answering mid-run is lost to its clients; its last scrape and the error say why"
	srcProposals  = "etcd mixin (etcdHighNumberOfFailedProposals)"
	srcServerWarn = "etcd server warnings (help text: likely overloaded from slow disk)"
	srcDBMax      = "etcd docs (dev-guide/limit.md: 8 GiB suggested maximum)"
	srcReqLimit   = "etcd --max-request-bytes (1.5 MiB hard limit); raft log keeps --snapshot-count=10,000 entries in memory, so 256 KiB values mean ~2.5 GiB of RSS"
	srcRange      = "kube-apiserver pages lists (500 per call); an unpaginated range is served in one pass on the member and one gRPC message"
	srcRangeSlow  = "etcdperf: a linearizable range of one key waits for the read index and the apply, so a slow disk or a starved CPU slows it too; a slow range is range size only with large ranges"
	srcApplySlow  = "etcd server warning 'apply request took too long' (expected 100 ms); etcdctl check perf fails on a 500 ms request"
	srcMemory     = "etcdperf: RSS grows with the in-memory raft log (10,000 entries); 720 MB RSS was seen for a 320 MB db, OOM under a 550 MB limit; warn at half the memory (a WAL replay or a snapshot can double the working set), fail at 80% (what is left is under the page cache bbolt's mmap reads through)"
	srcDBvsRAM    = "etcd op-guide/hardware.md (etcd caches key-value data in memory; bbolt mmaps the db)"
	srcNetGap     = "etcdperf: client latency minus server-side latency is network, queueing and the generator together; without a measured round trip nothing tells them apart"
	srcCPU        = "etcd op-guide/hardware.md (CPU-bound under heavy load: give 8-16 cores); a saturated member misses heartbeats; etcdperf: a queue's wait grows as ρ/(1−ρ) service times (Kleinrock, Queueing Systems vol. 1, M/M/1): 2.3 at 70% busy (warn), 9 at 90% (fail)"
	srcClient     = "etcdperf measurement rules: a saturated generator measures itself, not the server"
	srcLateStarts = "etcdperf measurement rules (like k6 dropped iterations)"
	srcErrors     = "etcdctl check perf (any error fails: etcd 3.6.16 etcdctl/ctlv3/command/check.go)"
	srcPSI        = "Linux PSI (Documentation/accounting/psi.rst: some = wall time in which runnable tasks waited for the resource); etcdperf: waiting half the time (warn) inflates every latency the members and the generator measure; 80% (fail): contention is the rule, not the exception (four seconds of five)"
	srcThrottle   = "kubernetes-mixin alert CPUThrottlingHigh (fires at 25% of CFS periods throttled); cAdvisor counts the periods of the member's cgroup"
	srcWorkingSet = "Kubernetes docs (the kubelet evicts, and the kernel OOM-kills a container, on its working set against its memory limit); " + srcMemory
	srcDiskBusy   = "node_exporter node-mixin (USE method: disk utilisation = rate of node_disk_io_time_seconds_total); a device with I/O in flight 90% of the time (iostat %util) queues every fsync"
	srcOverMax    = "etcdperf measurement rules (latency histograms span 1 µs .. 60 s): a reply after a minute is past any objective"
)

// Sources of the limits inspect grades a snapshot or a live db with too
// (FragLimits, QuotaLimits): one citation for both commands.
const (
	QuotaSource = "etcd mixin (etcdBackendQuotaLowSpace fires at 95% of the quota); etcd-diagnosis; etcdperf: warns at 80% to leave room for a compaction and defragmentation, which need the space to finish before the alarm refuses writes"
	FragSource  = "etcd mixin (etcdDatabaseHighFragmentationRatio: in use under 50% of the db size, above 100 MiB in use)"
)

// Limits more than one rule grades with, or that a rule's other conditions name.
var (
	// The WAL warns at the disk probe's etcd rule and fails at its OpenShift
	// rule; the backend warns at the probe's backend rule: one number each for
	// `etcdperf disk` and the analyzer.
	limWAL      = Limits{Warn: diskprobe.LimitWAL.LimitMs / 1000, Fail: diskprobe.LimitOpenShift.LimitMs / 1000, Unit: UnitSeconds}
	limBackend  = Limits{Warn: diskprobe.LimitBackend.LimitMs / 1000, Fail: 0.050, Unit: UnitSeconds}
	limPeerRTT  = Limits{Warn: 0.050, Fail: 0.150, Unit: UnitSeconds}
	limCPU      = Limits{Warn: 0.7, Fail: 0.9, Unit: UnitRatio}
	limPacerLag = Limits{Warn: 20, Fail: 100, Unit: UnitMs}
	// limPSI grades a pressure share: the time some task waited for a resource.
	limPSI = Limits{Warn: 0.5, Fail: 0.8, Unit: UnitRatio}
	// QuotaLimits grade the db size over its quota (inspect grades a snapshot with them too).
	QuotaLimits = Limits{Warn: 0.8, Fail: 0.95, Unit: UnitRatio}
	// FragLimits grade the db's in-use share, from FragMinInUse in use (inspect too).
	FragLimits = Limits{Warn: 0.5, Fail: math.Inf(-1), Unit: UnitFraction, Below: true, Note: "(ok whenever in use ≤ " + units.Bytes(FragMinInUse) + ")"}
	limValue   = Limits{Warn: 64 * kib, Fail: 256 * kib, Unit: UnitBytes, Note: "(limit " + units.Bytes(maxRequestBytes) + ")"}
	// limRangeBytes warns at the request limit: a response that large would be refused as a request.
	limRangeBytes = Limits{Warn: maxRequestBytes, Fail: 16 * mib, Unit: UnitBytes}
	limRangeKeys  = Limits{Warn: 1_000, Fail: 10_000, Unit: UnitCount}
	// limAnyWarns and limAnyFails grade a count of events that should not happen.
	limAnyWarns = Limits{Warn: 0, Fail: math.Inf(1), Unit: UnitCount, Strict: true}
	limAnyFails = Limits{Warn: 0, Fail: 0, Unit: UnitCount, Strict: true}
)

// maxRequestBytes is etcd's --max-request-bytes default (1.5 MiB).
const maxRequestBytes = 1.5 * mib

// withThresholds writes each rule's threshold text from its limits, followed by
// what the rule says of them beside.
func withThresholds(rules []Rule) []Rule {
	for i := range rules {
		if l := rules[i].Limits; l != nil {
			rules[i].Threshold = strings.TrimSuffix(l.Text()+"; "+rules[i].Threshold, "; ")
		}
	}
	return rules
}

// Rules is the table the analyzer grades with, one row per signal.
var Rules = withThresholds([]Rule{
	// disk
	{Class: finding.ClassDisk, Signal: "wal fsync p99 (" + metrics.WALFsync + ")", Key: true, PerMember: true,
		Limits: &limWAL, Source: srcWAL,
		Advice: "Put the WAL on a faster disk (SSD/NVMe, no noisy neighbours; --wal-dir on its own device); check with `etcdperf disk`.",
		Eval:   histRule(metrics.WALFsync, nil, 0.99)},
	{Class: finding.ClassDisk, Signal: "backend commit p99 (" + metrics.BackendCommit + ")", PerMember: true,
		Limits: &limBackend, Source: srcBackend,
		Advice: "Backend commits are slow: a faster disk, and defragment a fragmented db.",
		Eval:   histRule(metrics.BackendCommit, nil, 0.99)},
	{Class: finding.ClassDisk, Signal: "slow applies per 1,000 requests (" + metrics.SlowApply + " delta)", PerMember: true,
		Limits: &limPerThousand, Source: srcSlowApply,
		Advice: "Applies took longer than 100 ms: usually a slow disk, else an overloaded member.",
		Eval:   rareEventRule(metrics.SlowApply, diskAgrees)},
	{Class: finding.ClassDisk, Signal: "disk probe fdatasync p99", Key: true,
		Limits: &limWAL, Source: srcWAL,
		Advice: "The probed disk is too slow for a WAL.",
		Eval:   probeRule},

	{Class: finding.ClassDisk, Signal: "member host disk busy (" + metrics.NodeDiskIOTime + " rate, busiest device)", PerMember: true,
		Limits: &Limits{Warn: 0.9, Fail: math.Inf(1), Unit: UnitRatio}, Source: srcDiskBusy,
		Advice: "A disk of the member's host is busy nearly all the time: every fsync queues behind other I/O; give the WAL its own device.",
		Eval:   diskBusyRule},
	{Class: finding.ClassDisk, Signal: "member host I/O pressure (" + metrics.NodePressureIO + " rate)", PerMember: true,
		Limits: &limPSI, Source: srcPSI + " (node_exporter pressure collector)",
		Advice: "Tasks of the member's host wait for I/O much of the time: the disk is contended; give etcd a disk of its own.",
		Eval:   hostPSIRule(metrics.NodePressureIO)},

	// network
	{Class: finding.ClassNetwork, Signal: "peer round trip p99 (" + metrics.PeerRTT + ")", Key: true, PerMember: true,
		Limits: &limPeerRTT, Source: srcRTT,
		Advice: "Peers are far apart or the link is congested: keep members in one region with low-latency links; raise --heartbeat-interval/--election-timeout only to match a real RTT.",
		Eval:   peerRTTRule},
	{Class: finding.ClassNetwork, Signal: "peer send failures per 1,000 requests (" + metrics.PeerSentFailures + " delta)", PerMember: true,
		Limits: &limPerThousand, Source: srcPeerFail,
		Advice: "Messages to peers failed: check connectivity, MTU and firewall between members.",
		Eval:   peerFailRule},
	{Class: finding.ClassNetwork, Signal: "client round trip / client latency at p50 and p99 (HTTP/2 PINGs through the load, per endpoint; else the round trip before it)", Key: true,
		Threshold: fmt.Sprintf("per endpoint, its PINGs through the load against the latency of the requests it served, at p50 (less this host's PING to itself) and p99; warn: ≥ %s at p50 (≥ %s at p99), over the server-side time at that quantile (the largest measured part) and ≥ %s of the client's; fail: also ≥ %s; ok when the PINGs are over %s× the requests' time (they waited in a queue the requests did not) or a CPU (a member's, the generator's, this host's) is ≥ %s busy (they wait for it too). Without PINGs (grpc transport) the round trip before the load at p50 (≥ %s of the client p50 where the server side is not known)",
			units.Duration(clientRTTFloorMs/1000), units.Duration(pingTailFloorMs/1000), pct(netShareLargest), units.Duration(clientRTTFailMs/1000), units.Trim(pingOverClient), pct(limCPU.Warn), pct(netShareWarn)),
		Source: srcNetShare + "; etcdperf: a measured round trip over the server's own time and ≥ 20% of the client latency is the largest part, and removing it makes requests ≥ 1.25× faster (Amdahl); a round trip within one datacenter ≈ 0.5 ms (Latency numbers every programmer should know) is no fault; " + srcPingTail + "; etcdperf: a PING over 1.2× the requests that cross the same link waited in a queue (the noise of two quantiles); etcd mixin (150 ms)",
		Advice: "Most of what clients wait for is the round trip to the leader: run clients (or the generator) close to the cluster, check proxies and load balancers in between.",
		Eval:   clientRTTRule},
	{Class: finding.ClassNetwork, Signal: "read round / client p99 (pairs of a linearizable and a serializable read through the load, per endpoint)", Key: true,
		Threshold: fmt.Sprintf("per endpoint, the linearizable read's time beyond the serializable one's, its p99 over its own p50, against the p99 of the requests it served; warn: ≥ %s, ≥ %s of the requests' p99 and over the slowest member's WAL fsync and backend commit p99 plus the apply's; fail: also ≥ %s; ok when over %s× the requests' p99, when a CPU (a member's, the generator's, this host's) is ≥ %s busy, or when the leader changed in the window (the election rule grades it)",
			units.Duration(pingTailFloorMs/1000), pct(netShareLargest), units.Duration(clientRTTFailMs/1000), units.Trim(pingOverClient), pct(limCPU.Warn)),
		Source: srcNetShare + "; etcd raft (a linearizable read waits for the leader's ReadIndex: a heartbeat round to a quorum; a follower forwards it to the leader; a follower answers after it saves its WAL, and a read waits for the apply, which waits for the backend commit); " + srcPingTail + "; etcd mixin (150 ms)",
		Advice: "Requests wait now and then on the link between the members: check the members' network path (loss, retransmissions, a congested or policed link) and the MTU between them.",
		Eval:   readRoundRule},
	{Class: finding.ClassNetwork, Signal: "follower link / client p50 (linearizable read through each endpoint, beyond its round trip)",
		Threshold: fmt.Sprintf("the slowest endpoint's extra over the fastest's; warn: ≥ %s of the client p50 and ≥ %s× the server-side p50; fail: also ≥ %s",
			pct(netShareWarn), units.Trim(netOverServer), units.Duration(peerRTTFailMs/1000)),
		Source: srcNetShare + "; etcd raft (a follower serves a linearizable read after the leader's ReadIndex and forwards proposals to the leader); OpenShift docs (peer RTT p99 < 50 ms)",
		Advice: "Requests sent to one member wait on its link to the leader: check that member's network path to the others, or keep clients off it until it is fixed.",
		Eval:   followerLinkRule},
	{Class: finding.ClassNetwork, Signal: "replication round / client p50 (multi-member writes; a linearizable read through each endpoint, beyond its round trip, median over the endpoints)", Key: true,
		Threshold: fmt.Sprintf("measured, never a remainder; warn: ≥ %s of the client p50 and ≥ %s× the leader's own time, CPUs under %s; fail: also ≥ %s",
			pct(netShareWarn), units.Trim(netOverServer), pct(limCPU.Warn), units.Duration(peerRTTFailMs/1000)),
		Source: srcNetShare + "; OpenShift docs (peer RTT p99 < 50 ms)",
		Advice: "Writes wait for the replication round: the members are far apart or their links slow; keep members in one region with low-latency links.",
		Eval:   replicationRule},
	{Class: finding.ClassNetwork, Signal: "client p50 minus server-side p50 (run files without a measured round trip)", Key: true,
		Threshold: "not graded: what the measured parts leave over is unexplained, never the network's", Source: srcNetGap,
		Advice: "Clients see far more latency than the server spends: the network between client and leader (or a proxy/load balancer) adds it; run the generator close to the cluster.",
		Eval:   latencyGapRule},

	// memory
	{Class: finding.ClassMemory, Signal: "peak RSS / memory (" + metrics.RSS + ")", Key: true, PerMember: true,
		Limits: &Limits{Warn: 0.5, Fail: 0.8, Unit: UnitRatio}, Source: srcMemory,
		Advice: "Give the member more memory (or raise its cgroup limit), lower --snapshot-count, and avoid large values: a limit below the working set kills the member during WAL replay.",
		Eval:   rssRule},
	{Class: finding.ClassMemory, Signal: "db size / memory (" + metrics.DBTotal + ")", PerMember: true,
		Limits: &Limits{Warn: 0.5, Fail: 1, Unit: UnitRatio}, Source: srcDBvsRAM,
		Advice: "The db does not fit the memory: add memory, compact and defragment, or shrink what is stored.",
		Eval:   dbRAMRule},

	{Class: finding.ClassMemory, Signal: "container working set / memory limit (" + metrics.ContainerWorkingSet + " / " + metrics.ContainerMemLimit + ")", Key: true, PerMember: true,
		Limits: &Limits{Warn: 0.5, Fail: 0.8, Unit: UnitRatio}, Source: srcWorkingSet,
		Advice: "The member's container works near its memory limit: raise the limit (mind the WAL-replay cliff), lower --snapshot-count, avoid large values.",
		Eval:   workingSetRule},
	{Class: finding.ClassMemory, Signal: "member host memory pressure (" + metrics.NodePressureMemory + " rate)", PerMember: true,
		Limits: &limPSI, Source: srcPSI + " (node_exporter pressure collector)",
		Advice: "Tasks of the member's host wait for memory (reclaim, swap): give the host more memory or move other work off it.",
		Eval:   hostPSIRule(metrics.NodePressureMemory)},

	// cpu
	{Class: finding.ClassCPU, Signal: "container CPU throttled (" + metrics.ContainerThrottled + " / " + metrics.ContainerCFSPeriods + ")", Key: true, PerMember: true,
		Limits: &Limits{Warn: 0.25, Fail: math.Inf(1), Unit: UnitRatio}, Source: srcThrottle,
		Advice: "The member's container hits its CPU quota: lift the quota (Kubernetes: the CPU limit) or give it more cores.",
		Eval:   throttleRule},
	{Class: finding.ClassCPU, Signal: "member host CPU pressure (" + metrics.NodePressureCPU + " rate)", PerMember: true,
		Limits: &limPSI, Source: srcPSI + " (node_exporter pressure collector)",
		Advice: "Tasks of the member's host wait for a CPU much of the time: other work crowds etcd out; give it dedicated cores.",
		Eval:   hostPSIRule(metrics.NodePressureCPU)},
	{Class: finding.ClassCPU, Signal: "server CPU busy (" + metrics.CPUSeconds + " rate / cores)", Key: true, PerMember: true,
		Limits: &limCPU, Source: srcCPU,
		Advice: "The member's CPUs are saturated: give it more (or faster) cores or lift its CPU quota, and keep other work off its machine.",
		Eval:   serverCPURule},
	{Class: finding.ClassCPU, Signal: "member waited for a CPU (schedstat run-queue delay / runnable time)", PerMember: true,
		Threshold: "fail ≥ 90% (limCPU's fail) when work besides the members and the generator took more CPU than the member; never warns",
		Source:    "Linux scheduler statistics (Documentation/scheduler/sched-stats.rst: schedstat's second field, time spent waiting on a run queue); etcdperf: the share of runnable time spent waiting is an M/M/1 queue's utilisation ρ (Kleinrock, Queueing Systems vol. 1), graded as the CPU is; members and the generator sharing a host wait for each other at any load (66–78% on make truth's healthy 3- and 5-member baselines on 2 cores), so it grades only a neighbour's CPU",
		Advice:    "Other work on the member's host takes its CPUs: give etcd dedicated cores, or move the other work (the load generator included) off its host.",
		Eval:      memberWaitRule},
	{Class: finding.ClassCPU, Signal: "host CPU busy (members' " + metrics.CPUSeconds + " rate + generator CPU, / host cores)",
		Limits: &limCPU, Source: srcCPU + "; etcdperf: a member and its load generator on one host compete for the same cores",
		Advice: "The members and the load generator share this host's cores and together saturate them: run etcdperf from another machine to learn whether the server alone keeps up, or give the host more cores.",
		Eval:   sharedHostCPURule},

	{Class: finding.ClassCPU, Signal: "host CPU pressure (/proc/pressure/cpu some, share of the run)",
		Limits: &limPSI, Source: srcPSI + "; " + srcCPU + " (below its warn level on the busiest CPU every CPU had idle time: the waits are wake-up latency)",
		Threshold: fmt.Sprintf("ok while the busiest CPU was busy under %s (/proc/stat: tasks pinned to a CPU wait for it while the others idle)", pct(limCPU.Warn)),
		Advice:    "The host's CPUs are contended by other work: every latency measured here (fsync included) is inflated; measure on a quiet host or give etcd dedicated cores.",
		Eval:      hostPressureRule},

	// client
	{Class: finding.ClassClient, Signal: "generator CPU busy (client cpu seconds / duration / cores)", Key: true,
		Limits: &limCPU, Source: srcClient,
		Advice: "The load generator is saturated: run it on another machine or several (then `etcdperf merge`), or lower the rate.",
		Eval:   clientCPURule},
	{Class: finding.ClassClient, Signal: "pacer lag p99", Key: true,
		Limits: &limPacerLag, Source: srcClient,
		Advice: "The pacer itself fires late: the generator's machine is overloaded.",
		Eval:   pacingRule},
	{Class: finding.ClassClient, Signal: "late starts / requests",
		Threshold: fmt.Sprintf("ok < %s; warn ≥ %s, or ≥ %s with the generator shown busy (pacer lag p99 ≥ %s or its CPU ≥ %s); never fail alone: a slow server also delays starts",
			pct(lateMinor), pct(lateMajority), pct(lateMinor), units.Duration(limPacerLag.Warn/1000), pct(limCPU.Warn)),
		Source: srcLateStarts,
		Advice: "Requests started late: add workers (--clients) or find what slows the server.",
		Eval:   lateStartRule},

	// value size
	{Class: finding.ClassValueSize, Signal: "bytes per write request (run)", Key: true,
		Limits: &limValue, Source: srcReqLimit,
		Advice: "Values are large: throughput becomes bandwidth-bound (WAL, peers, clients) and the raft log multiplies them in memory; store large blobs elsewhere and keep references in etcd.",
		Eval:   runValueSizeRule},
	{Class: finding.ClassValueSize, Signal: "received bytes per put (" + metrics.GRPCReceived + " / " + metrics.PutTotal + ")", Key: true, PerMember: true,
		Limits: &limValue, Source: srcReqLimit,
		Advice: "Values are large: throughput becomes bandwidth-bound (WAL, peers, clients) and the raft log multiplies them in memory; store large blobs elsewhere and keep references in etcd.",
		Eval:   metricValueSizeRule},
	{Class: finding.ClassValueSize, Signal: "WAL write rate (" + metrics.WALWriteBytes + ")", PerMember: true,
		Limits: &Limits{Warn: 0.5, Fail: 0.8, Unit: UnitRatio, Note: "of the probed disk's MB/s"}, Source: srcReqLimit,
		Advice: "The WAL writes near the disk's bandwidth: smaller values or a faster disk.",
		Eval:   walRateRule},

	// range size
	{Class: finding.ClassRangeSize, Signal: "keys per range (run)", Key: true,
		Limits: &limRangeKeys, Source: srcRange,
		Advice: "Ranges return many keys: paginate (WithLimit + WithFromKey), use count-only or keys-only ranges, or narrow the prefix.",
		Eval:   runKeysPerRangeRule},
	{Class: finding.ClassRangeSize, Signal: "bytes per range (run)",
		Limits: &limRangeBytes, Source: srcRange,
		Advice: "Range responses are large: paginate, or fetch keys only.",
		Eval:   runBytesPerRangeRule},
	{Class: finding.ClassRangeSize, Signal: "sent bytes per range (" + metrics.GRPCSent + " / " + metrics.RangeTotal + ")", Key: true, PerMember: true,
		Limits: &limRangeBytes, Source: srcRange,
		Advice: "Range responses are large: paginate, or fetch keys only.",
		Eval:   metricBytesPerRangeRule},
	{Class: finding.ClassRangeSize, Signal: "range duration p99 (" + metrics.RangeDuration + ")", PerMember: true,
		Limits: &Limits{Warn: 0.100, Fail: 0.500, Unit: UnitSeconds, Note: "(only with large ranges: keys or bytes per range at warn)"}, Source: srcApplySlow + "; " + srcRangeSlow,
		Advice: "Large ranges are slow on the member: paginate or narrow them, or give the member more CPU.",
		Eval:   rangeDurationRule},

	// watch
	{Class: finding.ClassWatch, Signal: "watch delivery p99 / put service p99 (run)", Key: true,
		Threshold: fmt.Sprintf("warn: ≥ %s× the put service p99 and ≥ %s later; fail: ≥ %s× and ≥ %s later",
			units.Trim(watchOverPutWarn), units.Duration(watchExtraWarnMs/1000), units.Trim(watchOverPutFail), units.Duration(watchExtraFailMs/1000)),
		Source: srcWatchLatency,
		Advice: "Watch events arrive far later than the puts that made them: the fan-out is more than the server or the watchers keep up with (the finding says which ran out); fewer watchers per stream, more CPU for the side that ran out, or watchers closer to the cluster.",
		Eval:   watchDeliveryRule},
	{Class: finding.ClassWatch, Signal: "missed or out-of-order watch events (run)", Key: true,
		Limits: &limAnyFails, Source: srcWatchMissed,
		Advice: "A watcher missed events: it was cancelled or compacted past (ErrCompacted) and did not resume from its revision; a client that misses events holds a wrong copy of the data.",
		Eval:   watchMissedRule},
	{Class: finding.ClassWatch, Signal: "slow watchers (" + metrics.SlowWatchers + ", most in a scrape)", PerMember: true,
		Limits: &limAnyWarns, Source: srcSlowWatchers,
		Advice: "etcd holds watchers that do not read fast enough aside and replays them later: the watchers' clients or the network to them do not keep up.",
		Eval:   slowWatchersRule},

	// cluster health context
	{Class: finding.ClassHealth, Signal: "request errors (run)",
		Limits: &limAnyFails, Source: srcErrors,
		Advice: "Requests failed: the codes say why (ResourceExhausted: the db is at its quota or a request is too large; Unavailable or DeadlineExceeded: no leader, or the cluster is overloaded; PermissionDenied / Unauthenticated: credentials).",
		Eval:   requestErrorsRule},
	{Class: finding.ClassHealth, Signal: "requests of 60 s or more (run)",
		Limits: &limAnyFails, Source: srcOverMax,
		Advice: "Requests waited a minute or more: the cluster stalled (a stopped member, lost quorum, a full disk); the percentiles that reach them read ≥ 60 s.",
		Eval:   overMaxRule},
	{Class: finding.ClassHealth, Signal: "members answering /metrics to the end of the run",
		Threshold: "ok all; fail a member stopped answering", Source: srcLost,
		Advice: "A member went away during the run: its log says why (a full disk: 'no space left on device'; an OOM kill: the kernel log). What was measured until then is kept in the run file.",
		Eval:   lostMemberRule},

	// stall
	{Class: finding.ClassStall, Signal: "longest span with no reply (run)", Key: true,
		Limits: &limStall, Source: srcStall,
		Advice: "A member answered nothing for half a second or more while requests waited: a stopped or frozen process (SIGSTOP, a VM pause, swap), a disk that blocked its fsync, or an election; the member's log and the disk, cpu and election findings say which.",
		Eval:   stallRule},
	ruleMemberStall,
	ruleMemberSlow,

	// election
	{Class: finding.ClassElection, Signal: "has leader (" + metrics.HasLeader + ")", Key: true, PerMember: true,
		Threshold: "ok 1; fail 0", Source: srcLeader,
		Advice: "A member had no leader: the cluster could not serve writes.",
		Eval:   hasLeaderRule},
	{Class: finding.ClassElection, Signal: "leader changes (" + metrics.LeaderChanges + " rises, the most any member saw; a restart's reset is none)", Key: true,
		Threshold: "ok 0; warn a change the clients did not feel; fail a change in whose span the clients saw errors, a stall or a response p99 ≥ 100 ms, or ≥ 4 changes per 15 min (at least 4 in a shorter window)",
		Source:    srcLeader,
		Advice:    "The leader changed during the run: look at disk (fsync), network (peer RTT) and CPU findings, which are the usual causes.",
		Eval:      leaderChangesRule},
	{Class: finding.ClassHealth, Signal: "failed proposals (" + metrics.ProposalsFailed + " delta)", PerMember: true,
		Limits: &limAnyWarns, Source: srcProposals,
		Advice: "Proposals failed (leader loss or quorum trouble).",
		Eval:   counterRule(metrics.ProposalsFailed)},
	{Class: finding.ClassHealth, Signal: "slow read indexes (" + metrics.SlowReadIndex + " delta)", PerMember: true,
		Limits: &limAnyWarns, Source: srcServerWarn,
		Advice: "Linearizable reads waited on the leader: network or an overloaded leader.",
		Eval:   counterRule(metrics.SlowReadIndex)},
	{Class: finding.ClassHealth, Signal: "heartbeat send failures (" + metrics.HeartbeatFailures + " delta)", PerMember: true,
		Limits: &limAnyWarns, Source: srcServerWarn,
		Advice: "The leader could not send heartbeats in time (slow disk or overload).",
		Eval:   counterRule(metrics.HeartbeatFailures)},
	{Class: finding.ClassHealth, Signal: "db in use / total (" + metrics.DBInUse + " / " + metrics.DBTotal + ")", PerMember: true,
		Limits: &FragLimits, Source: FragSource,
		Advice: "The db is fragmented: run `etcdctl defrag` member by member.",
		Eval:   fragRule},
	{Class: finding.ClassHealth, Signal: "db size (" + metrics.DBTotal + ")", PerMember: true,
		Limits: &Limits{Warn: 8 * gib, Fail: math.Inf(1), Unit: UnitBytes, Strict: true}, Source: srcDBMax,
		Advice: "The db is beyond the suggested 8 GiB: snapshot, restore and member changes get slow.",
		Eval:   dbSizeRule},

	// quota
	{Class: finding.ClassQuota, Signal: "db size / quota (" + metrics.DBTotal + " / " + metrics.Quota + ")", Key: true, PerMember: true,
		Limits: &QuotaLimits, Source: QuotaSource,
		Advice: quotaAdvice,
		Eval:   quotaRule},
	{Class: finding.ClassQuota, Signal: "NOSPACE alarm (Maintenance API alarm list)",
		Threshold: "ok none; fail raised", Source: srcNoSpace,
		Advice: quotaAdvice,
		Eval:   noSpaceAlarmRule},
	{Class: finding.ClassQuota, Signal: "writes refused: database space exceeded",
		Limits: &limAnyFails, Source: srcNoSpace,
		Advice: quotaAdvice,
		Eval:   spaceExceededRule},

	// version (context)
	{Class: finding.ClassVersion, Signal: "server version (" + metrics.ServerVersion + ")", PerMember: true,
		Threshold: "ok: a supported release with no known problem listed; warn otherwise", Source: srcVersioning + "; etcd changelogs and issues (see the known-problems table)",
		Advice: "Upgrade to the newest patch of a supported minor release (one minor version at a time).",
		Eval:   versionRule},
})

// needWindow returns an unknown check when w cannot give deltas.
func needWindow(w *Window) (Observation, bool) {
	switch {
	case w == nil:
		return unknown("no /metrics scrape of the member"), false
	case !w.Usable():
		return unknown("needs a scrape before and after the run (have %d)", len(w.Snaps)), false
	}
	return Observation{}, true
}

// histRule grades the q-quantile of a histogram's window delta.
func histRule(metric string, sel Labels, q float64) func(*Input, Limits) Observation {
	return func(in *Input, lim Limits) Observation {
		if c, ok := needWindow(in.W); !ok {
			return c
		}
		h, ok := in.W.HistDelta(metric, sel)
		if !ok {
			return unknown("%s absent", metric)
		}
		return gradeHist(h, q, lim)
	}
}

// gradeHist grades a quantile from what the bucket counts prove. etcd's buckets
// are coarse (1 ms × 2^k for the WAL and backend), and interpolating inside a bucket
// overestimates latencies that cluster at its low end. So a threshold counts as
// exceeded when more than 1-q of the observations lie in buckets wholly above it,
// and as met when at least q of them lie in buckets wholly at or below it. Between
// the two, the quantile lies in the one bucket that straddles the threshold: it is
// reported with that bucket's bounds ("between 8 ms and 16 ms") and graded warn,
// never ok, since nothing shows the threshold is met (a WAL fsync p99 of 12 ms
// would otherwise always read ok against 10 ms). A small histogram (fewer than
// minSamples) warns or fails only when at least minSlow observations certainly
// exceed the threshold: one hiccup of a noisy machine is not a pattern.
func gradeHist(h Hist, q float64, lim Limits) Observation { return gradeHistMin(h, q, lim, minSlow) }

// StraddleNote ends the observation of a quantile whose bucket straddles the
// warn threshold; adjust finds such evidence by it, to settle it with an exact
// measurement (the disk probe) where the run has one.
const StraddleNote = "the bucket straddles the threshold, so it cannot be graded ok"

// gradeHistMin is gradeHist with the fewest certain observations a small
// histogram needs to warn or fail: 1 for a histogram of smoothed samples (etcd's
// peer RTT records one smoothed round trip every 30 s, so each sample is already
// an average, not an event that may be a hiccup).
func gradeHistMin(h Hist, q float64, lim Limits, slow float64) Observation {
	warn, fail := lim.Warn, lim.Fail
	est, ok := h.Quantile(q)
	if !ok {
		return unknown("no observations in the window")
	}
	obs := fmt.Sprintf("%s (n=%.0f)", est, h.Count)
	tail := (1 - q) * h.Count
	overFail, overWarn := h.countAbove(fail), h.countAbove(warn)
	straddles := func(t float64) bool { return est.Lo < t && t < est.Hi }
	switch {
	case overFail > tail && (h.Count >= minSamples || overFail >= slow):
		return Observation{Severity: finding.Fail, Observed: obs + fmt.Sprintf("; %s certainly above %s", pct(overFail/h.Count), units.Duration(fail))}
	case overWarn > tail && (h.Count >= minSamples || overWarn >= slow):
		if overFail > tail {
			obs += fmt.Sprintf("; fewer than %d samples and %.0f certainly above %s: at most warn", minSamples, overFail, units.Duration(fail))
		} else {
			obs += fmt.Sprintf("; %s certainly above %s", pct(overWarn/h.Count), units.Duration(warn))
			if straddles(fail) {
				obs += fmt.Sprintf("; p%s between %s and %s, fail at %s: the bucket cannot tell", units.Trim(q*100), units.Duration(est.Lo), units.Duration(est.Hi), units.Duration(fail))
			}
		}
		return Observation{Severity: finding.Warn, Observed: obs}
	case h.countAtMost(warn) >= q*h.Count:
		return Observation{Severity: finding.OK, Observed: obs}
	case overWarn > tail:
		return Observation{Severity: finding.OK, Observed: obs + fmt.Sprintf("; fewer than %d samples and only %.0f certainly above %s: a hiccup, not a pattern", minSamples, overWarn, units.Duration(warn))}
	case h.Count < minSamples:
		return Observation{Severity: finding.OK, Observed: obs + fmt.Sprintf("; fewer than %d samples: whether p%s exceeds %s is not graded", minSamples, units.Trim(q*100), units.Duration(warn))}
	}
	return Observation{Severity: finding.Warn, Observed: fmt.Sprintf("p%s between %s and %s; ok needs < %s (n=%.0f, %s certainly above it); %s",
		units.Trim(q*100), units.Duration(est.Lo), units.Duration(est.Hi), units.Duration(warn), h.Count, pct(overWarn/h.Count), StraddleNote)}
}

// minSlow is how many observations over the fail threshold a small histogram
// needs to fail: one is a hiccup, several are a pattern.
const minSlow = 3

// counterRule grades a counter's growth over the window.
func counterRule(metric string) func(*Input, Limits) Observation {
	return func(in *Input, lim Limits) Observation {
		if c, ok := needWindow(in.W); !ok {
			return c
		}
		d, ok := in.W.CounterDelta(metric, nil)
		if !ok {
			return unknown("%s absent", metric)
		}
		return Observation{Severity: lim.Grade(d), Observed: fmt.Sprintf("%.0f", d)}
	}
}

// pct renders a ratio as a percentage.
func pct(r float64) string { return fmt.Sprintf("%.0f%%", r*100) }
