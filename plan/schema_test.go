package plan_test

import (
	"path/filepath"
	"testing"

	"github.com/etcdperf/etcdperf/internal/runschema"
)

// TestRunFileSchema fails while docs/run-file.schema.json is not what this
// package's types (a part of the run file) make.
func TestRunFileSchema(t *testing.T) {
	if err := runschema.Stale(filepath.Join("..")); err != nil {
		t.Fatal(err)
	}
}
