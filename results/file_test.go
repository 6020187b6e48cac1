package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sampleRun(t testing.TB) *Run {
	h := NewHist()
	for i := int64(1); i <= 1000; i++ {
		if err := h.RecordValue(i * 100); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return &Run{
		Version: Version, Command: "bench put", StartedAt: time.Unix(1700000000, 0).UTC(),
		Valid: true, DurationS: 10,
		Ops: []Op{{Op: "put", Requests: 1000, Latency: Summarize(h), ResponseHist: enc, ServiceHist: enc}},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "run.json")
	run := sampleRun(t)
	if err := WriteFile(path, run); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := got.Ops[0].ResponseHist.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 1000 || got.Ops[0].Latency.P99 != run.Ops[0].Latency.P99 {
		t.Errorf("round trip lost data: count %d p99 %v", h.TotalCount(), got.Ops[0].Latency.P99)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temp files left: %v", entries)
	}
}

func TestSummarize(t *testing.T) {
	h := NewHist()
	for i := int64(1); i <= 100; i++ {
		_ = h.RecordValue(i * 1000) // 1..100 ms
	}
	s := Summarize(h)
	if s.P50 < 49.9 || s.P50 > 50.1 || s.P99 < 98.9 || s.P99 > 99.1 || s.Max < 99.9 || s.Max > 100.1 {
		t.Errorf("summary %+v", s)
	}
	if (Summarize(NewHist()) != Summary{}) {
		t.Error("empty histogram must summarize to zeros")
	}
}

func TestDecodeRejects(t *testing.T) {
	good, _ := json.Marshal(sampleRun(t))
	for _, tc := range []struct {
		name, in string
		want     string
	}{
		{"garbage", "not json", "not a run file"},
		{"truncated", string(good[:len(good)/2]), "not a run file"},
		{"version", `{"version":99}`, "unsupported run file version 99"},
		{"bad hist", `{"version":1,"ops":[{"op":"put","response_hist":"!!"}]}`, "decode histogram"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	_, err := Decode(strings.NewReader(`{"version":4}`))
	if !errors.Is(err, ErrVersion) {
		t.Errorf("version error not ErrVersion: %v", err)
	}
}

func TestWriteFileUnwritable(t *testing.T) {
	if os.Geteuid() == 0 {
		// root ignores permission bits; a path under a regular file fails for everyone.
		f := filepath.Join(t.TempDir(), "file")
		_ = os.WriteFile(f, nil, 0o644)
		if err := WriteFile(filepath.Join(f, "run.json"), sampleRun(t)); err == nil {
			t.Fatal("want error")
		}
		return
	}
	dir := t.TempDir()
	_ = os.Chmod(dir, 0o500)
	if err := WriteFile(filepath.Join(dir, "run.json"), sampleRun(t)); err == nil {
		t.Fatal("want error")
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := json.Marshal(sampleRun(f))
	f.Add(good)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"ops":[{"response_hist":"HISTFAAAA"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Decode(bytes.NewReader(b))
	})
}

// TestDecodeAllAndOpen: run files concatenated on stdin (kubectl logs of several
// pods, indented or not) are read one by one; "-" opens stdin, one run file only.
func TestDecodeAllAndOpen(t *testing.T) {
	one, _ := json.Marshal(sampleRun(t))
	indented, _ := json.MarshalIndent(sampleRun(t), "", " ")
	runs, err := DecodeAll(strings.NewReader(string(one) + "\n" + string(indented) + "\n"))
	if err != nil || len(runs) != 2 || runs[1].Ops[0].Requests != 1000 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	for in, want := range map[string]string{
		"":                               "no run file on standard input",
		string(one) + "{":                "run file 2: not a run file",
		string(one) + `{"version":99}`:   "run file 2: unsupported run file version",
		string(one) + "\n" + string(one): "2 run files, want one",
	} {
		if _, err := Open(Stdin, strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.20q: %v, want %q", in, err, want)
		}
	}
	if r, err := Open(Stdin, bytes.NewReader(one)); err != nil || r.Command != "bench put" {
		t.Errorf("Open(-): %+v, %v", r, err)
	}
}

func TestRateKept(t *testing.T) {
	for _, tc := range []struct {
		achieved, target float64
		want             bool
	}{{95, 100, true}, {94.9, 100, false}, {100, 100, true}, {0, 0, true}} {
		if got := RateKept(tc.achieved, tc.target); got != tc.want {
			t.Errorf("RateKept(%g, %g) = %v", tc.achieved, tc.target, got)
		}
	}
}

func TestReadRuns(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, p := range []string{a, b} {
		if err := WriteFile(p, &Run{Version: Version, Command: "bench put", Valid: true}); err != nil {
			t.Fatal(err)
		}
	}
	var stdin bytes.Buffer
	for range 2 {
		if err := Encode(&stdin, &Run{Version: Version, Command: "bench put", Valid: true}); err != nil {
			t.Fatal(err)
		}
	}
	runs, names, err := ReadRuns([]string{a, Stdin, b}, bytes.NewReader(stdin.Bytes()), filepath.Join(dir, "merged.json"))
	if err != nil || len(runs) != 4 || strings.Join(names, " ") != a+" stdin#1 stdin#2 "+b {
		t.Fatalf("ReadRuns = %d runs %v, %v", len(runs), names, err)
	}
	for _, c := range []struct {
		paths []string
		out   string
		want  string
	}{
		{[]string{a, filepath.Join(dir, ".", "a.json")}, "", "named twice"},
		{[]string{Stdin, Stdin}, "", "- is named twice"},
		{[]string{a, b}, b, "-o " + b + " is one of the run files"},
		{[]string{filepath.Join(dir, "none.json")}, "", "no such file"},
	} {
		if _, _, err := ReadRuns(c.paths, bytes.NewReader(stdin.Bytes()), c.out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadRuns(%v, -o %q) = %v, want %q", c.paths, c.out, err, c.want)
		}
	}
}

func TestSave(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := &Run{Version: Version, Command: "drill replace-member", StartedAt: start, Valid: true}
	path, err := Save(run, "", dir, nil)
	if err != nil || path != filepath.Join(dir, "drill-replace-member-20260102T030405Z.json") || run.EndedAt.IsZero() {
		t.Fatalf("Save in dir = %q, %v (ended %v)", path, err, run.EndedAt)
	}
	if back, err := ReadFile(path); err != nil || back.Command != run.Command {
		t.Errorf("read back: %+v, %v", back, err)
	}
	named := filepath.Join(dir, "run.json")
	if path, err := Save(run, named, dir, nil); err != nil || path != named {
		t.Errorf("Save to a path = %q, %v", path, err)
	}
	var out bytes.Buffer
	if path, err := Save(run, Stdin, dir, &out); err != nil || path != Stdin {
		t.Errorf("Save to stdout = %q, %v", path, err)
	}
	if back, err := Decode(&out); err != nil || back.Command != run.Command {
		t.Errorf("stdout holds %+v, %v", back, err)
	}
}

// A version 1 file reads as this version: its job and drill outputs become the
// sections of their types, named by what wrote them.
func TestDecodeVersion1(t *testing.T) {
	for _, tc := range []struct {
		name, in, section string
	}{
		{"check", `{"version":1,"command":"check","job":{"exit_follows":"default"}}`, "check"},
		{"plan", `{"version":1,"command":"plan","job":{"knee":null},"steps":[{"version":1}]}`, "plan"},
		{"plan kubernetes", `{"version":1,"command":"plan","job":{"kubernetes":{}}}`, "plan_kubernetes"},
		{"qualify", `{"version":1,"command":"qualify","job":{"tiers":[]}}`, "qualify"},
		{"drill", `{"version":1,"command":"drill replace-member","drill":{"drill":"replace-member"}}`, "drill_replace_member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := Decode(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if run.Version != Version || len(run.Sections) != 1 || run.Sections[tc.section] == nil {
				t.Fatalf("version %d, sections %v: want version %d with section %s", run.Version, run.Sections, Version, tc.section)
			}
			for _, s := range run.Steps {
				if s.Version != Version {
					t.Errorf("step version %d", s.Version)
				}
			}
		})
	}
	if _, err := Decode(strings.NewReader(`{"version":1,"command":"bench put","job":{}}`)); err == nil {
		t.Error("a version 1 job of bench read without error")
	}
}

type testSection struct {
	N int `json:"n"`
}

func (testSection) SectionName() string { return "test" }

func TestSectionRoundTrip(t *testing.T) {
	var run Run
	if ok, err := run.Section(&testSection{}); ok || err != nil {
		t.Fatalf("empty run: ok %v, err %v", ok, err)
	}
	if err := run.SetSection(testSection{N: 3}); err != nil {
		t.Fatal(err)
	}
	var got testSection
	if ok, err := run.Section(&got); !ok || err != nil || got.N != 3 {
		t.Fatalf("got %+v, ok %v, err %v", got, ok, err)
	}
}
