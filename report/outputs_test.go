package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/etcdperf/etcdperf/inspect"
	"github.com/etcdperf/etcdperf/profiles"
)

// goldenOutput renders o the three ways of -w into testdata/output/name.golden,
// one section per format, and compares them under golden's rules (-update rewrites).
func goldenOutput(t *testing.T, name string, o Output) {
	t.Helper()
	var b bytes.Buffer
	for _, format := range []string{"simple", "table", "json"} {
		b.WriteString("-- " + format + " --\n")
		if err := Print(&b, format, o); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
	}
	golden(t, filepath.Join("output", name+".golden"), b.Bytes())
}

// recorded decodes testdata/output/name, a command's -w json recorded from a real
// run, into v; the JSON v prints must be that recording, byte for byte.
func recorded(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "output", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := PrintJSON(&again, v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(again.Bytes()), bytes.TrimSpace(b)) {
		t.Errorf("%s: the value does not print back as recorded:\n%s", name, again.Bytes())
	}
}

func TestOutputsGolden(t *testing.T) {
	entries, err := profiles.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	show, err := profiles.Load("check-perf-s")
	if err != nil {
		t.Fatal(err)
	}
	var disk, diskEtcd Disk
	recorded(t, "disk.json", &disk)
	recorded(t, "disk-etcd.json", &diskEtcd)
	var cmp Comparison
	recorded(t, "compare.json", &cmp)
	var ins inspect.Result
	recorded(t, "inspect.json", &ins)
	var pl Plan
	recorded(t, "plan.json", &pl)
	var ds Datascale
	recorded(t, "datascale.json", &ds)
	var kube KubePlan
	recorded(t, "kube.json", &kube)
	var q Qualify
	recorded(t, "qualify.json", &q)
	for name, o := range map[string]Output{
		"profiles-list": NewProfileList(entries),
		"profiles-show": ProfileShow{Profile: show.Profile, YAML: show.YAML},
		"disk":          disk,
		"disk-etcd":     diskEtcd,
		"compare":       &cmp,
		"inspect":       Inspect{Result: &ins},
		"plan":          pl,
		"datascale":     ds,
		"plan-kube":     kube,
		"qualify":       q,
	} {
		t.Run(name, func(t *testing.T) { goldenOutput(t, name, o) })
	}
}
