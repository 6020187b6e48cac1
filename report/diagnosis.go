package report

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/etcdperf/etcdperf/finding"
)

// ReadDiagnosis reads the -w json output of an analyzing command (analyze, check,
// qualify, plan): its verdict, findings, budget, hardware grade and curve.
func ReadDiagnosis(path string) (*finding.Diagnosis, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read analysis: %w", err)
	}
	var d finding.Diagnosis
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("read analysis %s: not the JSON of analyze -w json: %w", path, err)
	}
	return &d, nil
}
