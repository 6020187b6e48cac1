package inspect

import (
	"encoding/json"
	"fmt"
	"os"
)

// ReadReport reads a report saved from `etcdperf inspect -w json` (the shape a
// drill fills the cluster with).
func ReadReport(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not the output of inspect -w json: %w", path, err)
	}
	return &r, nil
}
