package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/inspect"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/units"
)

// inspectFlags are the options of `etcdperf inspect`.
type inspectFlags struct {
	snapshot      string
	depth, top    int
	keyPrefix     string
	pageSize      int64
	pageBytes     byteSize
	maxRPS        float64
	values        string
	exactUnder    byteSize
	maxRequest    byteSize
	quota         byteSize
	diskMBps      float64
	netMBps       float64
	heartbeatMs   float64
	electionMs    float64
	snapshotCount int64
	previous      string
}

const inspectLong = `inspect describes what etcd stores and how it is tuned, and says what of it makes etcd slow:
key count and bytes per prefix (keys grouped by their first --depth '/'-separated segments),
value sizes (HdrHistogram, overall and per prefix), the largest keys, keys near the request
size limit, prefixes too large to list in one range, history waiting for compaction and what
compacting would free, db size against its in-use part and the quota, the time a new member
needs to receive the data, growth since an earlier inspection (--previous), and tuning advice
(https://etcd.io/docs/v3.6/tuning/).

Live mode (default; --endpoints, or an embedded etcd when none is given) only reads: count-only
and keys-only ranges, all at one revision, paginated (--page-size) and paced (--max-rps), so it
is safe on production. Keys-only ranges carry no value size, so values are read one of two ways
(--values):
  exact   every value is read, in pages cut to about --page-bytes each: exact figures, and
          about as many bytes read as the data holds;
  sample  every key is read keys-only (exact counts and key bytes) and the values of one page
          in N, so that about --exact-under bytes of values are read: value bytes per prefix
          are extrapolated and the largest keys are the largest sampled ones;
  auto    exact when the db's in-use size is at most --exact-under (default 512MiB), else sample.
History comes from each key's version and create/mod revisions and the compaction revision
(found with count-only ranges): exact when the key was created after the last compaction, else
an upper bound; deleted keys' history is invisible live.

Snapshot mode (--snapshot FILE, from 'etcdctl snapshot save' or a member's member/snap/db) opens
the file read-only with bbolt and never writes it; a snapshot's sha256 trailer is verified. Every
revision and tombstone is counted exactly.

Heartbeat, election timeout and snapshot count are not exposed by etcd's API: pass the members'
values (--heartbeat-ms, --election-ms, --snapshot-count) or etcd's defaults are assumed and listed
as assumptions. Peer RTT and WAL fsync p99 come from the members' /metrics when reachable.

Exit status: 0 when no finding fails, 1 when one does (e.g. the db at ≥ 95% of its quota),
2 when inspect could not run (bad flags, not a snapshot, no permission to range).`

func newInspectCmd(a *app) *cobra.Command {
	f := &inspectFlags{
		pageBytes:  2 << 20,
		exactUnder: 512 << 20,
		maxRequest: inspect.DefaultMaxRequestBytes,
	}
	cmd := &cobra.Command{
		Use:   "inspect",
		Short: "Describe the stored data (prefixes, value sizes, history, db, quota) and the tuning, read-only",
		Long:  inspectLong,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.runInspect(cmd, f) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.snapshot, "snapshot", "", "inspect this snapshot file instead of a live cluster")
	fs.IntVar(&f.depth, "depth", 2, "group keys into prefixes of this many '/'-separated segments (≥ 1)")
	fs.IntVar(&f.top, "top", 10, "list this many largest keys")
	fs.StringVar(&f.keyPrefix, "key-prefix", "", "inspect only the keys under this prefix (default: every key)")
	fs.Int64Var(&f.pageSize, "page-size", 1000, "keys per range request (live)")
	fs.Var(&f.pageBytes, "page-bytes", "about this many bytes per range that returns values (live)")
	fs.Float64Var(&f.maxRPS, "max-rps", 10, "at most this many requests per second (live; 0 = unpaced)")
	fs.StringVar(&f.values, "values", inspect.ValuesAuto, "how value sizes are read (live): auto, exact or sample (see above)")
	fs.Var(&f.exactUnder, "exact-under", "db in-use size up to which --values auto reads every value; also the value bytes a sample reads")
	fs.Var(&f.maxRequest, "max-request-bytes", "the server's --max-request-bytes; keys at 2/3 of it are 'near the limit'")
	fs.Var(&f.quota, "quota-bytes", "the backend quota (default: read from the cluster; etcd's 2GiB default for a snapshot)")
	fs.Float64Var(&f.diskMBps, "disk-mbps", 0, fmt.Sprintf("a new member's disk write throughput, MB/s (default %d, assumed)", inspect.DefaultDiskMBps))
	fs.Float64Var(&f.netMBps, "net-mbps", 0, fmt.Sprintf("network throughput to a new member, MB/s (default %d = 1 GbE, assumed)", inspect.DefaultNetMBps))
	fs.Float64Var(&f.heartbeatMs, "heartbeat-ms", 0, "the members' --heartbeat-interval in ms (default: etcd's 100, assumed)")
	fs.Float64Var(&f.electionMs, "election-ms", 0, "the members' --election-timeout in ms (default: etcd's 1000, assumed)")
	fs.Int64Var(&f.snapshotCount, "snapshot-count", 0, "the members' --snapshot-count (default: etcd's 10000, assumed)")
	fs.StringVar(&f.previous, "previous", "", "an earlier 'inspect -w json' output or a run file, for the growth rate")
	return cmd
}

func (f *inspectFlags) validate(cmd *cobra.Command, a *app) error {
	switch {
	case f.depth <= 0:
		return usageErr(fmt.Errorf("--depth must be at least 1, got %d", f.depth))
	case f.top < 0:
		return usageErr(fmt.Errorf("--top must not be negative, got %d", f.top))
	case f.pageSize <= 0:
		return usageErr(fmt.Errorf("--page-size must be positive, got %d", f.pageSize))
	case f.pageBytes <= 0:
		return usageErr(fmt.Errorf("--page-bytes must be positive, got %d", f.pageBytes))
	case f.maxRPS < 0 || math.IsNaN(f.maxRPS) || math.IsInf(f.maxRPS, 0):
		return usageErr(fmt.Errorf("--max-rps must be 0 (unpaced) or positive, got %g", f.maxRPS))
	case f.values != inspect.ValuesAuto && f.values != inspect.ValuesExact && f.values != inspect.ValuesSample:
		return usageErr(fmt.Errorf("--values %q: must be auto, exact or sample", f.values))
	case f.maxRequest <= 0:
		return usageErr(fmt.Errorf("--max-request-bytes must be positive, got %d", f.maxRequest))
	case f.diskMBps < 0 || f.netMBps < 0 || f.heartbeatMs < 0 || f.electionMs < 0 || f.snapshotCount < 0:
		return usageErr(errors.New("--disk-mbps, --net-mbps, --heartbeat-ms, --election-ms and --snapshot-count must not be negative"))
	}
	if f.snapshot != "" {
		if len(a.conn.Endpoints) > 0 || a.conn.DataDir != "" {
			return usageErr(errors.New("--snapshot reads a file: it cannot be combined with --endpoints or --data-dir"))
		}
		for _, name := range []string{"page-size", "page-bytes", "max-rps", "values", "exact-under"} {
			if cmd.Flags().Changed(name) {
				return usageErr(fmt.Errorf("--%s is for live inspection; a snapshot is read whole", name))
			}
		}
	}
	return nil
}

func (a *app) runInspect(cmd *cobra.Command, f *inspectFlags) error {
	if err := f.validate(cmd, a); err != nil {
		return err
	}
	o := inspect.Options{
		Depth: f.depth, Top: f.top, KeyPrefix: f.keyPrefix, MaxRequestBytes: int64(f.maxRequest), QuotaBytes: int64(f.quota),
		DiskMBps: f.diskMBps, NetMBps: f.netMBps, HeartbeatMs: f.heartbeatMs, ElectionMs: f.electionMs, SnapshotCount: f.snapshotCount,
	}
	if f.previous != "" {
		p, err := inspect.LoadPrevious(f.previous)
		if err != nil {
			return usageErr(err)
		}
		o.Previous = p
	}
	var r *inspect.Report
	if f.snapshot != "" {
		var err error
		if r, err = inspect.ReadSnapshot(f.snapshot, o); err != nil {
			return usageErr(err)
		}
	} else {
		ctx := cmd.Context()
		t, err := a.connect(ctx)
		if err != nil {
			return err
		}
		defer t.Close()
		r, err = inspect.Live(ctx, inspect.LiveTarget{Client: t.Client, Endpoints: t.Info.Endpoints, HTTP: t.HTTP, MetricsURLs: t.MetricsURLs},
			inspect.LiveOptions{Options: o, PageSize: f.pageSize, PageBytes: int64(f.pageBytes), MaxRPS: f.maxRPS, Values: f.values, ExactUnder: int64(f.exactUnder)})
		if err != nil {
			return err
		}
	}
	if err := report.Print(a.stdout, a.output, report.Inspect{Report: r}); err != nil {
		return err
	}
	if r.Worst() == finding.Fail {
		return withCode(ExitFail, nil)
	}
	return nil
}

// byteSize is a flag holding a byte count in the one size syntax
// (units.SizeSyntax: 1048576, 512KiB, 1.5MiB, 2g; every suffix is binary).
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Type() string { return "bytes" }

func (b *byteSize) Set(s string) error {
	v, err := units.ParseSize(s)
	*b = byteSize(v)
	return err
}
