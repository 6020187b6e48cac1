package truth

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/faults"
	"github.com/etcdperf/etcdperf/results"
)

var (
	runMatrix = flag.Bool("truth", false, "run the scenario matrix (make truth)")
	binFlag   = flag.String("etcdperf", "", "the etcdperf binary to measure with (default: built from ./cmd/etcdperf)")
	only      = flag.String("only", "", "run only scenarios whose name contains this")
	recordDir = flag.String("record", "", "write each scenario's /metrics pair of the graded member here (fixtures for analyze's unit tests)")
)

// outcome is what one scenario's verdict said.
type outcome struct {
	sc         *scenario
	status     string
	bottleneck string
	bad        map[finding.Class]finding.Severity // classes at warn or fail
	summary    string
	skipped    string
	err        string
	wall       time.Duration
	// pressure is the host's CPU pressure over the measured window (PSI some
	// share, from the run file); -1 unknown.
	pressure float64
}

// busyHost is the host CPU pressure (the cpu class's own warn level, see
// analyze's host CPU pressure rule) above which other work on the machine
// crowds the scenario out: the run then rightly names the CPU, and that is
// accepted as well as the scenario's own answer. CI runs the matrix alone.
const busyHost = 0.5

func (o *outcome) busy() bool { return o.pressure >= busyHost }

// verdictOut is the part of etcdperf's JSON output the matrix reads.
type verdictOut struct {
	Verdict  finding.Verdict   `json:"verdict"`
	Findings []finding.Finding `json:"findings"`
	RunFile  string            `json:"run_file"`
}

// judge says whether the outcome is right, and which of its grades are false alarms.
//
// A baseline must pass with bottleneck none and no class at warn or fail. A fault
// must be named (a mild one may also read none: barely noticeable is allowed to go
// unnoticed); a fault on a follower must be named but is a risk, so it need not
// fail. A fail of any class other than the expected one is a false alarm, except
// cluster context (health, version): a severe fault really can cost a leader.
func (o *outcome) judge() (ok bool, alarms []string) {
	sc := o.sc
	// Other work crowding the host out: the CPU (or the starved generator) is a
	// right answer too, and their grades are no false alarm.
	busyClass := func(c finding.Class) bool { return o.busy() && (c == finding.ClassCPU || c == finding.ClassClient) }
	if busyClass(finding.Class(o.bottleneck)) {
		return true, nil
	}
	if sc.class == "" {
		for c, s := range o.bad {
			if !busyClass(c) {
				alarms = append(alarms, fmt.Sprintf("%s %s", c, s))
			}
		}
		sort.Strings(alarms)
		return o.status == finding.StatusPass && o.bottleneck == finding.BottleneckNone && len(alarms) == 0, alarms
	}
	for c, s := range o.bad {
		if s == finding.Fail && c != sc.class && !c.Context() && !busyClass(c) && !consequence(sc.class, c) {
			alarms = append(alarms, fmt.Sprintf("%s fail", c))
		}
	}
	sort.Strings(alarms)
	named := o.bottleneck == string(sc.class) || (sc.mild && o.bottleneck == finding.BottleneckNone)
	return named && len(alarms) == 0, alarms
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
	for _, x := range consequences[fault] {
		if x == c {
			return true
		}
	}
	return false
}

// TestMatrix runs every scenario one after the other (they share the machine's two
// cores and must not load each other) and prints the confusion table.
func TestMatrix(t *testing.T) {
	if !*runMatrix {
		t.Skip("the scenario matrix runs with -truth (make truth)")
	}
	faults.RequireRoot(t)
	h := newHarness(t)
	start := time.Now()
	var outs []*outcome
	for _, sc := range scenarios() {
		if *only != "" && !strings.Contains(sc.name, *only) {
			continue
		}
		o := &outcome{sc: sc}
		t.Run(sc.name, func(t *testing.T) {
			began := time.Now()
			defer func() {
				o.wall = time.Since(began)
				if t.Skipped() && o.skipped == "" {
					o.skipped = "a fault helper skipped it (see the log)"
				}
			}()
			h.run(t, o)
			if o.skipped != "" {
				t.Skip(o.skipped)
			}
			if ok, alarms := o.judge(); !ok {
				t.Errorf("expected %s, named %s (%s); false alarms %v: %s", sc.want(), o.bottleneck, o.status, alarms, o.summary)
			}
		})
		outs = append(outs, o)
	}
	report(os.Stdout, outs, time.Since(start))
}

// harness holds what every scenario shares.
type harness struct {
	bin  string
	loop *faults.Loop // data dirs live here: a memory-backed ext4, fast and steady, so only a fault is slow
	mu   sync.Mutex
	n    int
}

func newHarness(t *testing.T) *harness {
	h := &harness{bin: *binFlag}
	if h.bin == "" {
		h.bin = filepath.Join(t.TempDir(), "etcdperf")
		out, err := exec.Command("go", "build", "-o", h.bin, "../cmd/etcdperf").CombinedOutput()
		if err != nil {
			t.Fatalf("build etcdperf: %v: %s", err, out)
		}
	}
	h.loop = faults.NewLoopExt4(t, 2<<30)
	return h
}

// dir is a fresh folder on the loop device.
func (h *harness) dir(t *testing.T) string {
	h.mu.Lock()
	h.n++
	n := h.n
	h.mu.Unlock()
	d := filepath.Join(h.loop.Mount, fmt.Sprintf("s%03d", n))
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// run prepares the scenario's target and fault, measures it with the etcdperf
// binary and records its verdict.
func (h *harness) run(t *testing.T, o *outcome) {
	sc := o.sc
	env := &runEnv{t: t, h: h, dataDir: h.dir(t)}
	defer env.close()
	args := append([]string{}, sc.args...)
	if sc.setup != nil {
		extra, skip := sc.setup(env)
		if skip != "" {
			o.skipped = skip
			return
		}
		args = append(args, extra...)
	}
	resultsDir := t.TempDir()
	args = append(args, "-w", "json", "--results-dir", resultsDir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	// The embedded default puts its data in a temp dir: on the loop device too.
	cmd.Env = append(os.Environ(), "TMPDIR="+env.dataDir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o.pressure = -1
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	var out verdictOut
	if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil {
		o.err = fmt.Sprintf("etcdperf %s: exit %d, no JSON verdict: %v; stderr: %s", strings.Join(args, " "), code, jerr, lastLine(stderr.String()))
		o.status, o.bottleneck = "error", "error"
		t.Error(o.err)
		return
	}
	o.status, o.bottleneck, o.summary = out.Verdict.Status, out.Verdict.Bottleneck, out.Verdict.Summary
	o.bad = map[finding.Class]finding.Severity{}
	for _, f := range out.Findings {
		if f.Severity.Bad() {
			o.bad[f.Class] = f.Severity
		}
	}
	// The host's CPU pressure over the measured window, as the analyzer saw it.
	if run, err := results.ReadFile(out.RunFile); err == nil && run.HostCPUPressure != nil {
		o.pressure = *run.HostCPUPressure
	}
	t.Logf("etcdperf %s → exit %d (host CPU pressure %.0f%%): %s", strings.Join(args, " "), code, o.pressure*100, o.summary)
	if *recordDir != "" && out.RunFile != "" {
		if err := record(*recordDir, sc, out.RunFile, env.graded); err != nil {
			t.Logf("record fixtures: %v", err)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// report prints the confusion table, the scenario list and the false alarms.
func report(w *os.File, outs []*outcome, wall time.Duration) {
	classes := []string{"none"}
	for _, c := range finding.Classes {
		if !c.Context() {
			classes = append(classes, string(c))
		}
	}
	type cell map[string]int // status → count
	table := map[string]map[string]cell{}
	var misses, alarms, skipped []string
	for _, o := range outs {
		if o.skipped != "" {
			skipped = append(skipped, o.sc.name+": "+o.skipped)
			continue
		}
		want := o.sc.want()
		if table[want] == nil {
			table[want] = map[string]cell{}
		}
		if table[want][o.bottleneck] == nil {
			table[want][o.bottleneck] = cell{}
		}
		table[want][o.bottleneck][o.status]++
		ok, al := o.judge()
		if !ok {
			misses = append(misses, fmt.Sprintf("%s: expected %s, named %s (%s) — %s", o.sc.name, want, o.bottleneck, o.status, o.summary+o.err))
		}
		for _, a := range al {
			alarms = append(alarms, o.sc.name+": "+a)
		}
	}
	fmt.Fprintf(w, "\nconfusion table: expected class (rows) → named bottleneck (columns), counts by verdict status\n")
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
			if !contains(classes, named) {
				fmt.Fprintf(w, " %s:%s", named, cellText(row[named]))
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nscenarios\n")
	for _, o := range outs {
		mark := "ok  "
		if o.skipped != "" {
			mark = "skip"
		} else if ok, _ := o.judge(); !ok {
			mark = "MISS"
		}
		busy := ""
		if o.busy() {
			busy = fmt.Sprintf("  host busy: CPU pressure %.0f%%", o.pressure*100)
		}
		fmt.Fprintf(w, "  %s %-40s want %-10s named %-10s %-7s %5.1fs%s\n", mark, o.sc.name, o.sc.want(), o.bottleneck, o.status, o.wall.Seconds(), busy)
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
		fmt.Fprintf(w, "skipped: %d\n", len(skipped))
		for _, s := range skipped {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	fmt.Fprintf(w, "%d scenarios in %s\n", len(outs), wall.Round(time.Second))
}

// cellText renders "2 pass, 1 fail" compactly: "2p1f"; "." when empty.
func cellText(c map[string]int) string {
	if len(c) == 0 {
		return "."
	}
	var s string
	for _, st := range []string{finding.StatusPass, finding.StatusFail, finding.StatusInvalid, "error"} {
		if n := c[st]; n > 0 {
			s += fmt.Sprintf("%d%s", n, st[:1])
		}
	}
	return s
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
