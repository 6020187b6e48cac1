package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// ReportFormats are the renderings Document.Write knows (report --format).
var ReportFormats = []string{"text", "markdown", "html", "json", "openmetrics"}

// Write renders the report in format (one of ReportFormats).
func (r *Document) Write(w io.Writer, format string) error {
	switch format {
	case "text":
		return r.WriteText(w)
	case "markdown":
		return r.WriteMarkdown(w)
	case "html":
		return r.WriteHTML(w)
	case "json":
		return r.WriteJSON(w)
	case "openmetrics":
		return r.WriteOpenMetrics(w)
	}
	return fmt.Errorf("unknown report format %q (want one of %s)", format, strings.Join(ReportFormats, ", "))
}

// WriteJSON renders the report as one indented JSON object.
func (r *Document) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText renders the report for a terminal: upper-case section titles, aligned tables.
func (r *Document) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "etcdperf report: %s — %s\n", r.Command, strings.ToUpper(r.status()))
	for _, s := range r.sections() {
		fmt.Fprintf(bw, "\n%s\n", strings.ToUpper(s.Title))
		for i, b := range s.Blocks {
			// A blank line around each table keeps it apart from the lines it belongs between.
			if i > 0 && (b.Table != nil || s.Blocks[i-1].Table != nil) {
				fmt.Fprintln(bw)
			}
			switch {
			case b.Table != nil:
				tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
				writeRow(tw, "  ", b.Table.Head, strings.ToUpper)
				for _, row := range b.Table.Rows {
					writeRow(tw, "  ", row, nil)
				}
				tw.Flush()
			case b.Code != "":
				fmt.Fprintf(bw, "  %s\n", strings.ReplaceAll(b.Code, "\n", "\n  "))
			default:
				fmt.Fprintf(bw, "  %s\n", b.Text)
			}
		}
	}
	return bw.Flush()
}

// writeRow writes one tab-separated row; empty cells become "-" so columns stay readable.
func writeRow(w io.Writer, indent string, cells []string, f func(string) string) {
	out := make([]string, len(cells))
	for i, c := range cells {
		if c == "" {
			c = "-"
		}
		if f != nil {
			c = f(c)
		}
		out[i] = c
	}
	fmt.Fprintf(w, "%s%s\n", indent, strings.Join(out, "\t"))
}

// WriteMarkdown renders the report as GitHub-flavoured Markdown. PNG plots written by
// WritePlots are linked as images, by the path they were written to.
func (r *Document) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# etcdperf report: %s — %s\n", mdEscape(r.Command), strings.ToUpper(r.status()))
	for _, s := range r.sections() {
		fmt.Fprintf(bw, "\n## %s\n\n", s.Title)
		if s.Title == "Plots" {
			for _, p := range r.Plots {
				if filepath.Ext(p) == ".png" {
					fmt.Fprintf(bw, "![%s](%s)\n\n", strings.TrimSuffix(filepath.Base(p), ".png"), filepath.ToSlash(p))
				}
			}
			continue
		}
		for _, b := range s.Blocks {
			switch {
			case b.Table != nil:
				fmt.Fprintf(bw, "| %s |\n", strings.Join(mdCells(b.Table.Head), " | "))
				fmt.Fprintf(bw, "|%s\n", strings.Repeat(" --- |", len(b.Table.Head)))
				for _, row := range b.Table.Rows {
					fmt.Fprintf(bw, "| %s |\n", strings.Join(mdCells(row), " | "))
				}
				fmt.Fprintln(bw)
			case b.Code != "":
				fmt.Fprintf(bw, "```\n%s\n```\n\n", b.Code)
			case b.Grade != "":
				// The graded line is the point of its section: make it stand out.
				fmt.Fprintf(bw, "**%s**\n\n", mdEscape(b.Text))
			default:
				fmt.Fprintf(bw, "%s\n\n", mdEscape(b.Text))
			}
		}
	}
	return bw.Flush()
}

func mdCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = strings.ReplaceAll(mdEscape(c), "|", `\|`)
	}
	return out
}

// mdEscape keeps metric names (etcd_disk_wal_...) and markup-like text literal.
var mdEscape = strings.NewReplacer(`\`, `\\`, "_", `\_`, "*", `\*`, "`", "\\`", "<", "&lt;", ">", "&gt;").Replace
