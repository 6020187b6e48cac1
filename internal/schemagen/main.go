// Command schemagen writes docs/run-file.schema.json, the JSON Schema of the run
// file, from the Go types that encode it (see package runschema). Run it from
// the module root after changing any of them:
//
//	go run ./internal/schemagen
package main

import (
	"fmt"
	"os"

	"github.com/etcdperf/etcdperf/internal/runschema"
)

func main() {
	b, err := runschema.Generate()
	if err == nil {
		err = os.WriteFile(runschema.Path, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
