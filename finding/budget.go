package finding

// Budget splits client-observed latency into where the time went, from the server's
// metric deltas over the run window.
type Budget struct {
	// Op is the operation the budget is for: the run's busiest write op, else its busiest op.
	Op string `json:"op,omitempty"`
	// ClientP50Ms and ClientP99Ms are the client-observed service times; nil without a run.
	ClientP50Ms *float64     `json:"client_p50_ms"`
	ClientP99Ms *float64     `json:"client_p99_ms"`
	Parts       []BudgetPart `json:"parts"`
	Note        string       `json:"note"`
}

// BudgetPart is one component; nil values are unknown.
type BudgetPart struct {
	Component string   `json:"component"`
	P50Ms     *float64 `json:"p50_ms"`
	P99Ms     *float64 `json:"p99_ms"`
	// Source says which metric delta the part was computed from.
	Source string `json:"source"`
}

// Budget components.
const (
	PartNetwork = "network to leader"
	PartWAL     = "wal fsync"
	// PartWALQueue is the time a write waits for the fsyncs ahead of its own.
	PartWALQueue    = "wal queueing"
	PartReplication = "replication"
	PartApply       = "apply/backend"
	// PartServer is the members' own time for the request, from its arrival to
	// its reply (etcd's gRPC handling histogram); it holds the WAL, its queue,
	// the replication and the apply, so with it known they are its breakdown.
	PartServer = "server handling"
	// PartGenerator is the load generator's own lag: how late its threads wake.
	PartGenerator = "generator lag"
	// PartStall is the wait of the requests sent while no reply came.
	PartStall = "stall"
	PartRest  = "unexplained"
)
