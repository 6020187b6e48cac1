package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/finding"
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
	// Probe is the verdict of --probe's check; nil without it.
	Probe *finding.Verdict `json:"probe_verdict,omitempty"`
}

// NewBundle is b, written to (or read from) path, as an Output.
func NewBundle(b *bundle.Bundle, path string) Bundle {
	out := Bundle{Path: path, Manifest: b.Manifest, Data: b.Data}
	if b.Probe != nil && b.Probe.Diagnosis != nil {
		out.Probe = b.Probe.Diagnosis.Verdict
	}
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
	if b.Data.Offline != nil {
		fmt.Fprintf(w, "bundle %s (%s, schema %d, %d data dir(s))\n", b.Path, b.Manifest.Kind, b.Manifest.SchemaVersion, len(b.Data.Offline.Dirs))
	} else {
		fmt.Fprintf(w, "bundle %s (%s, schema %d, %d member(s), scrapes %.1f s apart)\n", b.Path, b.Manifest.Kind, b.Manifest.SchemaVersion,
			len(b.Data.Members), b.Data.WindowS)
	}
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
		for i, p := range k.Prefixes {
			if i == maxPrefixRows {
				fmt.Fprintf(tw, "  (%d more in bundle.json)\t\t\n", len(k.Prefixes)-i)
				break
			}
			name := p.Prefix
			if name == "" {
				name = "(top level)"
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", name, p.Keys, units.Bytes(p.KeyBytes))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if k.Error != "" {
			fmt.Fprintf(w, "  listing stopped: %s\n", k.Error)
		}
	}
	if o := b.Data.Offline; o != nil {
		if err := offline(w, o); err != nil {
			return err
		}
	}
	if r := b.Data.Repair; r != nil && len(r.Members) > 0 {
		if err := repair(w, r); err != nil {
			return err
		}
	}
	if v := b.Probe; v != nil {
		fmt.Fprintf(w, "\nprobe (check with serve's tiny load, run file probe.json): %s — %s\n", strings.ToUpper(string(v.Status)), v.Summary)
	}
	for _, n := range b.Manifest.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// maxPrefixRows is how many key prefixes the text shows, the largest first.
const maxPrefixRows = 20

// members is one row per member: its status, or why it did not answer.
func (b Bundle) members(w io.Writer) error {
	if len(b.Data.Members) == 0 {
		return nil
	}
	var down []string
	tw := NewTable(w)
	fmt.Fprintln(tw, "NAME\tENDPOINT\tSTATE\tVERSION\tROLE\tTERM\tINDEX\tDB\tIN USE\tALARMS\tLIN P50/P90\tSER P50/P90\tPING")
	for _, m := range b.Data.Members {
		name := m.Name
		if name == "" {
			name = m.ID
		}
		if !m.Up() {
			// Every cell, so that the columns stay aligned; the error follows the table.
			fmt.Fprintf(tw, "%s\t%s\tDOWN%s\n", name, m.Endpoint, strings.Repeat("\t-", 10))
			down = append(down, fmt.Sprintf("%s is down: %s", name, m.Error))
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
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range down {
		fmt.Fprintln(w, d)
	}
	return nil
}

// offline writes what the data dirs hold: one row per dir, its entries by
// kind, whether the WALs agree, and the dir to restore from.
func offline(w io.Writer, o *bundle.Offline) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "DATA DIR\tWAL\tENTRIES\tINDEX\tTERM\tCOMMIT\tSNAPSHOTS\tDB\tIN USE\tAPPLIED\tREVISIONS\tCOMPACTED")
	for _, d := range o.Dirs {
		row := []string{d.Path, "-", "-", "-", "-", "-", fmt.Sprint(len(d.Snaps)), "-", "-", "-", "-", "-"}
		if wl := d.WAL; wl != nil {
			var n, bytes int64
			for k, v := range wl.Entries {
				n, bytes = n+v, bytes+wl.Bytes[k]
			}
			row[1] = fmt.Sprintf("%d segment(s)", len(wl.Segments))
			row[2] = fmt.Sprintf("%d (%s)", n, units.Bytes(bytes))
			row[3] = fmt.Sprintf("%d..%d", wl.FirstIndex, wl.LastIndex)
			row[4], row[5] = fmt.Sprint(wl.Term), fmt.Sprint(wl.Commit)
		}
		if db := d.DB; db != nil {
			row[7], row[8] = units.Bytes(db.SizeBytes), fmt.Sprintf("%s (%.0f%%)", units.Bytes(db.InUseBytes), 100*db.InUseRatio)
			row[9], row[10], row[11] = fmt.Sprint(db.ConsistentIndex), fmt.Sprintf("%d keys, rev %d", db.Keys, db.CurrentRevision), fmt.Sprint(db.CompactRevision)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range o.Dirs {
		if d.WAL != nil {
			var kinds []string
			for _, k := range slices.Sorted(maps.Keys(d.WAL.Entries)) {
				kinds = append(kinds, fmt.Sprintf("%s %d (%s)", k, d.WAL.Entries[k], units.Bytes(d.WAL.Bytes[k])))
			}
			fmt.Fprintf(w, "%s entries: %s\n", d.Path, strings.Join(kinds, ", "))
			if d.WAL.Error != "" {
				fmt.Fprintf(w, "%s WAL: read up to index %d, then: %s\n", d.Path, d.WAL.LastIndex, d.WAL.Error)
			}
		}
		if d.DB != nil {
			var bs []string
			for _, bk := range d.DB.Buckets {
				bs = append(bs, fmt.Sprintf("%s %d (%s)", bk.Name, bk.Keys, units.Bytes(bk.Bytes)))
			}
			fmt.Fprintf(w, "%s buckets: %s\n", d.Path, strings.Join(bs, ", "))
		}
		for _, e := range d.Errors {
			fmt.Fprintf(w, "%s: %s\n", d.Path, e)
		}
	}
	for _, g := range o.Agree {
		switch {
		case g.Agree && g.To > 0:
			fmt.Fprintf(w, "%s agree on indexes %d..%d\n", strings.Join(g.Dirs, " and "), g.From, g.To)
		default:
			fmt.Fprintf(w, "%s: %s\n", strings.Join(g.Dirs, " and "), g.Note)
		}
	}
	if r := o.Restore; r != nil {
		if r.Path != "" {
			fmt.Fprintf(w, "restore from: %s\n", r.Path)
		}
		for _, why := range r.Reason {
			fmt.Fprintf(w, "  %s\n", why)
		}
	}
	return nil
}

// repair writes what repairing each member would cost.
func repair(w io.Writer, r *bundle.Repair) error {
	fmt.Fprintf(w, "\nrepair cost (disk %.0f MB/s, network %.0f MB/s):\n", r.DiskMBps, r.NetMBps)
	tw := NewTable(w)
	fmt.Fprintln(tw, "  MEMBER\tDB\tIN USE\tDEFRAG BLOCKS\tNEW MEMBER CATCH-UP\tGROWTH\tQUOTA\tQUOTA IN")
	for _, c := range r.Members {
		growth, quotaIn := "-", "-"
		if c.GrowthBytesPerS != nil {
			growth = units.Bytes(int64(*c.GrowthBytesPerS)) + "/s"
			quotaIn = "not growing"
		}
		if c.QuotaS != nil {
			quotaIn = longDuration(*c.QuotaS)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Member, units.Bytes(c.DBBytes), units.Bytes(c.InUseBytes),
			longDuration(c.DefragS), longDuration(c.CatchUpS), growth, units.Bytes(c.QuotaBytes), quotaIn)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, a := range r.Assumed {
		fmt.Fprintf(w, "  assumed: %s\n", a)
	}
	fmt.Fprintf(w, "  basis: %s\n", r.Basis)
	return nil
}

// longDuration renders seconds as units.Duration does up to two minutes, then
// in minutes, hours or days.
func longDuration(s float64) string {
	switch {
	case s < 120:
		return units.Duration(s)
	case s < 2*3600:
		return units.Trim(s/60) + " min"
	case s < 2*86400:
		return units.Trim(s/3600) + " h"
	}
	return units.Trim(s/86400) + " days"
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
	// Regraded grades with the analyzer's rules alone, without the bundle's own
	// (members, data dirs): it would always differ. analyze BUNDLE regrades a bundle.
	r.Regraded = ""
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
