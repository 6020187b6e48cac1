// Package report renders run files for people: text, Markdown, self-contained
// HTML and JSON, with plots (latency spectrum, timeline, disk probe, plan curve), and
// compares two runs against their run-to-run noise. It sits above analyze and reads
// the diagnosis (package finding) a run file stores or an analysis names.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// Document is what every rendering shows, and the JSON rendering itself: the run's
// summary (histograms digested, not copied) and the diagnosis, when there is one.
type Document struct {
	Command       string              `json:"command"`
	StartedAt     time.Time           `json:"started_at"`
	WarmupS       float64             `json:"warmup_s"`
	DurationS     float64             `json:"duration_s"`
	Target        results.ClusterInfo `json:"target"`
	Valid         bool                `json:"valid"`
	InvalidReason string              `json:"invalid_reason,omitempty"`
	Interrupted   bool                `json:"interrupted,omitempty"`
	Error         string              `json:"error,omitempty"`

	Ops    []OpSummary    `json:"ops"`
	Client results.Client `json:"client"`
	Disk   []DiskSummary  `json:"disk,omitempty"`
	Host   *results.Host  `json:"host,omitempty"`
	// Scrapes counts the /metrics scrapes the run holds, and Members the members they came from.
	Scrapes int `json:"scrapes"`
	Members int `json:"scraped_members"`

	*finding.Diagnosis
	// Regraded says where this build's rules grade the run file's inputs apart
	// from the verdict it stores (see Regraded); "" when they agree.
	Regraded string `json:"regraded,omitempty"`

	// Drill is the report of the drill the run is the load of, as the drill printed
	// it with -w json (its section of the run file).
	Drill json.RawMessage `json:"drill,omitempty"`
	// drill is Drill decoded, rendered as the drill printed it.
	drill Output
	// job is the output of the command that judged the run, from its section of
	// the run file, whose step table the report shows.
	job Output

	// Bundle is the bundle the run file came from (report BUNDLE); nil for a run file.
	Bundle *Bundle `json:"bundle,omitempty"`
	// bundle is Bundle, rendered before the run's own sections.
	bundle *Bundle

	// Plots are the plot files written by WritePlots (PNG and SVG), when any.
	Plots []string `json:"plots,omitempty"`

	figures []Figure
	// pngs caches rendered PNGs by figure name: WriteReport writes them as files and
	// embeds them in the page, and rasterising is the slow part.
	pngs map[string][]byte
}

// OpSummary is one op of the report, shaped like an op of bench's JSON output.
type OpSummary struct {
	Op            string           `json:"op"`
	Requests      int64            `json:"requests"`
	Errors        int64            `json:"errors"`
	ErrorsByCode  map[string]int64 `json:"errors_by_code,omitempty"`
	ThroughputRPS float64          `json:"throughput_rps"`
	TargetRPS     float64          `json:"target_rps"`
	LateStarts    int64            `json:"late_starts"`
	Latency       results.Summary  `json:"latency_ms"`
	Service       results.Summary  `json:"service_ms"`
	Events        int64            `json:"events,omitempty"`
	Watchers      int              `json:"watchers,omitempty"`
	MissedEvents  int64            `json:"missed_events,omitempty"`
}

// DiskSummary is one disk probe of the report.
type DiskSummary struct {
	Pattern     string           `json:"pattern"`
	Dir         string           `json:"dir"`
	BlockSize   int              `json:"block_size"`
	IOPS        float64          `json:"iops"`
	MBPerS      float64          `json:"mb_per_s"`
	Fdatasync   results.Summary  `json:"fdatasync_ms"`
	Commit      *results.Summary `json:"commit_ms,omitempty"`
	Grade       finding.Status   `json:"grade"`
	GradeReason string           `json:"grade_reason,omitempty"`
	FioCommand  string           `json:"fio_command,omitempty"`
}

// NewDocument digests run and diag (which may be nil) into a Document and prepares its
// plots. It fails only on histograms that do not decode.
func NewDocument(run *results.Run, diag *finding.Diagnosis) (*Document, error) {
	figs, err := Figures(run, diag)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	r := &Document{
		Command: run.Command, StartedAt: run.StartedAt, WarmupS: run.WarmupS, DurationS: run.DurationS,
		Target: run.Target, Valid: run.Valid, InvalidReason: run.InvalidReason,
		Interrupted: run.Interrupted, Error: run.Error,
		Ops: []OpSummary{}, Client: run.Client, Host: run.Host, Diagnosis: diag,
		figures: figs,
	}
	if r.drill, r.Drill, err = DrillOutput(run); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if diag == run.Diagnosis {
		if r.Regraded, err = Regraded(run); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	if j, ok, err := JobOf(run, "", analyze.Result{}); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	} else if ok {
		r.job = j.Output
	}
	for _, op := range run.Ops {
		r.Ops = append(r.Ops, OpSummary{
			Op: op.Op, Requests: op.Requests, Errors: op.Errors, ErrorsByCode: op.ErrorsByCode,
			ThroughputRPS: op.ThroughputRPS, TargetRPS: op.TargetRPS, LateStarts: op.LateStarts,
			Latency: op.Latency, Service: op.Service,
			Events: op.Events, Watchers: op.Watchers, MissedEvents: op.MissedEvents,
		})
	}
	for _, d := range run.Disk {
		r.Disk = append(r.Disk, diskSummary(d))
		if d.Backend != nil {
			b := diskSummary(*d.Backend)
			b.Pattern = d.Pattern + "/backend"
			r.Disk = append(r.Disk, b)
		}
	}
	members := map[string]bool{}
	for _, s := range run.Scrapes {
		if s.Error == "" && s.Text != "" {
			r.Scrapes++
			members[s.Member] = true
		}
	}
	r.Members = len(members)
	return r, nil
}

// WritePlots writes the report's plots as PNG and SVG into dir (created if needed)
// and lists them in r.Plots.
func (r *Document) WritePlots(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("plots folder: %w", err)
	}
	for _, f := range r.figures {
		png, err := r.png(f)
		if err != nil {
			return err
		}
		var svg bytes.Buffer
		if err := f.Render(&svg, "svg"); err != nil {
			return err
		}
		for _, out := range []struct {
			ext string
			b   []byte
		}{{".png", png}, {".svg", svg.Bytes()}} {
			path := filepath.Join(dir, f.Name+out.ext)
			if err := os.WriteFile(path, out.b, 0o644); err != nil {
				return fmt.Errorf("write plot: %w", err)
			}
			r.Plots = append(r.Plots, path)
		}
	}
	return nil
}

// png renders f as PNG once per report.
func (r *Document) png(f Figure) ([]byte, error) {
	if b, ok := r.pngs[f.Name]; ok {
		return b, nil
	}
	var buf bytes.Buffer
	if err := f.Render(&buf, "png"); err != nil {
		return nil, err
	}
	if r.pngs == nil {
		r.pngs = map[string][]byte{}
	}
	r.pngs[f.Name] = buf.Bytes()
	return buf.Bytes(), nil
}

func diskSummary(d results.DiskResult) DiskSummary {
	return DiskSummary{
		Pattern: d.Pattern, Dir: d.Dir, BlockSize: d.BlockSize, IOPS: d.IOPS, MBPerS: d.MBPerS,
		Fdatasync: d.Fdatasync, Commit: d.Commit, Grade: d.Grade, GradeReason: d.GradeReason,
		FioCommand: d.FioCommand,
	}
}

// status is the run's state in one word, for the headline.
func (r *Document) status() string {
	switch {
	case r.Diagnosis != nil && r.Verdict != nil:
		return string(r.Verdict.Status)
	case !r.Valid:
		return "invalid"
	case r.Interrupted:
		return "interrupted"
	}
	return "valid"
}

// targetLine describes the target in one line.
func (r *Document) targetLine() string {
	t := r.Target
	s := strings.Join(t.Endpoints, ",")
	if s == "" {
		s = "(no endpoints recorded)"
	}
	var extra []string
	if t.Embedded {
		extra = append(extra, "embedded")
	}
	if t.ServerVersion != "" {
		extra = append(extra, "etcd "+t.ServerVersion)
	}
	if n := len(t.Members); n > 0 {
		extra = append(extra, fmt.Sprintf("%d member%s", n, map[bool]string{true: "s"}[n != 1]))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// errorCodes renders errors by code in a stable order, e.g. "DeadlineExceeded 3, Unavailable 1".
func errorCodes(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
