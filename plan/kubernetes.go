package plan

// The model of the traffic a Kubernetes control plane sends to its etcd: a
// pure function from a cluster description (nodes, pods, churn, apiservers) and
// a table of assumptions, every one with its source, to rates and sizes.

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// KubeCluster is the cluster a plan sizes etcd for, as given by
// --kubernetes nodes=N[,pods=P][,churn=R][,apiservers=A].
type KubeCluster struct {
	Nodes int `json:"nodes"`
	// Pods is the pods of the cluster; 0 means Nodes × pods_per_node.
	Pods int `json:"pods,omitempty"`
	// Churn is the pods created (and as many deleted) per second; 0 means Pods / pod_lifetime_s.
	Churn float64 `json:"churn_pods_per_s,omitempty"`
	// APIServers is the number of kube-apiservers; 0 means the apiservers assumption.
	APIServers int `json:"apiservers,omitempty"`
}

// ParseKubeCluster parses "nodes=200,pods=6000,churn=2,apiservers=3"; nodes is required.
func ParseKubeCluster(s string) (KubeCluster, error) {
	var c KubeCluster
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return c, fmt.Errorf("--kubernetes %q: want KEY=VALUE pairs such as nodes=200,pods=6000", s)
		}
		if seen[k] {
			return c, fmt.Errorf("--kubernetes %q: %s given twice", s, k)
		}
		seen[k] = true
		var err error
		switch k {
		case "nodes":
			c.Nodes, err = positiveInt(v, 1, 1_000_000)
		case "pods":
			c.Pods, err = positiveInt(v, 1, 100_000_000)
		case "apiservers":
			c.APIServers, err = positiveInt(v, 1, 1000)
		case "churn":
			c.Churn, err = strconv.ParseFloat(v, 64)
			if err == nil && (c.Churn <= 0 || math.IsInf(c.Churn, 0) || math.IsNaN(c.Churn)) {
				err = errors.New("want a positive number of pods per second")
			}
		default:
			return c, fmt.Errorf("--kubernetes %q: unknown key %q: want nodes, pods, churn, apiservers", s, k)
		}
		if err != nil {
			return c, fmt.Errorf("--kubernetes %q: %s=%q: %v", s, k, v, err)
		}
	}
	if c.Nodes == 0 {
		return c, fmt.Errorf("--kubernetes %q: nodes=N is required", s)
	}
	return c, nil
}

func positiveInt(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("want a whole number from %d to %d", lo, hi)
	}
	return n, nil
}

// Scaled is the cluster at nodes nodes: pods per node, churn per pod and the
// apiservers stay as given, so the knee search scales the whole cluster.
func (c KubeCluster) Scaled(nodes int) KubeCluster {
	s := c
	s.Nodes = nodes
	if c.Pods > 0 {
		s.Pods = max(1, int(math.Round(float64(c.Pods)*float64(nodes)/float64(c.Nodes))))
		if c.Churn > 0 {
			s.Churn = c.Churn * float64(s.Pods) / float64(c.Pods)
		}
	} else if c.Churn > 0 {
		s.Churn = c.Churn * float64(nodes) / float64(c.Nodes)
	}
	return s
}

// Assumption is one rate or size of the model and where it comes from.
type Assumption struct {
	Key    string  `json:"key"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Source string  `json:"source"`
	// Assumed marks etcdperf's own estimate, as opposed to a documented default.
	Assumed bool `json:"assumed"`
	// Overridden marks a value the user set (flag or file).
	Overridden bool `json:"overridden,omitempty"`
}

// Assumptions is the model's table, in a fixed order.
type Assumptions []Assumption

// Keys of the model's assumptions.
const (
	NodeLeaseRenewS   = "node_lease_renew_s"
	NodeStatusReportS = "node_status_report_s"
	NodeBytes         = "node_bytes"
	NodeLeaseBytes    = "node_lease_bytes"
	PodsPerNode       = "pods_per_node"
	PodBytes          = "pod_bytes"
	PodLifetimeS      = "pod_lifetime_s"
	PodUpdates        = "pod_updates"
	PodEvents         = "pod_events"
	EventBytes        = "event_bytes"
	EventTTLS         = "event_ttl_s"
	LeaseReuseS       = "lease_reuse_s"
	LeaseMaxObjects   = "lease_max_objects"
	APIServers        = "apiservers"
	ListsPerMin       = "lists_per_apiserver_per_min"
	PageSize          = "page_size"
	CompactionS       = "compaction_interval_s"
	KeyBytes          = "key_bytes"
	QuotaBytes        = "quota_bytes"
	MaxFillObjects    = "max_fill_objects"
)

// DefaultAssumptions is the model's table with the default of every number.
// Documented defaults cite their source; the rest say they are assumptions.
func DefaultAssumptions() Assumptions {
	return Assumptions{
		{NodeLeaseRenewS, 10, "s", "kubelet renews its node Lease (kube-node-lease) every 10 s: a quarter of nodeLeaseDurationSeconds 40 (kubernetes.io Nodes, 'Node heartbeats'; KEP-0009 Efficient Node Heartbeat); an update (txn) of the Lease object", false, false},
		{NodeStatusReportS, 300, "s", "kubelet posts Node status every nodeStatusReportFrequency, 5m, when nothing changed (KubeletConfiguration v1beta1; KEP-0009)", false, false},
		{NodeBytes, 10240, "B", "assumption: KEP-0009 says Node objects 'may easily exceed 15kB' with images and volumes; 10 KiB for a typical node", true, false},
		{NodeLeaseBytes, 350, "B", "assumption: a coordination.k8s.io Lease is a few hundred bytes as protobuf", true, false},
		{PodsPerNode, 30, "pods", "assumption: 150,000 pods over 5,000 nodes, Kubernetes' supported maximum (kubernetes.io 'Considerations for large clusters'; 110 per node is the per-node limit)", true, false},
		{PodBytes, 4096, "B", "assumption: a Pod with a few containers, status and managed fields is a few KiB as protobuf", true, false},
		{PodLifetimeS, 6000, "s", "assumption: a pod is replaced every 100 minutes on average (churn = pods / lifetime, unless churn= is given)", true, false},
		{PodUpdates, 10, "writes", "assumption: per pod life, scheduler binding 1, kubelet status 3, graceful deletion 2, EndpointSlice 2, ReplicaSet status 2; each a GuaranteedUpdate (txn)", true, false},
		{PodEvents, 6, "events", "assumption: per pod life, Scheduled, Pulling, Pulled, Created, Started, Killing; each an Event created with a lease", true, false},
		{EventBytes, 1024, "B", "assumption: an Event is about 1 KiB", true, false},
		{EventTTLS, 3600, "s", "kube-apiserver --event-ttl default 1h: events carry a lease of that TTL", false, false},
		{LeaseReuseS, 60, "s", "kube-apiserver reuses an event lease for 60 s (apiserver storage/etcd3/lease_manager.go defaultLeaseReuseDurationSeconds)", false, false},
		{LeaseMaxObjects, 1000, "objects", "and for at most 1000 objects (lease_manager.go defaultLeaseMaxObjectCount)", false, false},
		{APIServers, 3, "apiservers", "assumption: an HA control plane of 3 kube-apiservers (unless apiservers= is given)", true, false},
		{ListsPerMin, 1, "LISTs/min", "assumption: consistent LISTs of all pods that reach etcd (not served by the watch cache), per apiserver per minute", true, false},
		{PageSize, 500, "objects", "client-go's pager page size (tools/pager defaultPageSize 500)", false, false},
		{CompactionS, 300, "s", "kube-apiserver --etcd-compaction-interval default 5m; it compacts to the revision of the previous tick, so up to two intervals of history are kept", false, false},
		{KeyBytes, 64, "B", "assumption: /registry/<resource>/<namespace>/<name>", true, false},
		{QuotaBytes, 2 << 30, "B", "etcd --quota-backend-bytes default 2 GiB (8 GiB is the suggested maximum)", false, false},
		{MaxFillObjects, 30000, "objects", "etcdperf: a step fills at most this many objects; LISTs are then run more often, so the bytes listed per second match the model", false, false},
	}
}

// Get is the value of key; it panics on a key the table lacks (a programming error).
func (as Assumptions) Get(key string) float64 {
	for _, a := range as {
		if a.Key == key {
			return a.Value
		}
	}
	panic("plan: no assumption " + key)
}

// Set overrides key, marking it overridden.
func (as Assumptions) Set(key string, v float64) error {
	for i := range as {
		if as[i].Key == key {
			if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s must be a positive number, got %g", key, v)
			}
			as[i].Value, as[i].Overridden = v, true
			return nil
		}
	}
	keys := make([]string, len(as))
	for i, a := range as {
		keys[i] = a.Key
	}
	sort.Strings(keys)
	return fmt.Errorf("unknown assumption %q: the model's are %s", key, strings.Join(keys, ", "))
}

// ParseOverrides applies "key=value,key=value" (values may carry KiB, MiB, GiB,
// s, m, h) to as.
func (as Assumptions) ParseOverrides(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("%q: want KEY=VALUE such as pod_bytes=8KiB", part)
		}
		f, err := parseNumber(v)
		if err != nil {
			return fmt.Errorf("%s=%q: %v", k, v, err)
		}
		if err := as.Set(k, f); err != nil {
			return err
		}
	}
	return nil
}

// parseNumber reads a number with an optional binary size or time unit.
func parseNumber(v string) (float64, error) {
	v = strings.TrimSpace(v)
	mult := 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, errors.New("want a number, optionally with KiB, MiB, GiB, ms, s, m or h")
	}
	return f * mult, nil
}

// KubeTraffic is what a cluster sends to etcd and stores in it, by the model.
type KubeTraffic struct {
	Nodes      int     `json:"nodes"`
	Pods       int     `json:"pods"`
	APIServers int     `json:"apiservers"`
	Churn      float64 `json:"churn_pods_per_s"`

	// Writes and reads per second, by kind.
	UpdatesPerS     float64 `json:"updates_per_s"` // GuaranteedUpdate txns: node leases, node status, pod life
	CreatesPerS     float64 `json:"creates_per_s"` // pods created
	DeletesPerS     float64 `json:"deletes_per_s"` // pods deleted
	EventsPerS      float64 `json:"events_per_s"`  // events created with a lease
	LeaseGrantsPerS float64 `json:"lease_grants_per_s"`
	ListsPerS       float64 `json:"lists_per_s"` // paginated LISTs of all pods
	// WatchEventsPerS is the fan-out: every write reaches one watch-cache
	// watcher per apiserver (one prefix watch per resource type per apiserver).
	WatchEventsPerS float64 `json:"watch_events_per_s"`
	RequestsPerS    float64 `json:"requests_per_s"`

	// Sizes.
	Objects        int     `json:"objects"`       // nodes, node leases, pods
	ObjectBytes    float64 `json:"object_bytes"`  // mean stored object
	UpdateBytes    float64 `json:"update_bytes"`  // mean object an update writes
	EventsStored   float64 `json:"events_stored"` // events alive: rate × TTL
	EventsPerLease float64 `json:"events_per_lease"`
	ListObjects    int     `json:"list_objects"` // objects one LIST reads
	ListPages      int     `json:"list_pages"`   // pages of one LIST
	WriteBytesPerS float64 `json:"write_bytes_per_s"`
	LiveBytes      float64 `json:"live_bytes"`    // objects and events stored
	HistoryBytes   float64 `json:"history_bytes"` // revisions kept until compacted (two intervals)
	DBBytes        float64 `json:"db_bytes"`      // live + history, bbolt overhead not counted
	// NodesAtQuota is where DBBytes reaches the quota, at this cluster's shape.
	NodesAtQuota int `json:"nodes_at_quota"`
}

// Kube is the model: the traffic and data of cluster c under assumptions as.
// Per node: a Lease renewal every node_lease_renew_s and a Node status update
// every node_status_report_s, both GuaranteedUpdates (txns). Per pod life: one
// create, pod_updates updates, one delete and pod_events events, at churn
// pods/s. Events carry a lease of event_ttl_s, one lease per apiserver per
// lease_reuse_s or per lease_max_objects events. Every apiserver LISTs all pods
// lists_per_apiserver_per_min times a minute, page_size objects a page, and
// watches every resource with one prefix watch (the watch cache), so each write
// reaches apiservers watchers. History is kept for up to two compaction intervals.
func Kube(c KubeCluster, as Assumptions) KubeTraffic {
	n := float64(c.Nodes)
	pods := c.Pods
	if pods == 0 {
		pods = int(math.Round(n * as.Get(PodsPerNode)))
	}
	p := float64(pods)
	churn := c.Churn
	if churn == 0 {
		churn = p / as.Get(PodLifetimeS)
	}
	api := c.APIServers
	if api == 0 {
		api = int(as.Get(APIServers))
	}
	a := float64(api)
	t := KubeTraffic{Nodes: c.Nodes, Pods: pods, APIServers: api, Churn: churn}

	leaseRenews := n / as.Get(NodeLeaseRenewS)
	statusUpdates := n / as.Get(NodeStatusReportS)
	podUpdates := churn * as.Get(PodUpdates)
	t.UpdatesPerS = leaseRenews + statusUpdates + podUpdates
	t.UpdateBytes = (leaseRenews*as.Get(NodeLeaseBytes) + statusUpdates*as.Get(NodeBytes) + podUpdates*as.Get(PodBytes)) / t.UpdatesPerS
	t.CreatesPerS, t.DeletesPerS = churn, churn
	t.EventsPerS = churn * as.Get(PodEvents)
	// Each apiserver writes its share of the events on one lease at a time.
	perLease := math.Min(as.Get(LeaseMaxObjects), t.EventsPerS/a*as.Get(LeaseReuseS))
	if t.EventsPerS > 0 {
		t.LeaseGrantsPerS = t.EventsPerS / perLease
		t.EventsPerLease = perLease
	}
	t.ListsPerS = a * as.Get(ListsPerMin) / 60
	writes := t.UpdatesPerS + t.CreatesPerS + t.DeletesPerS + t.EventsPerS
	t.WatchEventsPerS = writes * a
	t.RequestsPerS = writes + t.LeaseGrantsPerS + t.ListsPerS

	t.Objects = 2*c.Nodes + pods
	stored := n*(as.Get(NodeBytes)+as.Get(NodeLeaseBytes)) + p*as.Get(PodBytes)
	t.ObjectBytes = stored / float64(t.Objects)
	t.ListObjects = pods
	t.ListPages = int(math.Ceil(p / as.Get(PageSize)))
	t.EventsStored = t.EventsPerS * as.Get(EventTTLS)
	t.LiveBytes = stored + t.EventsStored*as.Get(EventBytes)
	t.WriteBytesPerS = t.UpdatesPerS*t.UpdateBytes + t.CreatesPerS*as.Get(PodBytes) + t.EventsPerS*as.Get(EventBytes)
	t.HistoryBytes = 2 * as.Get(CompactionS) * t.WriteBytesPerS
	t.DBBytes = t.LiveBytes + t.HistoryBytes
	// Every term of DBBytes grows with the nodes at a fixed shape.
	t.NodesAtQuota = int(as.Get(QuotaBytes) / (t.DBBytes / n))
	return t
}
