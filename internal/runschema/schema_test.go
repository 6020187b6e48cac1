package runschema

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/etcdperf/etcdperf/results"
)

var update = flag.Bool("update", false, "rewrite docs/run-file.schema.json")

var schemaFile = filepath.Join("..", "..", Path)

// TestSchemaUpToDate fails while the checked-in schema is not what the types
// make: run go run ./internal/schemagen (or this test with -update).
func TestSchemaUpToDate(t *testing.T) {
	got, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Stale(filepath.Join("..", "..")); err != nil {
		t.Fatal(err)
	}
}

// TestRecordedRunsValidate: the recorded run files, of version 1 with a
// stored job or drill output, read as this version and, written again,
// validate against the schema with every section typed.
func TestRecordedRunsValidate(t *testing.T) {
	v, err := Load(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"../../cmd/etcdperf/testdata/plan-run.json",
		"../../report/testdata/drill-run.json",
		"../../report/testdata/run-fixture.json",
	} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			run, err := results.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := results.Encode(&buf, run); err != nil {
				t.Fatal(err)
			}
			if err := v.Validate(buf.Bytes()); err != nil {
				t.Fatalf("%s written again: %v", path, err)
			}
		})
	}
	if err := v.Validate([]byte(`{"version": 2, "sections": {"no such section": {}}}`)); err == nil {
		t.Error("a section the schema does not know validated")
	}
}
