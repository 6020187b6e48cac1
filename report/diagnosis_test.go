package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/finding"
)

func TestReadDiagnosis(t *testing.T) {
	d, err := ReadDiagnosis(filepath.Join("testdata", "diagnosis-fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict == nil || d.Verdict.Status != finding.StatusFail || len(d.Findings) == 0 || d.Budget == nil || d.Curve == nil {
		t.Errorf("fixture lost parts: %+v", d)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDiagnosis(bad); err == nil || !strings.Contains(err.Error(), "not the JSON of analyze") {
		t.Errorf("bad file: %v", err)
	}
	if _, err := ReadDiagnosis(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing file read")
	}
}
