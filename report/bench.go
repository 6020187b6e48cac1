package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// Bench is the output of bench (and merge): a run's summary, where its run file
// went and, when the run was analyzed, its diagnosis. Its JSON is bench's -w json
// object, which changes only with BenchVersion.
type Bench struct {
	Version       int         `json:"version"`
	Command       string      `json:"command"`
	Target        BenchTarget `json:"target"`
	Valid         bool        `json:"valid"`
	InvalidReason string      `json:"invalid_reason"`
	DurationS     float64     `json:"duration_s"`
	RunFile       string      `json:"run_file"`
	Ops           []BenchOp   `json:"ops"`
	Client        BenchClient `json:"client"`
	// Verdict and Findings are the analyzer's diagnosis of the run, as `analyze` prints it.
	Verdict  *finding.Verdict  `json:"verdict,omitempty"`
	Findings []finding.Finding `json:"findings,omitempty"`
	Budget   *finding.Budget   `json:"budget,omitempty"`

	run *results.Run
	rep *analyze.Result
}

// BenchTarget is the cluster a run measured.
type BenchTarget struct {
	Endpoints     []string `json:"endpoints"`
	Embedded      bool     `json:"embedded"`
	ServerVersion string   `json:"server_version"`
}

// BenchOp is one op; a watch op's throughput_rps is its fan-out (events
// delivered per second over all watchers). The watch op adds its event counts (pointers, so a watch
// op shows "missed_events": 0 while other ops show no such key).
type BenchOp struct {
	Op            string  `json:"op"`
	Requests      int64   `json:"requests"`
	Errors        int64   `json:"errors"`
	ThroughputRPS float64 `json:"throughput_rps"`
	TargetRPS     float64 `json:"target_rps"`
	LateStarts    int64   `json:"late_starts"`
	// Unsent requests were due but never sent (every client busy at the end);
	// OverMaxLatency took 60 s or more. Both are in the response time.
	Unsent         int64           `json:"unsent"`
	OverMaxLatency int64           `json:"over_max_latency"`
	Latency        results.Summary `json:"latency_ms"`
	Service        results.Summary `json:"service_ms"`
	Events         *int64          `json:"events,omitempty"`
	Watchers       *int            `json:"watchers,omitempty"`
	MissedEvents   *int64          `json:"missed_events,omitempty"`
	// KeysRead and BytesRead are set on list ops: objects and payload bytes read.
	KeysRead  *int64 `json:"keys_read,omitempty"`
	BytesRead *int64 `json:"bytes_read,omitempty"`
	// Conflicts is set on txn ops: compares that failed and were retried.
	Conflicts *int64 `json:"conflicts,omitempty"`
}

// BenchClient is what the load generator used.
type BenchClient struct {
	CPUSeconds  float64 `json:"cpu_seconds"`
	MaxRSSBytes int64   `json:"max_rss_bytes"`
	// Transport carried the requests (--transport); empty for older run files.
	Transport string `json:"transport,omitempty"`
}

// benchClient is what run's generator used, as bench's and check's JSON has it.
func benchClient(run *results.Run) BenchClient {
	return BenchClient{CPUSeconds: run.Client.CPUSeconds, MaxRSSBytes: run.Client.MaxRSSBytes, Transport: run.Client.Transport}
}

// BenchVersion is the version of bench's -w json object: it changes with that
// object, not with the run file's Version (docs/run-file.md).
const BenchVersion = 1

// NewBench is the output of run, written to runFile ("" when it was not), with
// rep's diagnosis when rep is not nil (its Verbose applies to the text forms).
func NewBench(run *results.Run, runFile string, rep *analyze.Result) Bench {
	out := Bench{
		Version: BenchVersion, Command: run.Command,
		Target: BenchTarget{Endpoints: run.Target.Endpoints, Embedded: run.Target.Embedded, ServerVersion: run.Target.ServerVersion},
		Valid:  run.Valid, InvalidReason: run.InvalidReason, DurationS: run.DurationS, RunFile: runFile,
		Ops:    BenchOps(run),
		Client: benchClient(run),
		run:    run, rep: rep,
	}
	if rep != nil {
		out.Verdict, out.Findings, out.Budget = &rep.Verdict, rep.Findings, rep.Budget
	}
	return out
}

// BenchOps are run's ops as bench's JSON has them; never nil.
func BenchOps(run *results.Run) []BenchOp {
	ops := []BenchOp{}
	for _, op := range run.Ops {
		o := BenchOp{
			Op: op.Op, Requests: op.Requests, Errors: op.Errors, ThroughputRPS: op.ThroughputRPS,
			TargetRPS: op.TargetRPS, LateStarts: op.LateStarts, Latency: op.Latency, Service: op.Service,
			Unsent: op.Unsent, OverMaxLatency: op.OverMaxLatency,
		}
		if op.Op == "watch" {
			o.Events, o.Watchers, o.MissedEvents = &op.Events, &op.Watchers, &op.MissedEvents
		}
		if op.Op == "list" {
			o.KeysRead, o.BytesRead = &op.KeysReceived, &op.BytesReceived
		}
		if strings.HasPrefix(op.Op, "txn") {
			o.Conflicts = &op.Conflicts
		}
		ops = append(ops, o)
	}
	return ops
}

// Table writes the verdict, one row per op and time (response, service), then
// the footer and the diagnosis.
func (b Bench) Table(w io.Writer) error {
	b.head(w)
	tw := NewTable(w)
	fmt.Fprintln(tw, "OP\tTIME\tREQUESTS\tERRORS\tREQ/S\tTARGET\tLATE\tMEAN\tP50\tP90\tP99\tP99.9\tMAX")
	for _, op := range b.run.Ops {
		for _, row := range []struct {
			name string
			s    results.Summary
		}{{"response", op.Latency}, {"service", op.Service}} {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%.0f\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", op.Op, row.name,
				op.Requests, op.Errors, op.ThroughputRPS, op.TargetRPS, op.LateStarts,
				Ms(row.s.Mean), Ms(row.s.P50), Ms(row.s.P90), Ms(row.s.P99), Ms(row.s.P999), Ms(row.s.Max))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return b.tail(w, "table")
}

// Simple writes the verdict, each op's counts, response and service times and
// its own figures (watch events, txn conflicts, keys read), then the footer and
// the diagnosis.
func (b Bench) Simple(w io.Writer) error {
	b.head(w)
	run := b.run
	fmt.Fprintf(w, "%s: %.2fs measured", run.Command, run.DurationS)
	if run.WarmupS > 0 {
		fmt.Fprintf(w, " after %gs warm-up", run.WarmupS)
	}
	if run.Interrupted {
		fmt.Fprint(w, " (interrupted: partial results)")
	}
	fmt.Fprintln(w)
	for _, op := range run.Ops {
		fmt.Fprintf(w, "%-6s %d requests, %d errors, %.1f req/s", op.Op, op.Requests, op.Errors, op.ThroughputRPS)
		if op.TargetRPS > 0 {
			fmt.Fprintf(w, " of %g target, %d late starts", op.TargetRPS, op.LateStarts)
		}
		fmt.Fprintln(w)
		if op.Unsent > 0 {
			fmt.Fprintf(w, "       %d requests due were never sent (every client was waiting): charged from their due time to the end of the run\n", op.Unsent)
		}
		if op.OverMaxLatency > 0 {
			fmt.Fprintf(w, "       %d requests took ≥ 60 s (the histograms' range): percentiles that reach them read ≥60s\n", op.OverMaxLatency)
		}
		for _, c := range slices.Sorted(maps.Keys(op.ErrorsByCode)) {
			fmt.Fprintf(w, "       error %s: %d\n", c, op.ErrorsByCode[c])
		}
		line := func(name string, s results.Summary) {
			fmt.Fprintf(w, "       %-8s mean %s  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n", name,
				Ms(s.Mean), Ms(s.P50), Ms(s.P90), Ms(s.P99), Ms(s.P999), Ms(s.Max))
		}
		line("response", op.Latency)
		line("service", op.Service)
		if op.Op == "watch" {
			fmt.Fprintf(w, "       %d events to %d watchers (fan-out %.0f events/s), %d missed, %d out of order", op.Events, op.Watchers, op.ThroughputRPS, op.MissedEvents, op.OutOfOrder)
			if op.UndeliveredEvents > 0 {
				fmt.Fprintf(w, ", %d still on their way when the wait for them ended", op.UndeliveredEvents)
			}
			if op.CreateMs != nil {
				fmt.Fprintf(w, "; watch creation p99 %s", Ms(op.CreateMs.P99))
			}
			fmt.Fprintln(w)
		}
		if strings.HasPrefix(op.Op, "txn") {
			fmt.Fprintf(w, "       %d conflicts retried\n", op.Conflicts)
		}
		if op.KeysReceived > 0 {
			fmt.Fprintf(w, "       %d keys, %s received\n", op.KeysReceived, units.Bytes(op.BytesReceived))
		}
	}
	return b.tail(w, "simple")
}

// tail writes the footer (the client's cost, validity, the run file) and the
// diagnosis in format.
func (b Bench) tail(w io.Writer, format string) error {
	run := b.run
	c := run.Client
	fmt.Fprintf(w, "client: %.2f CPU-seconds on %d cores, max RSS %s", c.CPUSeconds, c.Cores, units.Bytes(c.MaxRSSBytes))
	if c.PacingLagP99Ms > 0 {
		fmt.Fprintf(w, ", pacing lag p99 %s", Ms(c.PacingLagP99Ms))
	}
	if c.Transport != "" {
		fmt.Fprintf(w, ", transport %s", c.Transport)
	}
	fmt.Fprintln(w)
	if b.analyzed() {
		if n := invalidNote(run.Valid, run.InvalidReason, b.rep.Verdict); n != "" {
			fmt.Fprintln(w, n)
		}
	}
	if b.RunFile != "" {
		fmt.Fprintf(w, "run file: %s\n", b.RunFile)
	}
	if !b.analyzed() {
		return nil
	}
	return Analysis(*b.rep).body(w, format)
}

// analyzed reports whether the run has a verdict to state.
func (b Bench) analyzed() bool { return b.rep != nil && b.rep.Verdict.Status != "" }

// head writes bench's first line: the verdict when the run was analyzed, else
// whether the run kept the measurement rules.
func (b Bench) head(w io.Writer) {
	switch {
	case b.analyzed():
		fmt.Fprintln(w, verdictLine(b.rep.Verdict))
	case b.run.Valid:
		fmt.Fprintln(w, "VALID  not analyzed")
	default:
		fmt.Fprintf(w, "INVALID  %s\n", b.run.InvalidReason)
	}
}
