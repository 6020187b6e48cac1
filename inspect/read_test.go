package inspect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadReport(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "shape.json")
	b, err := json.Marshal(Result{Source: "snapshot", Total: Totals{Keys: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(good, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadReport(good)
	if err != nil || r.Source != "snapshot" || r.Total.Keys != 3 {
		t.Errorf("ReadReport = %+v, %v", r, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReport(bad); err == nil || !strings.Contains(err.Error(), "not the output of inspect -w json") {
		t.Errorf("bad file: %v", err)
	}
	if _, err := ReadReport(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file read")
	}
}
