package plan

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// ParseFile applies a YAML mapping of assumption keys to values (numbers, or
// strings with a unit such as "8KiB" or "2h"), as --kube-model reads it.
func (as Assumptions) ParseFile(data []byte) error {
	var m map[string]yaml.Node
	if err := yaml.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("want a mapping of assumption: value: %w", err)
	}
	for k, n := range m {
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: %s: want a number", n.Line, k)
		}
		f, err := parseNumber(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %s: %v", n.Line, k, err)
		}
		if err := as.Set(k, f); err != nil {
			return fmt.Errorf("line %d: %v", n.Line, err)
		}
	}
	return nil
}
