package report

import (
	"fmt"
	"io"

	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/plan"
)

// Datascale is `plan --datascale`'s output.
type Datascale struct {
	plan.DatascaleResult
}

// Simple writes what the fill cost and what fits, each figure with its source.
func (d Datascale) Simple(w io.Writer) error {
	r := d.Datascale
	fmt.Fprintln(w, verdictLine(d.Verdict))
	tw := NewTable(w)
	fmt.Fprintf(tw, "keys filled\t%d (%d-byte keys, %d-byte values) in %.1fs\n", r.Keys, r.KeySize, r.ValueSize, r.FillSeconds)
	fmt.Fprintf(tw, "db size\t%s → %s (in use %s): %.0f bytes per key\t(Status.DbSize)\n", units.Bytes(r.DBBefore), units.Bytes(r.DBAfter), units.Bytes(r.DBInUseAfter), r.DBPerKey)
	rss := "not measurable"
	if r.RSSPerKey != nil {
		rss = fmt.Sprintf("%.0f bytes per key", *r.RSSPerKey)
	}
	fmt.Fprintf(tw, "member RSS\t%s → %s: %s\t(%s)\n", units.Bytes(r.RSSBefore), units.Bytes(r.RSSAfter), rss, plan.SourceMemKey)
	if r.KeysInQuota != nil {
		fmt.Fprintf(tw, "keys that fit in the quota\t%s more (quota %s)\t(%s)\n", units.Count(*r.KeysInQuota), units.Bytes(r.QuotaBytes), plan.SourceQuota)
	}
	if r.KeysIn8GiB != nil {
		fmt.Fprintf(tw, "keys that fit in 8 GiB\t%s more\t(%s)\n", units.Count(*r.KeysIn8GiB), plan.SourceDBMax)
	}
	if r.KeysInMemory != nil {
		fmt.Fprintf(tw, "keys that fit in memory\t%s more (%s)\t(RSS per key)\n", units.Count(*r.KeysInMemory), units.Bytes(r.MemoryBytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// Table writes one row per measured or projected quantity, in bytes and keys,
// with its source; a projection that could not be made is "-".
func (d Datascale) Table(w io.Writer) error {
	r := d.Datascale
	opt := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.0f", *v)
	}
	tw := NewTable(w)
	fmt.Fprintln(tw, "QUANTITY\tBEFORE\tAFTER\tPER KEY\tSOURCE")
	fmt.Fprintf(tw, "db bytes\t%d\t%d\t%.0f\tStatus.DbSize\n", r.DBBefore, r.DBAfter, r.DBPerKey)
	fmt.Fprintf(tw, "member RSS bytes\t%d\t%d\t%s\t%s\n", r.RSSBefore, r.RSSAfter, opt(r.RSSPerKey), plan.SourceMemKey)
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "PROJECTION\tMORE KEYS\tOF BYTES\tSOURCE")
	fmt.Fprintf(tw, "in the quota\t%s\t%d\t%s\n", opt(r.KeysInQuota), r.QuotaBytes, plan.SourceQuota)
	fmt.Fprintf(tw, "in 8 GiB\t%s\t%d\t%s\n", opt(r.KeysIn8GiB), int64(8<<30), plan.SourceDBMax)
	fmt.Fprintf(tw, "in memory\t%s\t%d\tRSS per key\n", opt(r.KeysInMemory), r.MemoryBytes)
	return tw.Flush()
}
