package truth

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/internal/stats"
	"github.com/etcdperf/etcdperf/results"
)

var (
	runMatrix = flag.Bool("truth", false, "run the scenario matrix (make truth)")
	binFlag   = flag.String("etcdperf", "", "the etcdperf binary to measure with (default: built from ./cmd/etcdperf)")
	only      = flag.String("only", "", "run only these rows: comma-separated names, globs (cpu/*/quota=0.10) or name prefixes up to a slash (disk, disk/3m); -list prints the names")
	list      = flag.Bool("list", false, "print the rows (name, fault, expected class and status) and run none")
	keepDir   = flag.String("keep", "", "write each run's run file under this folder, one subfolder per row and attempt, to re-read with analyze -v")
	recordDir = flag.String("record", "", "write each scenario's /metrics pair of the graded member here (fixtures for analyze's unit tests)")
)

// Judging knobs. They describe the matrix, not the machine or a rule.
const (
	// pairs is how many runs a mild row makes, each right after a run of its
	// baseline (baseline, fault, baseline, fault): interleaved, so that a drift
	// of the machine weighs on both alike.
	pairs = 2
	// alpha is the significance at which the Mann-Whitney test on the
	// per-second client p99s calls a mild fault's effect real (docs/truth.md).
	alpha = 0.01
	// minEffectMs is the smallest per-second p99 rise that counts as an effect:
	// the first bound of etcd's own latency histograms (WAL fsync, backend
	// commit: 1 ms). A smaller rise is under what any member's histogram can
	// attribute, so no verdict can name its cause (docs/truth.md).
	minEffectMs = 1.0
)

// outcome is what one run of a scenario said.
type outcome struct {
	sc         *scenario
	status     finding.Status
	bottleneck string
	ranked     []string
	risks      []string
	bad        map[finding.Class]finding.Severity // classes at warn or fail
	summary    string
	skipped    string
	err        string // why the run or its re-analysis is wrong beside the verdict itself
	// pressure is the host's CPU pressure over the measured window (PSI some
	// share, from the run file); -1 unknown. Printed, never an excuse.
	pressure float64
	// p99 is the client p99 (ms) of the run's first op, and perSecond that op's
	// p99 in each second of the measured window.
	p99       float64
	perSecond []float64
}

// row is one scenario's runs: once, or pairs times beside as many runs of its
// baseline for a mild row, and the test of the fault's effect they make.
type row struct {
	sc     *scenario
	runs   []*outcome
	bases  []*outcome // a mild row's baseline runs, interleaved with runs
	effect *effect    // a mild row's: nil until both sides ran
	wall   time.Duration
}

// effect is the Mann-Whitney test of a mild fault's per-second client p99s
// against its baseline's: p, and the Hodges-Lehmann shift (ms) with the
// baseline's median per-second p99 it is a share of.
type effect struct {
	p, shiftMs, baseMs float64
	n, m               int // seconds of the baseline, of the fault
}

// found: the fault raised what clients see, beyond noise at alpha and by at
// least minEffectMs.
func (e *effect) found() bool { return e.p < alpha && e.shiftMs >= minEffectMs }

func (e *effect) String() string {
	word := "no effect"
	if e.found() {
		word = "an effect"
	}
	rel := ""
	if e.baseMs > 0 {
		rel = fmt.Sprintf(" (%+.0f%%)", 100*e.shiftMs/e.baseMs)
	}
	return fmt.Sprintf("per-second p99 shift %+.2f ms%s over %d+%d s, Mann-Whitney p=%.3g: %s", e.shiftMs, rel, e.n, e.m, e.p, word)
}

// measureEffect tests the runs' per-second p99s against the baselines'.
func measureEffect(bases, runs []*outcome) *effect {
	var a, b []float64
	for _, o := range bases {
		a = append(a, o.perSecond...)
	}
	for _, o := range runs {
		b = append(b, o.perSecond...)
	}
	if len(a) < 2 || len(b) < 2 {
		return nil
	}
	p, _ := stats.MannWhitney(a, b)
	return &effect{p: p, shiftMs: stats.Shift(a, b), baseMs: stats.Median(a), n: len(a), m: len(b)}
}

// judge says whether the row is right: every one of its runs, and every run of
// its baseline, judged by the same rule. A row right in some runs and wrong in
// others (a split vote) is a miss: the gate fails when the verdict is wrong,
// and a verdict that comes out two ways is wrong one of them.
func (r *row) judge() (ok bool, why string, alarms []string) {
	for i, b := range r.bases {
		if ok, why, al := b.judge(nil); !ok {
			return false, fmt.Sprintf("its baseline's run %d (%s, %s): %s", i+1, b.bottleneck, b.status, why), al
		}
	}
	if r.sc.mild && r.effect == nil && r.skipped() == "" {
		return false, "a mild row needs its baseline's per-second p99s to judge a none", nil
	}
	right := 0
	for _, o := range r.runs {
		ok, w, al := o.judge(r.effect)
		if ok {
			right++
			continue
		}
		if why == "" {
			why, alarms = w, al
		}
	}
	if right == len(r.runs) {
		return true, "", nil
	}
	if right > 0 {
		why = fmt.Sprintf("split: right in %d of %d runs; %s", right, len(r.runs), why)
	}
	return false, why, alarms
}

func (r *row) skipped() string {
	if len(r.runs) > 0 {
		return r.runs[0].skipped
	}
	return ""
}

// agreed counts the runs whose verdict (bottleneck and status) is the first run's.
func (r *row) agreed() int {
	n := 0
	for _, o := range r.runs {
		if o.bottleneck == r.runs[0].bottleneck && o.status == r.runs[0].status {
			n++
		}
	}
	return n
}

// miss adds a reason the run is wrong beside its verdict.
func (o *outcome) miss(why string) {
	if o.err != "" {
		o.err += "; "
	}
	o.err += why
}

// verdictOut is the part of etcdperf's JSON output the matrix reads.
type verdictOut struct {
	Verdict  finding.Verdict   `json:"verdict"`
	Findings []finding.Finding `json:"findings"`
	RunFile  string            `json:"run_file"`
	Ops      []struct {
		Op      string `json:"op"`
		Latency struct {
			P99 float64 `json:"p99"`
		} `json:"latency_ms"`
	} `json:"ops"`
}

// judge says whether one run is right, why not, and which of its grades are
// false alarms.
//
//   - A baseline must pass with bottleneck none and no class at warn or fail.
//   - A fault must be named as the bottleneck with the status its intensity calls
//     for (pass: the class at warn; fail), with the second class the row names
//     ranked after it, if any.
//   - A fault that cannot slow the clients (a slow follower of 3) must be named
//     a risk: bottleneck none, pass, the class among the verdict's risks.
//   - "none" is right for a mild fault only where the row's effect test found
//     no effect on the clients' per-second p99 (see effect).
//   - A fail of any class other than the expected one is a false alarm, except
//     cluster context (health, version) and the classes a fault really loads
//     (consequences, and a row's loads).
//   - The run's re-analysis (analyze RUNFILE) must agree with the run, and a
//     skip is a miss where the machine has the fault's feature.
func (o *outcome) judge(eff *effect) (ok bool, why string, alarms []string) {
	sc := o.sc
	if o.err != "" {
		return false, o.err, nil
	}
	if o.skipped != "" {
		return true, "", nil // allowed: the run function checked the feature is missing
	}
	if sc.class == "" {
		for c, s := range o.bad {
			alarms = append(alarms, fmt.Sprintf("%s %s", c, s))
		}
		sort.Strings(alarms)
		if o.status != finding.StatusPass || o.bottleneck != finding.BottleneckNone || len(alarms) > 0 {
			return false, "a baseline must pass with bottleneck none and no warning", alarms
		}
		return true, "", nil
	}
	for c, s := range o.bad {
		if s == finding.Fail && c != sc.class && c != sc.also && c != sc.loads && !c.Context() && !consequence(sc.class, c) {
			alarms = append(alarms, fmt.Sprintf("%s fail", c))
		}
	}
	sort.Strings(alarms)
	if len(alarms) > 0 {
		return false, "false alarms", alarms
	}
	if sc.mild && o.bottleneck == finding.BottleneckNone && o.status == finding.StatusPass && len(o.bad) == 0 {
		switch {
		case eff == nil:
			return false, "none for a mild fault, and no baseline to test its effect against", nil
		case eff.found():
			return false, "none, but the fault raised the clients' latency: " + eff.String(), nil
		}
		return true, "", nil
	}
	if sc.risk {
		if o.bottleneck != finding.BottleneckNone || o.status != finding.StatusPass || !slices.Contains(o.risks, string(sc.class)) {
			return false, fmt.Sprintf("expected none (pass) with %s a risk, risks %v", sc.class, o.risks), nil
		}
		return true, "", nil
	}
	if o.bottleneck != string(sc.class) || o.status != sc.wantStatus() {
		return false, fmt.Sprintf("expected %s (%s)", sc.class, sc.wantStatus()), nil
	}
	if sc.also != "" && !slices.Contains(o.ranked, string(sc.also)) {
		return false, fmt.Sprintf("expected %s ranked after %s (also), ranked %v", sc.also, sc.class, o.ranked), nil
	}
	return true, "", nil
}

// consequences are the classes a fault of one class really loads, so that their
// failing too is no false alarm: large values make the WAL write (and replicate)
// megabytes per request, wide ranges cost the member CPU to serialise, a starved
// CPU inflates fsync timings (the analyzer caps those itself, see adjust.go), and
// memory pressure evicts the page cache the disk reads from. The verdict must
// still name the fault's own class first.
var consequences = map[finding.Class][]finding.Class{
	finding.ClassValueSize: {finding.ClassDisk, finding.ClassNetwork, finding.ClassMemory},
	finding.ClassRangeSize: {finding.ClassCPU},
	finding.ClassCPU:       {finding.ClassDisk},
	finding.ClassMemory:    {finding.ClassDisk},
}

func consequence(fault, c finding.Class) bool {
	return slices.Contains(consequences[fault], c)
}

// selected are the rows -only names, or an error naming what matched nothing.
func selected(all []*scenario, spec string) ([]*scenario, error) {
	if spec == "" {
		return all, nil
	}
	var out []*scenario
	for _, pat := range strings.Split(spec, ",") {
		pat = strings.TrimSpace(pat)
		n := 0
		for _, sc := range all {
			if matches(pat, sc.name) && !slices.Contains(out, sc) {
				out, n = append(out, sc), n+1
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("-only %q matches no row (-list prints them)", pat)
		}
	}
	return out, nil
}

// matches: the exact name, a glob, or a prefix up to a slash ("disk/3m").
func matches(pat, name string) bool {
	if pat == name || strings.HasPrefix(name, strings.TrimSuffix(pat, "/")+"/") {
		return true
	}
	ok, _ := path.Match(pat, name)
	return ok
}

// TestMatrix runs the scenarios and prints the confusion table. Rows that load
// the machine run one after the other (they share its two cores); light rows run
// two at a time afterwards, each on a loop device of its own.
func TestMatrix(t *testing.T) {
	if !*runMatrix {
		t.Skip("the scenario matrix runs with -truth (make truth)")
	}
	all, err := selected(scenarios(), *only)
	if err != nil {
		t.Fatal(err)
	}
	if *list {
		printRows(os.Stdout, all)
		return
	}
	if os.Geteuid() != 0 {
		t.Fatalf("make truth needs root (loop devices, mounts, cgroups, network namespaces); running as uid %d", os.Geteuid())
	}
	if err := faults.LoopDevices(); err != nil {
		t.Fatalf("the matrix keeps its data on a loop device: %v", err)
	}
	// Asked for and able to run, the matrix must not skip as a whole (a helper
	// that cannot attach or mount its loop device skips).
	defer func() {
		if t.Skipped() {
			t.Error("the matrix skipped although -truth asked for it and this machine has loop devices")
		}
	}()
	h := newHarness(t)
	start := time.Now()
	var rows []*row
	var mu sync.Mutex
	runRow := func(t *testing.T, sc *scenario) {
		r := &row{sc: sc}
		mu.Lock()
		rows = append(rows, r)
		mu.Unlock()
		began := time.Now()
		h.measure(t, r)
		r.wall = time.Since(began)
		if ok, why, alarms := r.judge(); !ok {
			last := r.runs[len(r.runs)-1]
			t.Errorf("MISS: %s; named %s (%s), ranked %v; false alarms %v: %s", why, last.bottleneck, last.status, last.ranked, alarms, last.summary)
		}
	}
	for _, sc := range all {
		if !sc.light {
			t.Run(sc.name, func(t *testing.T) { runRow(t, sc) })
		}
	}
	t.Run("light", func(t *testing.T) {
		for _, sc := range all {
			if sc.light {
				t.Run(sc.name, func(t *testing.T) { t.Parallel(); runRow(t, sc) })
			}
		}
	})
	sort.SliceStable(rows, func(i, j int) bool { return index(all, rows[i].sc) < index(all, rows[j].sc) })
	if misses := report(os.Stdout, rows, time.Since(start)); misses > 0 {
		t.Errorf("%d of %d rows missed (see the table above)", misses, len(rows))
	}
}

func index(all []*scenario, sc *scenario) int { return slices.Index(all, sc) }

// harness holds what every scenario shares.
type harness struct {
	bin string
	// loops hold the data dirs: memory-backed ext4s, fast and steady, so only a
	// fault is slow; one per row running at a time.
	loops chan *faults.Loop
	mu    sync.Mutex
	n     int
}

func newHarness(t *testing.T) *harness {
	h := &harness{bin: *binFlag, loops: make(chan *faults.Loop, 2)}
	if h.bin == "" {
		h.bin = filepath.Join(t.TempDir(), "etcdperf")
		out, err := exec.Command("go", "build", "-o", h.bin, "../../cmd/etcdperf").CombinedOutput()
		if err != nil {
			t.Fatalf("build etcdperf: %v: %s", err, out)
		}
	}
	for range cap(h.loops) {
		h.loops <- faults.NewLoopExt4(t, 2<<30)
	}
	return h
}

// dir is a fresh folder on loop.
func (h *harness) dir(t *testing.T, loop *faults.Loop) string {
	h.mu.Lock()
	h.n++
	n := h.n
	h.mu.Unlock()
	d := filepath.Join(loop.Mount, fmt.Sprintf("s%03d", n))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// measure runs the row: once, or for a mild row pairs times, each right after
// a run of its baseline. No run is repeated: a miss on a busy host is a miss,
// and the host's CPU pressure is printed beside it. A skip is a miss where the
// machine has the fault's feature.
func (h *harness) measure(t *testing.T, r *row) {
	sc := r.sc
	n := 1
	if sc.mild {
		n = pairs
	}
	for i := range n {
		if sc.mild {
			b := h.once(t, sc.base, fmt.Sprintf("baseline%d", i+1))
			t.Logf("baseline %s: client p99 %.2f ms (%s, %s)", sc.base.name, b.p99, b.bottleneck, b.status)
			r.bases = append(r.bases, b)
		}
		o := h.once(t, sc, fmt.Sprintf("run%d", i+1))
		r.runs = append(r.runs, o)
		if o.skipped != "" {
			if err := sc.needs()(); err == nil {
				o.err = "skipped although this machine has the fault's feature: " + o.skipped
			} else {
				o.skipped = fmt.Sprintf("%s (the machine lacks it: %v)", o.skipped, err)
			}
			return
		}
	}
	if sc.mild {
		r.effect = measureEffect(r.bases, r.runs)
		if r.effect != nil {
			t.Logf("%s against %s: %s", sc.name, sc.base.name, r.effect)
		}
	}
}

// once runs sc as the subtest name and returns what it said.
func (h *harness) once(t *testing.T, sc *scenario, name string) *outcome {
	o := &outcome{sc: sc, pressure: -1}
	var skipped bool
	passed := t.Run(name, func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		h.run(t, o, sc)
	})
	if !passed && o.err == "" {
		o.err = "the scenario failed before its verdict (see the log)"
	}
	if skipped && o.skipped == "" {
		o.skipped = "a fault helper skipped it (see the log)"
	}
	return o
}

// run prepares the scenario's target and fault, measures it with the etcdperf
// binary, records its verdict and re-analyzes its run file.
func (h *harness) run(t *testing.T, o *outcome, sc *scenario) {
	loop := <-h.loops
	defer func() { h.loops <- loop }()
	env := &runEnv{t: t, h: h, loop: loop, dataDir: h.dir(t, loop)}
	defer env.close()
	args := append([]string{}, sc.args...)
	if sc.setup != nil {
		extra, skip := sc.setup(env)
		if skip != "" {
			o.skipped = skip
			return
		}
		if env.unmade != "" {
			// A fault that could not be made at its size is a miss of the row.
			o.err = env.unmade
			o.status, o.bottleneck = "error", "error"
			t.Log(o.err)
			return
		}
		args = append(args, extra...)
	} else {
		// The embedded etcd's data dir is on the row's loop device too, not on
		// the host's disk, which the rest of the machine writes to as well.
		args = append(args, "--data-dir", filepath.Join(env.dataDir, "embedded"))
	}
	resultsDir := t.TempDir()
	if *keepDir != "" {
		resultsDir = filepath.Join(*keepDir, strings.ReplaceAll(t.Name(), "/", "_"))
	}
	args = append(args, "-w", "json", "--results-dir", resultsDir)
	out, code, err := h.etcdperf(env.dataDir, args)
	if err != nil {
		o.err = err.Error()
		o.status, o.bottleneck = "error", "error"
		t.Error(o.err)
		return
	}
	if len(out.Ops) > 0 {
		o.p99 = out.Ops[0].Latency.P99
	}
	run, err := results.ReadFile(out.RunFile)
	if err != nil {
		o.err = "read the run file: " + err.Error()
		return
	}
	if run.HostCPUPressure != nil {
		o.pressure = *run.HostCPUPressure
	}
	if len(run.Ops) > 0 {
		if o.perSecond, err = perSecondP99(&run.Ops[0]); err != nil {
			o.miss(err.Error())
		}
	}
	t.Logf("etcdperf %s → exit %d (host CPU pressure %.0f%%, p99 %.2f ms): %s", strings.Join(args, " "), code, o.pressure*100, o.p99, out.Verdict.Summary)
	// Every verdict must be what analyze makes of the run file the run wrote.
	again, _, err := h.etcdperf(env.dataDir, []string{"analyze", out.RunFile, "-w", "json"})
	if err != nil {
		o.miss("re-analysis: " + err.Error())
	} else if d := disagreement(out, again); d != "" {
		o.miss("analyze RUNFILE disagrees with the run: " + d)
	}
	graded := out
	if env.prom != "" {
		// Graded as a user of a Prometheus would: the run file's window, its scrapes
		// replaced by what Prometheus holds of the member and its host. Wait until
		// Prometheus has scraped past the run's end.
		time.Sleep(3 * time.Second)
		p, _, err := h.etcdperf(env.dataDir, []string{"analyze", out.RunFile, "--prometheus", env.prom, "--selector", `job="etcd"`, "-w", "json"})
		if err != nil {
			o.err = "analyze --prometheus: " + err.Error()
			return
		}
		t.Logf("analyze --prometheus %s: %s", env.prom, p.Verdict.Summary)
		graded = p
	}
	o.read(graded)
	logBad(t, graded)
	if *recordDir != "" && out.RunFile != "" {
		if err := record(*recordDir, sc, out.RunFile, env.graded); err != nil {
			t.Logf("record fixtures: %v", err)
		}
	}
}

// logBad logs the evidence graded warn or fail, so that a miss in a fresh
// clone, whose run files are gone with its temp dir, can be read from its log.
func logBad(t *testing.T, v *verdictOut) {
	for _, f := range v.Findings {
		for _, e := range f.Evidence {
			if e.Severity.Bad() {
				where := ""
				if e.Member != "" {
					where = " on " + strings.TrimSpace(e.MemberName+" "+e.Member+" "+e.Role)
				}
				t.Logf("  %s %s: %s%s: %s", e.Severity, f.Class, e.Signal, where, e.Observed)
			}
		}
	}
}

// perSecondP99 is op's client p99 (ms) in each second of the measured window
// that saw a request.
func perSecondP99(op *results.Op) ([]float64, error) {
	var out []float64
	for _, iv := range op.Intervals {
		h, err := iv.Response.Decode()
		if err != nil {
			return nil, fmt.Errorf("op %s: an interval's histogram: %w", op.Op, err)
		}
		if h.TotalCount() > 0 {
			out = append(out, float64(h.ValueAtQuantile(99))/1000)
		}
	}
	return out, nil
}

// read takes the verdict and grades of out.
func (o *outcome) read(out *verdictOut) {
	o.status, o.bottleneck, o.summary, o.ranked, o.risks = out.Verdict.Status, out.Verdict.Bottleneck, out.Verdict.Summary, out.Verdict.Ranked, out.Verdict.Risks
	o.bad = map[finding.Class]finding.Severity{}
	for c, s := range severities(out.Findings) {
		if s.Bad() {
			o.bad[c] = s
		}
	}
}

// severities is each class's worst grade.
func severities(fs []finding.Finding) map[finding.Class]finding.Severity {
	m := map[finding.Class]finding.Severity{}
	for _, f := range fs {
		if s, ok := m[f.Class]; !ok || f.Severity.Rank() > s.Rank() {
			m[f.Class] = f.Severity
		}
	}
	return m
}

// disagreement says how a re-analysis differs from the run's own verdict:
// status, bottleneck, ranked classes and every class's severity; "" when it
// agrees.
func disagreement(run, again *verdictOut) string {
	var d []string
	if run.Verdict.Status != again.Verdict.Status {
		d = append(d, fmt.Sprintf("status %s, analyze %s", run.Verdict.Status, again.Verdict.Status))
	}
	if run.Verdict.Bottleneck != again.Verdict.Bottleneck {
		d = append(d, fmt.Sprintf("bottleneck %s, analyze %s", run.Verdict.Bottleneck, again.Verdict.Bottleneck))
	}
	if !slices.Equal(run.Verdict.Ranked, again.Verdict.Ranked) {
		d = append(d, fmt.Sprintf("ranked %v, analyze %v", run.Verdict.Ranked, again.Verdict.Ranked))
	}
	a, b := severities(run.Findings), severities(again.Findings)
	var classes []string
	for c := range a {
		classes = append(classes, string(c))
	}
	for c := range b {
		if _, ok := a[c]; !ok {
			classes = append(classes, string(c))
		}
	}
	sort.Strings(classes)
	for _, c := range classes {
		if x, y := a[finding.Class(c)], b[finding.Class(c)]; x != y {
			d = append(d, fmt.Sprintf("%s %s, analyze %s", c, orNone(x), orNone(y)))
		}
	}
	return strings.Join(d, "; ")
}

func orNone(s finding.Severity) string {
	if s == "" {
		return "absent"
	}
	return string(s)
}

// etcdperf runs the binary with args and decodes its JSON verdict. The embedded
// default puts its data in a temp dir: on the loop device too.
func (h *harness) etcdperf(tmp string, args []string) (*verdictOut, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	var out verdictOut
	if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil {
		return nil, code, fmt.Errorf("etcdperf %s: exit %d, no JSON verdict: %v; stderr: %s", strings.Join(args, " "), code, jerr, lastLine(stderr.String()))
	}
	return &out, code, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// printRows lists the rows as -list prints them.
func printRows(w io.Writer, all []*scenario) {
	for _, sc := range all {
		fmt.Fprintf(w, "%-40s want %-28s %s\n", sc.name, sc.wantText(), sc.note)
	}
}

// report prints the confusion table, the rows with how many runs each took and
// whether they agreed (the flake figure), the false alarms and the misses, and
// returns the number of rows missed.
func report(w io.Writer, rows []*row, wall time.Duration) int {
	classes := []string{"none"}
	for _, c := range finding.Classes {
		if !c.Context() {
			classes = append(classes, string(c))
		}
	}
	type cell map[string]int // status → count
	table := map[string]map[string]cell{}
	count := func(want string, o *outcome) {
		if table[want] == nil {
			table[want] = map[string]cell{}
		}
		if table[want][o.bottleneck] == nil {
			table[want][o.bottleneck] = cell{}
		}
		table[want][o.bottleneck][string(o.status)]++
	}
	var misses, alarms, skipped []string
	runs, split := 0, 0
	for _, r := range rows {
		if s := r.skipped(); s != "" {
			skipped = append(skipped, r.sc.name+": "+s)
			continue
		}
		for _, o := range r.runs {
			count(r.sc.want(), o)
			runs++
		}
		for _, o := range r.bases {
			count(finding.BottleneckNone, o)
			runs++
		}
		if r.agreed() < len(r.runs) {
			split++
		}
		ok, why, al := r.judge()
		if !ok {
			last := r.runs[len(r.runs)-1]
			misses = append(misses, fmt.Sprintf("%s: want %s, named %s (%s), ranked %v — %s — %s", r.sc.name, r.sc.wantText(), last.bottleneck, last.status, last.ranked, why, last.summary))
		}
		for _, a := range al {
			alarms = append(alarms, r.sc.name+": "+a)
		}
	}
	fmt.Fprintf(w, "\nconfusion table: expected class (rows) → named bottleneck (columns), every run counted (a mild row's baseline runs under none), by verdict status (p pass, f fail, i invalid, e error)\n")
	fmt.Fprintf(w, "%-11s", "expected")
	for _, c := range classes {
		fmt.Fprintf(w, " %-11s", c)
	}
	fmt.Fprintln(w)
	for _, want := range classes {
		row := table[want]
		if row == nil {
			continue
		}
		fmt.Fprintf(w, "%-11s", want)
		for _, c := range classes {
			fmt.Fprintf(w, " %-11s", cellText(row[c]))
		}
		for named := range row { // a name outside the classes (an error)
			if !slices.Contains(classes, named) {
				fmt.Fprintf(w, " %s:%s", named, cellText(row[named]))
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nscenarios (runs: how many the row made, and how many named what the first did; +N baseline runs beside a mild row's)\n")
	for _, r := range rows {
		mark := "ok  "
		if r.skipped() != "" {
			mark = "skip"
		} else if ok, _, _ := r.judge(); !ok {
			mark = "MISS"
		}
		var named []string
		for _, o := range r.runs {
			named = append(named, o.bottleneck+" "+string(o.status))
		}
		extra := fmt.Sprintf("  runs %d, agreed %d/%d", len(r.runs), r.agreed(), len(r.runs))
		if len(r.bases) > 0 {
			var bn []string
			for _, o := range r.bases {
				bn = append(bn, o.bottleneck)
			}
			extra += fmt.Sprintf(" +%d baseline (%s)", len(r.bases), strings.Join(bn, ", "))
		}
		for _, o := range r.runs {
			if o.pressure >= 0.5 {
				extra += fmt.Sprintf("  host CPU pressure %.0f%%", o.pressure*100)
				break
			}
		}
		if r.effect != nil {
			extra += "  " + r.effect.String()
		}
		fmt.Fprintf(w, "  %s %-40s want %-28s named %-22s %5.1fs%s\n", mark, r.sc.name, r.sc.wantText(), strings.Join(slices.Compact(named), " | "), r.wall.Seconds(), extra)
	}
	fmt.Fprintf(w, "\nfalse alarms: %d\n", len(alarms))
	for _, a := range alarms {
		fmt.Fprintf(w, "  %s\n", a)
	}
	fmt.Fprintf(w, "misses: %d\n", len(misses))
	for _, m := range misses {
		fmt.Fprintf(w, "  %s\n", m)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "skipped (the machine lacks the feature): %d\n", len(skipped))
		for _, s := range skipped {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	fmt.Fprintf(w, "flake figure: %d rows, %d runs, no run repeated; %d rows whose runs named two verdicts, %d rows missed\n", len(rows), runs, split, len(misses))
	fmt.Fprintf(w, "%d scenarios in %s\n", len(rows), wall.Round(time.Second))
	return len(misses)
}

// cellText renders "2 pass, 1 fail" compactly: "2p1f"; "." when empty.
func cellText(c map[string]int) string {
	if len(c) == 0 {
		return "."
	}
	var s string
	for _, st := range []string{string(finding.StatusPass), string(finding.StatusFail), string(finding.StatusInvalid), "error"} {
		if n := c[st]; n > 0 {
			s += fmt.Sprintf("%d%s", n, st[:1])
		}
	}
	return s
}
