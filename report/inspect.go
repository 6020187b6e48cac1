package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/inspect"
	"github.com/etcdperf/etcdperf/internal/units"
)

// Inspect is `inspect`'s output: the report itself is its JSON.
type Inspect struct {
	*inspect.Result
}

// Simple renders the report as readable text.
func (i Inspect) Simple(w io.Writer) error { return inspectText(w, i.Result) }

// Table renders the report as tables: every prefix, the largest keys, the db
// and the findings.
func (i Inspect) Table(w io.Writer) error { return inspectTable(w, i.Result) }

// maxTextPrefixes bounds the prefixes listed by the simple text form; JSON and
// the table list them all.
const maxTextPrefixes = 20

func inspectText(w io.Writer, r *inspect.Result) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s at revision %d", describeSource(r), r.Revision)
	if r.KeyPrefix != "" {
		fmt.Fprintf(b, ", keys under %s", inspect.QuoteKey(r.KeyPrefix))
	}
	fmt.Fprintf(b, "\n\ntotal: %d keys, %s of keys, %s of values%s\n", r.Total.Keys, units.Bytes(r.Total.KeyBytes), units.Bytes(r.Total.ValueBytes), valuesNote(r))
	v := r.ValueSize
	fmt.Fprintf(b, "value size: p50 %s, p90 %s, p99 %s, max %s\n", units.Bytes(v.P50), units.Bytes(v.P90), units.Bytes(v.P99), units.Bytes(v.Max))

	fmt.Fprintf(b, "\nprefixes (depth %d, largest first):\n", r.Depth)
	tw := NewTable(b)
	for i, p := range r.Prefixes {
		if i == maxTextPrefixes {
			fmt.Fprintf(tw, "  ... %d more (-w json or -w table lists all)\n", len(r.Prefixes)-i)
			break
		}
		fmt.Fprintf(tw, "  %s\t%d keys\t%s keys\t%s values\tp99 value %s\t%d old revisions\n", inspect.QuoteKey(p.Prefix), p.Keys,
			units.Bytes(p.KeyBytes), units.Bytes(p.ValueBytes), units.Bytes(p.ValueSize.P99), p.OldRevisions)
	}
	tw.Flush()
	if len(r.Largest) > 0 {
		b.WriteString("\nlargest keys (key+value):\n")
		writeKeys(b, r.Largest)
	}
	if len(r.NearLimit) > 0 {
		b.WriteString("\nnear the request size limit:\n")
		writeKeys(b, r.NearLimit)
	}
	h := r.History
	compacted := "never compacted"
	if h.CompactRevision > 0 {
		compacted = fmt.Sprintf("compacted at revision %d", h.CompactRevision)
	}
	estimate := ""
	if !h.Exact || r.Source == "live" {
		estimate = " (estimate)"
	}
	deepest := ""
	if h.MaxDepth > 0 {
		deepest = fmt.Sprintf(" (deepest %d: %s)", h.MaxDepth, inspect.QuoteKey(h.MaxDepthKey))
	}
	fmt.Fprintf(b, "\nhistory: %s, %d revisions since; %d old revisions in %d keys%s, %d deleted keys; compaction would free %s%s\n",
		compacted, h.RevisionsSinceCompaction, h.OldRevisions, h.KeysWithHistory, deepest, h.DeletedKeys, units.Bytes(h.CompactionFreesBytes), estimate)
	db := r.DB
	fmt.Fprintf(b, "db: %s, %s in use (ratio %.2f); quota %s (%s), %.1f%% used\n", units.Bytes(db.SizeBytes), units.Bytes(db.InUseBytes), db.InUseRatio,
		units.Bytes(db.QuotaBytes), db.QuotaSource, 100*db.QuotaUsed)
	fmt.Fprintf(b, "recovery: a new member needs ≈ %s for the snapshot (disk %.0f MB/s, network %.0f MB/s)\n", units.Seconds(r.Recovery.Seconds), r.Recovery.DiskMBps, r.Recovery.NetMBps)
	if g := r.Growth; g != nil {
		fmt.Fprintf(b, "growth: %s/day since %s", units.Bytes(int64(g.BytesPerDay)), g.PreviousAt.Format("2006-01-02 15:04"))
		if g.DaysToQuota != nil {
			fmt.Fprintf(b, ", quota reached in %.1f days", *g.DaysToQuota)
		}
		b.WriteString("\n")
	}
	t := r.Tuning
	fmt.Fprintf(b, "tuning: heartbeat %s, election %s, snapshot count %d; peer RTT p99 %s, WAL fsync p99 %s\n", units.Duration(t.HeartbeatMs/1000), units.Duration(t.ElectionMs/1000), t.SnapshotCount,
		optMs2(t.PeerRTTP99Ms), optMs2(t.WALFsyncP99Ms))

	b.WriteString("\nfindings:\n")
	for _, f := range r.Findings {
		fmt.Fprintf(b, "  [%s] %s: %s\n", f.Severity, f.Class, f.Summary)
		for _, e := range f.Evidence {
			fmt.Fprintf(b, "      %s: %s (threshold %s; %s)\n", e.Signal, e.Observed, e.Threshold, e.Source)
		}
		if f.Advice != "" {
			fmt.Fprintf(b, "      advice: %s\n", f.Advice)
		}
	}
	if len(r.Assumptions) > 0 {
		b.WriteString("\nassumptions:\n")
		for _, a := range r.Assumptions {
			fmt.Fprintf(b, "  - %s\n", a)
		}
	}
	if r.Source == "snapshot" {
		fmt.Fprintf(b, "\nread %s from the file in %.2fs\n", units.Bytes(r.Scan.BytesRead), r.Scan.DurationS)
	} else {
		fmt.Fprintf(b, "\nread %s in %d requests (%d pages) in %.2fs\n", units.Bytes(r.Scan.BytesRead), r.Scan.Requests, r.Scan.Pages, r.Scan.DurationS)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func inspectTable(w io.Writer, r *inspect.Result) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "PREFIX\tKEYS\tKEY BYTES\tVALUE BYTES\tVALUE P50\tVALUE P99\tVALUE MAX\tOLD REVISIONS")
	for _, p := range r.Prefixes {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", inspect.QuoteKey(p.Prefix), p.Keys, p.KeyBytes, p.ValueBytes, p.ValueSize.P50, p.ValueSize.P99, p.ValueSize.Max, p.OldRevisions)
	}
	fmt.Fprintf(tw, "TOTAL\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", r.Total.Keys, r.Total.KeyBytes, r.Total.ValueBytes, r.ValueSize.P50, r.ValueSize.P99, r.ValueSize.Max, r.History.OldRevisions)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "LARGEST KEY\tKEY BYTES\tVALUE BYTES\tVERSION")
	for _, k := range r.Largest {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", inspect.QuoteKey(k.Key), k.KeyBytes, k.ValueBytes, k.Version)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "DB SIZE\tIN USE\tQUOTA\tQUOTA USED\tCOMPACTION FREES\tRECOVERY")
	fmt.Fprintf(tw, "%d\t%d\t%d\t%.1f%%\t%d\t%s\n", r.DB.SizeBytes, r.DB.InUseBytes, r.DB.QuotaBytes, 100*r.DB.QuotaUsed, r.History.CompactionFreesBytes, units.Seconds(r.Recovery.Seconds))
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "CLASS\tSEVERITY\tSUMMARY")
	for _, f := range r.Findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Class, f.Severity, f.Summary)
	}
	return tw.Flush()
}

func describeSource(r *inspect.Result) string {
	if r.Source == "snapshot" {
		return "snapshot " + r.Snapshot
	}
	s := fmt.Sprintf("live cluster %s", strings.Join(r.Endpoints, ","))
	if r.ServerVersion != "" {
		s += " (etcd " + r.ServerVersion + ")"
	}
	return s
}

func valuesNote(r *inspect.Result) string {
	if r.Values.Exact {
		return ""
	}
	return fmt.Sprintf(" (value bytes extrapolated from %d sampled keys)", r.Values.SampledKeys)
}

func writeKeys(b *strings.Builder, keys []inspect.KeyInfo) {
	tw := NewTable(b)
	for _, k := range keys {
		fmt.Fprintf(tw, "  %s\t%s\tkey %d B\tvalue %s\tversion %d\n", inspect.QuoteKey(k.Key), units.Bytes(k.Size()), k.KeyBytes, units.Bytes(k.ValueBytes), k.Version)
	}
	tw.Flush()
}

// optMs2 renders a latency that may be unknown as units.Duration does, like inspect's evidence.
func optMs2(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return units.Duration(*v / 1000)
}
