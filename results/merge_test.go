package results

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// mergeSample is one request of the synthetic stream: when it completed and how long it took.
type mergeSample struct {
	done     time.Time
	resp, sv int64 // µs
	failed   bool
}

// sampleStream is a seeded stream of requests over 10 s: log-normal latencies from
// a few µs to seconds, so many buckets of every magnitude are used.
func sampleStream(n int) []mergeSample {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Unix(1_800_000_000, 250_000_000) // not on a second boundary
	out := make([]mergeSample, n)
	for i := range out {
		resp := int64(200 * (1 + rng.ExpFloat64()*rng.ExpFloat64()*rng.ExpFloat64()*50))
		out[i] = mergeSample{
			done:   t0.Add(time.Duration(i) * 10 * time.Second / time.Duration(n)),
			resp:   min(resp, HistMaxUs),
			sv:     max(resp/2, HistMinUs),
			failed: rng.IntN(100) == 0,
		}
	}
	return out
}

// workerRun builds the run file one worker would write for its samples, as bench's
// recorder does: whole-window histograms and one interval per wall-clock second.
func workerRun(t *testing.T, samples []mergeSample, index, workers int, start, end time.Time) *Run {
	t.Helper()
	resp, svc := NewHist(), NewHist()
	type sec struct {
		req, errs int64
		resp, svc *hdr.Histogram
	}
	secs := map[int64]*sec{}
	var errs int64
	var ok Moments
	for _, s := range samples {
		if !s.failed {
			ok.Add(time.Duration(s.sv)*time.Microsecond + time.Duration(s.resp%997))
		}
		resp.RecordValue(s.resp)
		svc.RecordValue(s.sv)
		k := s.done.Unix()
		if secs[k] == nil {
			secs[k] = &sec{resp: NewHist(), svc: NewHist()}
		}
		secs[k].req++
		secs[k].resp.RecordValue(s.resp)
		secs[k].svc.RecordValue(s.sv)
		if s.failed {
			errs++
			secs[k].errs++
		}
	}
	op := Op{Op: "put", Requests: int64(len(samples)), Errors: errs, TargetRPS: 250, LateStarts: 1,
		ResponseHist: enc(t, resp), ServiceHist: enc(t, svc), Latency: Summarize(resp), BytesSent: int64(len(samples)) * 264,
		ServiceOK: &ok, Unsent: 2, OverMaxLatency: 1}
	if errs > 0 {
		op.ErrorsByCode = map[string]int64{"Unavailable": errs}
	}
	for k := start.Unix(); k <= end.Unix(); k++ {
		iv := Interval{Start: time.Unix(k, 0).UTC()}
		if s := secs[k]; s != nil {
			iv.Requests, iv.Errors, iv.Response, iv.Service = s.req, s.errs, enc(t, s.resp), enc(t, s.svc)
		}
		op.Intervals = append(op.Intervals, iv)
	}
	return &Run{
		Version: Version, Command: "bench put", StartedAt: start, EndedAt: end, DurationS: end.Sub(start).Seconds(),
		Target: ClusterInfo{Endpoints: []string{fmt.Sprintf("https://10.0.0.%d:2379", index%2+1)}, ClusterID: "cdf818194e3a8c32"},
		Flags: map[string]string{
			"workers": fmt.Sprint(workers), "worker-index": fmt.Sprint(index), "rate": "250", "val-size": "256",
			"start-at": "2027-01-15T08:00:00Z", "run-file": fmt.Sprintf("/results/w%d.json", index),
		},
		Valid:  true,
		Ops:    []Op{op},
		Client: Client{CPUSeconds: 1.5, Cores: 2, MaxRSSBytes: int64(index+1) << 20, Transport: "lean"},
	}
}

func enc(t *testing.T, h *hdr.Histogram) Hist {
	t.Helper()
	x, err := EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func dec(t *testing.T, x Hist) *hdr.Histogram {
	t.Helper()
	h, err := x.Decode()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestMergeExact: 4 worker run files cut from one sample stream merge into exactly
// the histogram one recorder fed every sample would hold, bucket by bucket, for the
// whole window and for every second.
func TestMergeExact(t *testing.T) {
	stream := sampleStream(40_000)
	start, end := stream[0].done, stream[len(stream)-1].done
	const workers = 4
	parts := make([][]mergeSample, workers)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range stream {
		i := rng.IntN(workers)
		parts[i] = append(parts[i], s)
	}
	dir := t.TempDir()
	var runs []*Run
	var names []string
	for i, p := range parts {
		// Through the file format, as merge reads them.
		path := filepath.Join(dir, fmt.Sprintf("w%d.json", i))
		if err := WriteFile(path, workerRun(t, p, i, workers, start, end)); err != nil {
			t.Fatal(err)
		}
		r, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		runs, names = append(runs, r), append(names, path)
	}
	merged, err := Merge(runs, names)
	if err != nil {
		t.Fatal(err)
	}
	whole := workerRun(t, stream, 0, 1, start, end)

	got, want := merged.Ops[0], whole.Ops[0]
	assertSameBuckets(t, "whole-window response", dec(t, got.ResponseHist), dec(t, want.ResponseHist))
	assertSameBuckets(t, "whole-window service", dec(t, got.ServiceHist), dec(t, want.ServiceHist))
	if got.Latency != want.Latency {
		t.Errorf("percentiles differ:\n merged %+v\n whole  %+v", got.Latency, want.Latency)
	}
	if got.Requests != want.Requests || got.Errors != want.Errors || got.ErrorsByCode["Unavailable"] != want.Errors {
		t.Errorf("counts: merged %d req %d err %v, whole %d req %d err", got.Requests, got.Errors, got.ErrorsByCode, want.Requests, want.Errors)
	}
	if len(got.Intervals) != len(want.Intervals) {
		t.Fatalf("intervals: merged %d, whole %d", len(got.Intervals), len(want.Intervals))
	}
	for i := range got.Intervals {
		g, w := got.Intervals[i], want.Intervals[i]
		if !g.Start.Equal(w.Start) || g.Requests != w.Requests || g.Errors != w.Errors {
			t.Errorf("interval %d: merged %s %d req %d err, whole %s %d req %d err", i, g.Start, g.Requests, g.Errors, w.Start, w.Requests, w.Errors)
		}
		assertSameBuckets(t, "interval "+g.Start.Format(time.TimeOnly), dec(t, g.Response), dec(t, w.Response))
	}
	t.Logf("merged %d samples from %d workers: p50 %.3f ms p99 %.3f ms p99.9 %.3f ms max %.3f ms, %d intervals, buckets identical",
		got.Requests, workers, got.Latency.P50, got.Latency.P99, got.Latency.P999, got.Latency.Max, len(got.Intervals))

	if got.ServiceOK == nil || *got.ServiceOK != *want.ServiceOK {
		t.Errorf("exact service figures: merged %+v, whole %+v", got.ServiceOK, want.ServiceOK)
	} else if got.ServiceOK.StddevMs() != want.ServiceOK.StddevMs() || got.ServiceOK.MaxMs() != want.ServiceOK.MaxMs() {
		t.Errorf("exact stddev/max: merged %g/%g, whole %g/%g", got.ServiceOK.StddevMs(), got.ServiceOK.MaxMs(), want.ServiceOK.StddevMs(), want.ServiceOK.MaxMs())
	}
	if got.Unsent != 4*2 || got.OverMaxLatency != 4 {
		t.Errorf("unsent %d, over 60 s %d: summed over the workers", got.Unsent, got.OverMaxLatency)
	}
	if got.TargetRPS != 1000 || got.LateStarts != 4 || got.BytesSent != want.BytesSent {
		t.Errorf("sums: target %g late %d bytes %d", got.TargetRPS, got.LateStarts, got.BytesSent)
	}
	if wantRPS := float64(got.Requests-got.Errors) / end.Sub(start).Seconds(); got.ThroughputRPS != wantRPS {
		t.Errorf("throughput %g, want %g over the union window", got.ThroughputRPS, wantRPS)
	}
	if merged.Client.CPUSeconds != 6 || merged.Client.Cores != 8 || merged.Client.MaxRSSBytes != 4<<20 {
		t.Errorf("client: %+v", merged.Client)
	}
	if merged.Flags["rate"] != "1000" || merged.Flags["workers"] != "4" || merged.Flags["val-size"] != "256" {
		t.Errorf("flags: %v", merged.Flags)
	}
	if _, ok := merged.Flags["worker-index"]; ok {
		t.Errorf("merged run keeps a worker's index: %v", merged.Flags)
	}
	if len(merged.Target.Endpoints) != 2 {
		t.Errorf("endpoints not the union of the workers': %v", merged.Target.Endpoints)
	}
}

// assertSameBuckets compares two histograms count by count.
func assertSameBuckets(t *testing.T, what string, got, want *hdr.Histogram) {
	t.Helper()
	g, w := got.Export(), want.Export()
	if got.TotalCount() != want.TotalCount() || !slices.Equal(trimZeros(g.Counts), trimZeros(w.Counts)) {
		t.Errorf("%s: bucket counts differ (total %d vs %d)", what, got.TotalCount(), want.TotalCount())
	}
}

func trimZeros(c []int64) []int64 {
	for len(c) > 0 && c[len(c)-1] == 0 {
		c = c[:len(c)-1]
	}
	return c
}

func TestMergeUnionWindowAndValidity(t *testing.T) {
	stream := sampleStream(1000)
	t0 := stream[0].done
	a := workerRun(t, stream[:500], 0, 2, t0, t0.Add(10*time.Second))
	// Worker 1 started 10 s late: each run kept its rate, together they did not.
	b := workerRun(t, stream[500:], 1, 2, t0.Add(10*time.Second), t0.Add(20*time.Second))
	m, err := Merge([]*Run{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.DurationS != 20 || !m.StartedAt.Equal(t0) || !m.EndedAt.Equal(t0.Add(20*time.Second)) {
		t.Errorf("window: %gs from %s to %s", m.DurationS, m.StartedAt, m.EndedAt)
	}
	if m.Valid || !strings.Contains(m.InvalidReason, "start together") {
		t.Errorf("late worker not caught: valid %v %q", m.Valid, m.InvalidReason)
	}

	b = workerRun(t, stream[500:], 1, 2, t0, t0.Add(10*time.Second))
	b.Valid, b.InvalidReason = false, "achieved 100 req/s of 250 target (40%)"
	m, err = Merge([]*Run{a, b}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Valid || m.InvalidReason != "b.json: achieved 100 req/s of 250 target (40%)" {
		t.Errorf("one invalid worker must invalidate the merge: %v %q", m.Valid, m.InvalidReason)
	}
}

// TestMergeKeepsConditions: the merged run keeps what the verdict grades it
// by beside the load: the median worker's round trips, the most contended
// host's pressure, every alarm.
func TestMergeKeepsConditions(t *testing.T) {
	stream := sampleStream(900)
	t0 := stream[0].done
	f := func(v float64) *float64 { return &v }
	var runs []*Run
	for i, rtt := range []float64{0.4, 3, 0.2} {
		r := workerRun(t, stream[i*300:(i+1)*300], i, 3, t0, t0.Add(10*time.Second))
		r.Network = &Network{PingRTTMs: rtt, Endpoints: []EndpointRound{{Endpoint: fmt.Sprint(i), ReadMs: 1}}}
		r.HostCPUPressure, r.HostCPUBusy = f(0.1*float64(i+1)), f(0.2*float64(i+1))
		r.Alarms = []Alarm{}
		runs = append(runs, r)
	}
	runs[2].Alarms = []Alarm{{Member: "m1", Type: "NOSPACE"}}
	runs[1].HostCPUPressure = nil
	m, err := Merge(runs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Network == nil || m.Network.PingRTTMs != 0.4 || m.Network.Endpoints[0].Endpoint != "0" {
		t.Errorf("network %+v, want the median worker's (0.4 ms, its endpoints)", m.Network)
	}
	near := func(p *float64, v float64) bool { return p != nil && math.Abs(*p-v) < 1e-9 }
	if !near(m.HostCPUPressure, 0.3) || !near(m.HostCPUBusy, 0.6) {
		t.Errorf("pressure %v busy %v, want the most contended host's", m.HostCPUPressure, m.HostCPUBusy)
	}
	if len(m.Alarms) != 1 || m.Alarms[0].Type != "NOSPACE" {
		t.Errorf("alarms %v, want the one a worker read", m.Alarms)
	}
}

func TestMergeRefusesUnlikeRuns(t *testing.T) {
	stream := sampleStream(100)
	t0, t1 := stream[0].done, stream[99].done
	mk := func(i int) *Run { return workerRun(t, stream, i, 2, t0, t1) }
	cases := []struct {
		name  string
		edit  func(r *Run)
		match string
	}{
		{"cluster", func(r *Run) { r.Target.ClusterID = "aaaa" }, `cluster ID "cdf818194e3a8c32" vs "aaaa"`},
		{"command", func(r *Run) { r.Command = "bench range" }, `command "bench put" vs "bench range"`},
		{"ops", func(r *Run) { r.Ops = append(r.Ops, Op{Op: "range"}) }, "ops [put] vs [put range]"},
		{"value size", func(r *Run) { r.Flags["val-size"] = "1024" }, `--val-size "256" vs "1024"`},
		{"flag set on one only", func(r *Run) { r.Flags["clients"] = "100" }, `--clients unset vs "100"`},
		{"worker count", func(r *Run) { r.Flags["workers"] = "3" }, `--workers "2" vs "3"`},
		{"same worker twice", func(r *Run) { r.Flags["worker-index"] = "0" }, "both worker 0"},
		{"transport", func(r *Run) { r.Client.Transport = "grpc" }, `transport "lean" vs "grpc"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := mk(1)
			c.edit(b)
			_, err := Merge([]*Run{mk(0), b}, []string{"a.json", "b.json"})
			if !errors.Is(err, ErrUnlike) || !strings.Contains(err.Error(), c.match) || !strings.Contains(err.Error(), "a.json") {
				t.Errorf("got %v, want ErrUnlike naming a.json and %q", err, c.match)
			}
		})
	}
	// What may differ between workers: their endpoints, rate share, files.
	b := mk(1)
	b.Flags["endpoints"], b.Flags["rate"], b.Flags["prefix"] = "https://other:2379", "300", "/etcdperf/w1/"
	b.Flags["transport"] = "lean" // the default, given on one worker only
	if m, err := Merge([]*Run{mk(0), b}, nil); err != nil {
		t.Errorf("per-worker flags refused: %v", err)
	} else if m.Client.Transport != "lean" {
		t.Errorf("merged transport %q, want the workers' lean", m.Client.Transport)
	}
}

func TestMergeScrapes(t *testing.T) {
	stream := sampleStream(100)
	t0, t1 := stream[0].done, stream[99].done
	at := func(s float64) string {
		return t0.Add(time.Duration(s * float64(time.Second))).UTC().Format(time.RFC3339Nano)
	}
	a, b := workerRun(t, stream, 0, 2, t0, t1), workerRun(t, stream, 1, 2, t0, t1)
	a.Scrapes = []Scrape{
		{Member: "m0", Phase: PhaseBefore, Time: at(0.1)},
		{Member: "m0", Phase: PhaseDuring, Time: at(5)},
		{Member: "m0", Phase: PhaseAfter, Time: at(10.12)},
	}
	b.Scrapes = []Scrape{
		{Member: "m0", Phase: PhaseBefore, Time: at(0.12)},
		{Member: "m0", Phase: PhaseDuring, Time: at(5)}, // the same scrape, recorded by both
		{Member: "m0", Phase: PhaseAfter, Time: at(10.1)},
	}
	m, err := Merge([]*Run{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sc := range m.Scrapes {
		got = append(got, sc.Phase+"@"+sc.Time[17:])
	}
	want := []string{"before@00.35Z", "during@00.37Z", "during@05.25Z", "during@10.35Z", "after@10.37Z"}
	if !slices.Equal(got, want) {
		t.Errorf("scrapes:\n got  %v\n want %v", got, want)
	}
}

// TestMergeTagsEveryField: every field of the structs Merge sums is summed, or
// tagged with how else it merges; a new field that is neither panics here.
func TestMergeTagsEveryField(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatal(r)
		}
	}()
	addFigures(&Op{}, Op{})
	addFigures(&Client{}, Client{})
}

// TestMergeRefusesAnUntaggedField: a field of a kind addFigures does not sum,
// untagged, panics with its name.
func TestMergeRefusesAnUntaggedField(t *testing.T) {
	type figures struct {
		N    int64
		Name string
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "figures.Name") {
			t.Errorf("recovered %v, want a panic naming figures.Name", r)
		}
	}()
	addFigures(&figures{}, figures{N: 1})
}
