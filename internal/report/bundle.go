package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/analyze"
	"github.com/etcdperf/etcdperf/internal/bundle"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Bundle is the output of bundle, and what report shows of a bundle before the
// run file's own sections: the verdict, then what the bundle found of each member.
type Bundle struct {
	Path     string          `json:"path"`
	Manifest bundle.Manifest `json:"manifest"`
	Data     bundle.Data     `json:"bundle"`
	// Analysis is the verdict and findings the bundle stores.
	Analysis Analysis `json:"analysis"`
}

// NewBundle is b, written to (or read from) path, as an Output.
func NewBundle(b *bundle.Bundle, path string) Bundle {
	out := Bundle{Path: path, Manifest: b.Manifest, Data: b.Data}
	if b.Run != nil && b.Run.Diagnosis != nil {
		d := b.Run.Diagnosis
		out.Analysis = Analysis(analyze.Result{Findings: d.Findings, Budget: d.Budget, Hardware: d.Hardware, Notes: d.Notes})
		if d.Verdict != nil {
			out.Analysis.Verdict = *d.Verdict
		}
	}
	return out
}

// Simple writes the verdict and findings first, then the members and the rest.
func (b Bundle) Simple(w io.Writer) error {
	fmt.Fprintf(w, "bundle %s (%s, schema %d, %d member(s), scrapes %.1f s apart)\n", b.Path, b.Manifest.Kind, b.Manifest.SchemaVersion,
		len(b.Data.Members), b.Data.WindowS)
	if err := b.Analysis.Simple(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return b.details(w)
}

// Table writes the members as a table, then the analysis as a table.
func (b Bundle) Table(w io.Writer) error {
	if err := b.members(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return b.Analysis.Table(w)
}

// details are the members, the key space and the notes.
func (b Bundle) details(w io.Writer) error {
	if b.Data.MembershipError != "" {
		how := "the endpoints given are the members"
		if b.Data.MembershipSerializable {
			how = "read from one member's own view instead"
		}
		fmt.Fprintf(w, "member list (linearizable) failed: %s; %s\n", b.Data.MembershipError, how)
	}
	if err := b.members(w); err != nil {
		return err
	}
	if k := b.Data.Keys; k != nil {
		fmt.Fprintf(w, "\nkeys (%s names, %d read", k.Mode, k.Read)
		if k.Truncated {
			fmt.Fprint(w, ", more not read")
		}
		fmt.Fprintln(w, "):")
		tw := NewTable(w)
		fmt.Fprintln(tw, "  PREFIX\tKEYS\tKEY BYTES")
		for _, p := range k.Prefixes {
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", p.Prefix, p.Keys, units.Bytes(p.KeyBytes))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if k.Error != "" {
			fmt.Fprintf(w, "  listing stopped: %s\n", k.Error)
		}
	}
	for _, n := range b.Manifest.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// members is one row per member: its status, or why it did not answer.
func (b Bundle) members(w io.Writer) error {
	if len(b.Data.Members) == 0 {
		return nil
	}
	tw := NewTable(w)
	fmt.Fprintln(tw, "NAME\tENDPOINT\tSTATE\tVERSION\tROLE\tTERM\tINDEX\tDB\tIN USE\tALARMS\tLIN P50/P90\tSER P50/P90\tPING")
	for _, m := range b.Data.Members {
		name := m.Name
		if name == "" {
			name = m.ID
		}
		if !m.Up() {
			fmt.Fprintf(tw, "%s\t%s\tDOWN: %s\n", name, m.Endpoint, m.Error)
			continue
		}
		role := "follower"
		switch {
		case m.IsLearner:
			role = "learner"
		case m.IsLeader:
			role = "leader"
		}
		alarms := strings.Join(m.Alarms, ",")
		fmt.Fprintf(tw, "%s\t%s\tup\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", name, m.Endpoint, m.Version, role, m.RaftTerm, m.RaftIndex,
			units.Bytes(m.DBSize), units.Bytes(m.DBSizeInUse), dash(alarms), latencyCell(m.Linearizable), latencyCell(m.Serializable), Ms(m.PingRTTMs))
	}
	return tw.Flush()
}

func latencyCell(l *bundle.Latency) string {
	switch {
	case l == nil:
		return "-"
	case l.N == 0:
		return "failed: " + l.Error
	}
	return Ms(l.P50Ms) + "/" + Ms(l.P90Ms)
}

// bundleSection is what a report of a bundle shows of it, after the verdict.
func bundleSection(b Bundle) section {
	var s strings.Builder
	_ = b.details(&s)
	return section{Title: "Bundle", Blocks: []block{
		textBlock("Bundle: %s (%s, schema %d), collected %s on %s", b.Path, b.Manifest.Kind, b.Manifest.SchemaVersion,
			b.Manifest.CreatedAt.Format("2006-01-02 15:04:05Z"), b.Manifest.Host),
		{Code: strings.TrimRight(s.String(), "\n")},
	}}
}

// RenderBundle renders a bundle as report renders a run file (Render), its
// verdict first and what the bundle found of each member after it.
func RenderBundle(w io.Writer, b *bundle.Bundle, name, format, plotsDir string) error {
	if b.Run == nil {
		return fmt.Errorf("%s: the bundle has no run file", name)
	}
	r, err := NewDocument(b.Run, b.Run.Diagnosis)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	out := NewBundle(b, name)
	r.bundle, r.Bundle = &out, &out
	if plotsDir != "" {
		if err := r.WritePlots(plotsDir); err != nil {
			return err
		}
	}
	return r.Write(w, format)
}

// leadWithVerdict moves the verdict section first and the bundle's right after
// it: a bundle is read for its verdict.
func leadWithVerdict(out []section, b Bundle) []section {
	var verdict []section
	var rest []section
	for _, s := range out {
		if s.Title == "Verdict" {
			verdict = append(verdict, s)
		} else {
			rest = append(rest, s)
		}
	}
	if len(verdict) == 0 {
		verdict = []section{{Title: "Verdict", Blocks: []block{{Text: string(finding.Unknown) + ": the bundle stores no verdict", Grade: "warn"}}}}
	}
	return append(append(verdict, bundleSection(b)), rest...)
}
