package qualify_test

import (
	"testing"

	"github.com/etcdperf/etcdperf/internal/runschema"
)

// TestRunFileSchema fails while docs/run-file.schema.json is not what this
// package's types (a part of the run file) make.
func TestRunFileSchema(t *testing.T) {
	if err := runschema.Stale(".."); err != nil {
		t.Fatal(err)
	}
}
