package results

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// ErrUnlike is returned when run files to merge do not describe one run: another
// cluster, another command or op set, another workload.
var ErrUnlike = errors.New("cannot merge unlike runs")

// Run flags that may differ between the workers of one run: they say which worker it
// was and where it wrote, not what load it drove. Rate and total are each worker's
// share; prefix is each worker's own key prefix.
var perWorkerFlags = map[string]bool{
	"worker-index": true, "rate": true, "total": true, "prefix": true,
	"run-file": true, "results-dir": true, "write-out": true, "debug": true,
}

// Connection flags: workers may reach the same cluster through other endpoints,
// credentials and timeouts; ClusterID says whether it is the same cluster.
var connectionFlags = map[string]bool{
	"endpoints": true, "cacert": true, "cert": true, "key": true, "insecure-skip-tls-verify": true,
	"user": true, "password": true, "dial-timeout": true, "keepalive-time": true, "keepalive-timeout": true,
	"metrics-urls": true, "data-dir": true, "embedded-members": true,
	// The transport a worker really used is compared instead (Client.Transport):
	// --transport lean and no flag are the same load.
	"transport": true,
}

// Merge combines the run files of several workers that drove one load against one
// cluster into one run file, exactly: histograms are merged bucket by bucket (never
// percentiles averaged), per-second intervals are aligned on their wall-clock
// second, counts, errors, bytes and target rates are summed, and throughput is
// recomputed over the union of the measured windows. Scrapes of one member at one
// time are kept once; per member, the earliest "before" and the latest "after"
// scrape bracket the merged run and the other workers' become "during" scrapes.
//
// names label the runs in error messages (file names); Merge fails with ErrUnlike
// when the runs differ in cluster, command, op set or workload flags, or when one
// worker appears twice.
func Merge(runs []*Run, names []string) (*Run, error) {
	if len(runs) == 0 {
		return nil, errors.New("merge: no run files")
	}
	name := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return fmt.Sprintf("run %d", i+1)
	}
	if err := checkAlike(runs, name); err != nil {
		return nil, err
	}
	first := runs[0]
	out := &Run{
		Version: Version, Tool: first.Tool, Command: first.Command,
		Target: mergeTarget(runs), Flags: mergeFlags(runs), Valid: true,
		Client: Client{Transport: first.Client.Transport},
	}
	measuredStart, end := first.StartedAt.Add(secs(first.WarmupS)), first.EndedAt
	out.StartedAt = first.StartedAt
	var reasons, errs []string
	for i, r := range runs {
		out.StartedAt = minTime(out.StartedAt, r.StartedAt)
		measuredStart = minTime(measuredStart, r.StartedAt.Add(secs(r.WarmupS)))
		if r.EndedAt.After(end) {
			end = r.EndedAt
		}
		if !r.Valid {
			out.Valid = false
			reasons = append(reasons, fmt.Sprintf("%s: %s", name(i), r.InvalidReason))
		}
		if r.Error != "" {
			errs = append(errs, fmt.Sprintf("%s: %s", name(i), r.Error))
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		out.Stall = Longer(out.Stall, r.Stall)
		out.Disk = append(out.Disk, r.Disk...)
		addFigures(&out.Client, r.Client)
	}
	out.EndedAt = end
	out.WarmupS = measuredStart.Sub(out.StartedAt).Seconds()
	out.DurationS = end.Sub(measuredStart).Seconds()
	out.Error = strings.Join(errs, "; ")
	out.Host = commonHost(runs)
	out.Scrapes = mergeScrapes(runs)
	mergeConditions(out, runs)
	var err error
	if out.EndpointLoads, err = mergeEndpoints(runs); err != nil {
		return nil, err
	}

	for _, o := range first.Ops {
		op, err := mergeOp(o.Op, runs, out.DurationS)
		if err != nil {
			return nil, err
		}
		out.Ops = append(out.Ops, op)
	}
	if out.Valid {
		if reason := rateShortfall(out); reason != "" {
			reasons = append(reasons, reason)
			out.Valid = false
		}
	}
	out.InvalidReason = strings.Join(reasons, "; ")
	return out, nil
}

// mergeConditions keeps what the workers measured beside their load, which
// the verdict grades the merged run by: the round trips of the worker whose
// client round trip is the median of theirs (each measured its own way to the
// cluster; the median is the typical request's), the most contended host's CPU
// pressure and busy share (its figures are in the merge), and every alarm any
// worker read.
func mergeConditions(out *Run, runs []*Run) {
	var nets []*Network
	for _, r := range runs {
		if r.Network != nil {
			nets = append(nets, r.Network)
		}
		out.HostCPUPressure = maxOf(out.HostCPUPressure, r.HostCPUPressure)
		out.HostCPUBusy = maxOf(out.HostCPUBusy, r.HostCPUBusy)
		out.HostCPUBusiest = maxOf(out.HostCPUBusiest, r.HostCPUBusiest)
		for _, a := range r.Alarms {
			if !slices.Contains(out.Alarms, a) {
				out.Alarms = append(out.Alarms, a)
			}
		}
		if r.Alarms != nil && out.Alarms == nil {
			out.Alarms = []Alarm{} // read, and none raised
		}
	}
	if len(nets) > 0 {
		slices.SortStableFunc(nets, func(a, b *Network) int { return cmp.Compare(a.RTTMs(), b.RTTMs()) })
		out.Network = nets[(len(nets)-1)/2]
	}
}

// maxOf is the larger of two optional figures; nil when both are.
func maxOf(a, b *float64) *float64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a >= *b:
		return a
	}
	return b
}

// checkAlike refuses runs that are not workers of one run.
func checkAlike(runs []*Run, name func(int) string) error {
	first := runs[0]
	workers := map[string]int{}
	for i, r := range runs {
		if idx, ok := r.Flags["worker-index"]; ok {
			if j, dup := workers[idx]; dup {
				return fmt.Errorf("%w: %s and %s are both worker %s (a run merged twice counts twice)", ErrUnlike, name(j), name(i), idx)
			}
			workers[idx] = i
		}
		if i == 0 {
			continue
		}
		unlike := func(format string, args ...any) error {
			return fmt.Errorf("%w: %s and %s: %s", ErrUnlike, name(0), name(i), fmt.Sprintf(format, args...))
		}
		switch {
		case r.Command != first.Command:
			return unlike("command %q vs %q", first.Command, r.Command)
		case r.Target.ClusterID != first.Target.ClusterID:
			return unlike("cluster ID %q vs %q (different etcd clusters)", first.Target.ClusterID, r.Target.ClusterID)
		case !slices.Equal(first.OpNames(), r.OpNames()):
			return unlike("ops [%s] vs [%s]", strings.Join(first.OpNames(), " "), strings.Join(r.OpNames(), " "))
		case r.Client.Transport != first.Client.Transport:
			return unlike("transport %q vs %q (the load went through different clients)", first.Client.Transport, r.Client.Transport)
		}
		for _, k := range flagUnion(first, r) {
			a, inA := first.Flags[k]
			b, inB := r.Flags[k]
			if a != b || inA != inB {
				return unlike("workload flag --%s %s vs %s", k, flagValue(a, inA), flagValue(b, inB))
			}
		}
	}
	return nil
}

func flagValue(v string, set bool) string {
	if !set {
		return "unset"
	}
	return strconv.Quote(v)
}

// flagUnion is the sorted union of the workload flags two runs set.
func flagUnion(a, b *Run) []string {
	seen := map[string]bool{}
	for _, m := range []map[string]string{a.Flags, b.Flags} {
		for k := range m {
			if !perWorkerFlags[k] && !connectionFlags[k] {
				seen[k] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// mergeFlags keeps the flags every worker shares, and sums the per-worker shares of
// rate and total so the merged run records the whole load.
func mergeFlags(runs []*Run) map[string]string {
	out := map[string]string{}
	for k, v := range runs[0].Flags {
		same := true
		for _, r := range runs[1:] {
			if w, ok := r.Flags[k]; !ok || w != v {
				same = false
				break
			}
		}
		if same {
			out[k] = v
		}
	}
	for _, k := range []string{"rate", "total"} {
		sum, all := 0.0, true
		for _, r := range runs {
			v, err := strconv.ParseFloat(r.Flags[k], 64)
			if err != nil {
				all = false
				break
			}
			sum += v
		}
		if all {
			out[k] = strconv.FormatFloat(sum, 'f', -1, 64)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// mergeTarget is the first run's target with every worker's endpoints; the runs
// were checked to share one cluster ID.
func mergeTarget(runs []*Run) ClusterInfo {
	t := runs[0].Target
	t.Endpoints = nil
	for _, r := range runs {
		for _, ep := range r.Target.Endpoints {
			if !slices.Contains(t.Endpoints, ep) {
				t.Endpoints = append(t.Endpoints, ep)
			}
		}
		t.Embedded = t.Embedded && r.Target.Embedded
	}
	return t
}

// commonHost keeps the host facts only when every worker ran on one host: the facts
// of several machines do not describe one.
func commonHost(runs []*Run) *Host {
	h := runs[0].Host
	for _, r := range runs[1:] {
		if h == nil || r.Host == nil || r.Host.Hostname != h.Hostname {
			return nil
		}
	}
	return h
}

// mergeOp merges the op called name of every run over a window of durationS seconds.
func mergeOp(name string, runs []*Run, durationS float64) (Op, error) {
	out := Op{Op: name}
	resp, svc := NewHist(), NewHist()
	type second struct {
		iv        Interval // its figures, merged by addFigures
		resp, svc *hdr.Histogram
	}
	seconds := map[int64]*second{}
	for _, r := range runs {
		i := slices.IndexFunc(r.Ops, func(o Op) bool { return o.Op == name })
		o := r.Ops[i]
		addFigures(&out, o)
		if o.ServiceOK != nil {
			if out.ServiceOK == nil {
				out.ServiceOK = &Moments{}
			}
			out.ServiceOK.Merge(*o.ServiceOK)
		}
		for code, n := range o.ErrorsByCode {
			if out.ErrorsByCode == nil {
				out.ErrorsByCode = map[string]int64{}
			}
			out.ErrorsByCode[code] += n
		}
		// Watch creation is stored as a digest only, which cannot be merged: keep
		// the slowest worker's.
		if o.CreateMs != nil && (out.CreateMs == nil || o.CreateMs.P99 > out.CreateMs.P99) {
			c := *o.CreateMs
			out.CreateMs = &c
		}
		if err := addHist(resp, o.ResponseHist); err != nil {
			return out, fmt.Errorf("op %s: %w", name, err)
		}
		if err := addHist(svc, o.ServiceHist); err != nil {
			return out, fmt.Errorf("op %s: %w", name, err)
		}
		for _, iv := range o.Intervals {
			s := seconds[iv.Start.Unix()]
			if s == nil {
				s = &second{resp: NewHist(), svc: NewHist()}
				seconds[iv.Start.Unix()] = s
			}
			addFigures(&s.iv, iv)
			if err := addHist(s.resp, iv.Response); err != nil {
				return out, fmt.Errorf("op %s interval %s: %w", name, iv.Start.Format(time.RFC3339), err)
			}
			if err := addHist(s.svc, iv.Service); err != nil {
				return out, fmt.Errorf("op %s interval %s: %w", name, iv.Start.Format(time.RFC3339), err)
			}
		}
	}
	// Target rates are summed in floating point; round as bench does, so 4 × 62.5 reads 250.
	out.TargetRPS = float64(int64(out.TargetRPS*1e6+0.5)) / 1e6
	if durationS > 0 {
		out.ThroughputRPS = float64(out.Requests-out.Errors) / durationS
		out.SentRPS = float64(out.Requests) / durationS
	}
	out.Latency, out.Service = Summarize(resp), Summarize(svc)
	var err error
	if out.Members, err = mergeMembers(name, runs); err != nil {
		return out, err
	}
	if out.ResponseHist, err = EncodeHist(resp); err != nil {
		return out, err
	}
	if out.ServiceHist, err = EncodeHist(svc); err != nil {
		return out, err
	}
	if len(seconds) == 0 {
		return out, nil
	}
	// Every second of the union gets an interval, as one run's recorder does, so a
	// gap between workers shows in time series instead of being closed up.
	keys := slices.Sorted(maps.Keys(seconds))
	for sec := keys[0]; sec <= keys[len(keys)-1]; sec++ {
		var iv Interval
		if s := seconds[sec]; s != nil {
			iv = s.iv
			if s.resp.TotalCount() > 0 {
				if iv.Response, err = EncodeHist(s.resp); err != nil {
					return out, err
				}
			}
			if s.svc.TotalCount() > 0 {
				if iv.Service, err = EncodeHist(s.svc); err != nil {
					return out, err
				}
			}
		}
		iv.Start = time.Unix(sec, 0).UTC()
		out.Intervals = append(out.Intervals, iv)
	}
	return out, nil
}

// addFigures adds the numbers of src into dst, a struct of the same type, field
// by field, so that a figure added to Op, Client or Interval is merged without
// a line here: integers and floats are summed, unless tagged merge:"max" (the worst
// worker's: peaks, p99s) or merge:"derived" (recomputed from the merged whole:
// rates). Any other field (histograms, digests, maps, names) must be tagged
// merge:"caller" and merged by the caller: an untagged one panics, so a field
// added without a merge fails the first test that merges, instead of being
// silently dropped (TestAddFiguresRefuses).
func addFigures[T any](dst *T, src T) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	t := d.Type()
	for i := range t.NumField() {
		how := t.Field(i).Tag.Get("merge")
		if how == "derived" || how == "caller" {
			continue
		}
		f, x := d.Field(i), s.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			if how == "max" {
				f.SetInt(max(f.Int(), x.Int()))
			} else {
				f.SetInt(f.Int() + x.Int())
			}
		case reflect.Float64:
			if how == "max" {
				f.SetFloat(max(f.Float(), x.Float()))
			} else {
				f.SetFloat(f.Float() + x.Float())
			}
		default:
			panic(fmt.Sprintf("results: merge: %s.%s (%s) is neither summed nor tagged merge:\"caller\"", t.Name(), t.Field(i).Name, f.Kind()))
		}
	}
}

// addHist adds an encoded histogram into dst. Every recorder uses the shared bounds
// (HistMinUs..HistMaxUs), so no value is clamped and the merge is exact.
func addHist(dst *hdr.Histogram, x Hist) error {
	h, err := x.Decode()
	if err != nil {
		return err
	}
	if dropped := dst.Merge(h); dropped > 0 {
		return fmt.Errorf("merge histogram: %d values outside %d..%d µs", dropped, HistMinUs, HistMaxUs)
	}
	return nil
}

// mergeScrapes keeps one scrape per member and time, and re-labels phases for the
// merged window: per member, the earliest "before" and the latest "after" bracket
// it; the other workers' before/after scrapes were taken while load ran.
func mergeScrapes(runs []*Run) []Scrape {
	type key struct{ member, time string }
	seen := map[key]bool{}
	var out []Scrape
	firstBefore, lastAfter := map[string]int{}, map[string]int{}
	for _, r := range runs {
		for _, sc := range r.Scrapes {
			k := key{sc.Member, sc.Time}
			if seen[k] {
				continue
			}
			seen[k] = true
			i := len(out)
			out = append(out, sc)
			switch sc.Phase {
			case PhaseBefore:
				if j, ok := firstBefore[sc.Member]; !ok || scrapeAt(sc).Before(scrapeAt(out[j])) {
					firstBefore[sc.Member] = i
				}
			case PhaseAfter:
				if j, ok := lastAfter[sc.Member]; !ok || scrapeAt(sc).After(scrapeAt(out[j])) {
					lastAfter[sc.Member] = i
				}
			}
		}
	}
	for i := range out {
		m := out[i].Member
		switch out[i].Phase {
		case PhaseBefore:
			if firstBefore[m] != i {
				out[i].Phase = PhaseDuring
			}
		case PhaseAfter:
			if lastAfter[m] != i {
				out[i].Phase = PhaseDuring
			}
		}
	}
	// Time order, members interleaved, as one Scraper writes them.
	slices.SortStableFunc(out, func(a, b Scrape) int { return scrapeAt(a).Compare(scrapeAt(b)) })
	return out
}

// scrapeAt is when a scrape was taken; the zero time when Time does not parse
// (RFC 3339 strings with trimmed fractions do not sort as text).
func scrapeAt(sc Scrape) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, sc.Time)
	return t
}

// rateShortfall says why the merged run missed its summed target rate, or "".
func rateShortfall(r *Run) string {
	// Like one run's rule: requests sent and completed, errors too.
	p := r.Paced()
	target, achieved := p.TargetRPS, p.SentRPS
	// Each worker checked its own rate; this catches workers that did not start together.
	if target == 0 || RateKept(achieved, target) {
		return ""
	}
	return fmt.Sprintf("sent %.0f req/s of %.0f target (%.0f%%) over the union of the workers' windows: did they start together (--start-at)?",
		achieved, target, 100*achieved/target)
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
