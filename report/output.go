package report

import (
	"encoding/json"
	"io"
	"text/tabwriter"

	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/results"
)

// Output is one command's result, printed the three ways of -w: the value itself
// encoded as one JSON object (its exported fields and tags), and its two text
// forms. Every command's result type implements it, so cmd/ only builds the value
// and calls Print.
type Output interface {
	// Simple writes the human-readable summary (-w simple).
	Simple(w io.Writer) error
	// Table writes the same figures as aligned columns with a header row (-w table).
	Table(w io.Writer) error
}

// Print writes o to w in format: "json", "table" or "simple" (anything else).
func Print(w io.Writer, format string, o Output) error {
	switch format {
	case "json":
		return PrintJSON(w, o)
	case "table":
		return o.Table(w)
	default:
		return o.Simple(w)
	}
}

// PrintJSON writes v as one indented JSON object, as every -w json does.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// NewTable returns the tab writer every -w table uses: two spaces between
// columns. Call Flush when done.
func NewTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// Ms renders a latency in milliseconds as units.Ms does, and "≥60s" at the
// histograms' top, where the request took that long or longer.
func Ms(ms float64) string {
	if ms >= results.HistMaxUs/1000 {
		return "≥60s"
	}
	return units.Ms(ms)
}
