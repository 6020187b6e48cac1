package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/drill"
	"github.com/etcdperf/etcdperf/internal/version"
	"github.com/etcdperf/etcdperf/k8s"
	"github.com/etcdperf/etcdperf/results"
)

// readDrill decodes a drill's recorded -w json output (testdata/drill-*.json,
// written by the live drills) into its Output.
func readDrill(t *testing.T, name string) Output {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		Drill string `json:"drill"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		t.Fatal(err)
	}
	run := &results.Run{Sections: results.Sections{"drill_" + strings.ReplaceAll(head.Drill, "-", "_"): b}}
	o, _, err := DrillOutput(run)
	if err != nil || o == nil {
		t.Fatalf("%s: %v", name, err)
	}
	return o
}

// TestOutputGolden renders recorded values of the commands' outputs every way
// of -w; JSON must give back the recorded bytes.
func TestOutputGolden(t *testing.T) {
	job := k8s.Job{Workers: 3, Image: "ghcr.io/etcdperf/etcdperf:v1", Args: []string{"bench", "put", "--endpoints=https://etcd:2379", "--rate", "3000"},
		TLSSecret: "etcd-client", Results: k8s.ResultsPVC, PVC: "results", CPU: "2", Memory: "1Gi", TTL: time.Hour}
	if err := job.Schedule(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Minute); err != nil {
		t.Fatal(err)
	}
	manifest, err := k8s.Manifest(job)
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]Output{
		"drill-replace": readDrill(t, "drill-replace.json"),
		"drill-restart": readDrill(t, "drill-restart.json"),
		"version": Version(version.Info{Module: version.Module, Version: "v0.9.0", Commit: "0123456789abcdef0123", CommitTime: "2026-01-02T03:04:05Z",
			Go: "go1.26.0", Etcd: "3.6.16"}),
		"k8s-job": K8sJob{Manifest: string(manifest), Name: job.Name, StartAt: job.StartAt, Workers: job.Workers, Objects: job.Objects()},
	} {
		for _, format := range []string{"simple", "table", "json"} {
			var b bytes.Buffer
			if err := Print(&b, format, o); err != nil {
				t.Fatal(err)
			}
			if format == "json" && strings.HasPrefix(name, "drill-") {
				want, _ := os.ReadFile(filepath.Join("testdata", name+".json"))
				if !bytes.Equal(b.Bytes(), want) {
					t.Errorf("%s -w json does not give back the recorded JSON:\n%s", name, b.Bytes())
				}
				continue
			}
			golden(t, name+"."+format+".golden", b.Bytes())
		}
	}
}

// TestReportOfDrillRun: a report of a drill's run file shows what the drill
// printed, and its JSON carries the drill's.
func TestReportOfDrillRun(t *testing.T) {
	run, err := results.ReadFile(filepath.Join("testdata", "drill-run.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewDocument(run, run.Diagnosis)
	if err != nil {
		t.Fatal(err)
	}
	var text, want bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	o, _, err := DrillOutput(run)
	if err != nil || o == nil {
		t.Fatalf("the drill's run file holds no drill: %v", err)
	}
	if err := o.Simple(&want); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "\nDRILL\n  "+strings.ReplaceAll(strings.TrimRight(want.String(), "\n"), "\n", "\n  ")+"\n") {
		t.Errorf("the report does not show the drill as it printed:\n%s\nwant within it:\n%s", text.String(), want.String())
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Drill struct {
			Drill  string            `json:"drill"`
			Phases []json.RawMessage `json:"phases"`
		} `json:"drill"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Drill.Drill != "replace-member" || len(back.Drill.Phases) != 5 {
		t.Errorf("report JSON's drill: %+v (%v)", back.Drill, err)
	}
}

func TestDrillOutputRefuses(t *testing.T) {
	for _, raw := range []string{`[]`, `{"drill": "replace-member", "phases": 3}`} {
		run := &results.Run{Sections: results.Sections{"drill_replace_member": json.RawMessage(raw)}}
		if _, _, err := DrillOutput(run); err == nil {
			t.Errorf("%s decoded", raw)
		}
	}
	if o, _, err := DrillOutput(&results.Run{}); o != nil || err != nil {
		t.Errorf("a run of no drill: %v, %v", o, err)
	}
}

// TestRender: report RUNFILE renders the golden report from the run and the
// analysis it is given, and writes the plots it is asked for.
func TestRender(t *testing.T) {
	run, err := results.ReadFile(filepath.Join("testdata", "run-fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got, want bytes.Buffer
	if err := Render(&got, run, "run-fixture.json", "json", filepath.Join("testdata", "diagnosis-fixture.json"), ""); err != nil {
		t.Fatal(err)
	}
	d, err := ReadDiagnosis(filepath.Join("testdata", "diagnosis-fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewDocument(run, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&want); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("Render differs from the report of the run and its analysis:\n%s", got.String())
	}
	if err := Render(&got, run, "run-fixture.json", "text", filepath.Join("testdata", "none.json"), ""); err == nil {
		t.Error("a missing analysis was rendered")
	}
}

func TestDrillSpans(t *testing.T) {
	at := time.Unix(1800000000, 0)
	got := DrillSpans([]drill.Phase{{Name: "before", Start: at, End: at.Add(time.Second)}, {Name: "restart", Member: "m1", Start: at.Add(time.Second), End: at.Add(3 * time.Second)}})
	if len(got) != 2 || got[0].Name != "before" || got[1].Name != "restart m1" || !got[1].End.Equal(at.Add(3*time.Second)) {
		t.Errorf("DrillSpans = %+v", got)
	}
}
