package results

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Sections are the run's command results by section name. Each is written and
// read as the type its package declares (check.Result, plan.Record,
// qualify.Record, drill.ReplaceResult, ...), never as some command's printed
// output: a reader asks for the sections it knows, whatever command wrote the
// file. docs/run-file.schema.json describes every section.
type Sections map[string]json.RawMessage

// Section is one command's result as its package types it.
type Section interface {
	// SectionName is its key in Run.Sections: one per type.
	SectionName() string
}

// registry holds every section type by name, as each package registers its own.
var registry = map[string]Section{}

// RegisterSection declares a section type from the package that owns it, so the
// run file's schema (internal/runschema) lists it without a hand-kept list:
// call it as var _ = results.RegisterSection(T{}) beside T's SectionName. Two
// types of one name panic at start-up. It returns s.
func RegisterSection(s Section) Section {
	if _, dup := registry[s.SectionName()]; dup {
		panic("results: section " + s.SectionName() + " registered twice")
	}
	registry[s.SectionName()] = s
	return s
}

// RegisteredSections are the registered section types, by name.
func RegisteredSections() []Section {
	out := make([]Section, 0, len(registry))
	for _, name := range slices.Sorted(maps.Keys(registry)) {
		out = append(out, registry[name])
	}
	return out
}

// SetSection stores s in the run under its name, replacing any before.
func (r *Run) SetSection(s Section) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("run file: section %s: %w", s.SectionName(), err)
	}
	if r.Sections == nil {
		r.Sections = Sections{}
	}
	r.Sections[s.SectionName()] = b
	return nil
}

// Section decodes the run's section of s's name into s (a pointer); ok is false
// when the run has none.
func (r *Run) Section(s Section) (ok bool, err error) {
	b, found := r.Sections[s.SectionName()]
	if !found {
		return false, nil
	}
	if err := json.Unmarshal(b, s); err != nil {
		return false, fmt.Errorf("run file: section %s: %w", s.SectionName(), err)
	}
	return true, nil
}
