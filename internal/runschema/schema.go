// Package runschema makes the JSON Schema of the run file from the Go types that
// encode it (results.Run and the section type of every command that keeps one,
// results.Section), and validates run files against the schema checked in as
// docs/run-file.schema.json. go run ./internal/schemagen writes that file; this
// package's test fails while it differs from what Generate makes.
package runschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/etcdperf/etcdperf/results"

	// The packages that own a section register it (results.RegisterSection).
	_ "github.com/etcdperf/etcdperf/drill"
	_ "github.com/etcdperf/etcdperf/internal/check"
	_ "github.com/etcdperf/etcdperf/internal/qualify"
	_ "github.com/etcdperf/etcdperf/plan"
)

// Path is where the schema is checked in, from the module root.
const Path = "docs/run-file.schema.json"

// Generate is the schema, indented, with a final newline.
func Generate() ([]byte, error) {
	g := &gen{defs: map[string]any{}}
	root, err := g.schema(reflect.TypeOf(results.Run{}))
	if err != nil {
		return nil, err
	}
	props := map[string]any{}
	for _, s := range results.RegisteredSections() {
		t := reflect.TypeOf(s)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		ref, err := g.schema(t)
		if err != nil {
			return nil, err
		}
		props[s.SectionName()] = ref
	}
	g.defs[defName(reflect.TypeOf(results.Sections{}))] = map[string]any{
		"description":          "The command's result beyond its load, one section per type, by name (results.Section).",
		"type":                 []string{"object", "null"},
		"properties":           props,
		"additionalProperties": false,
	}
	doc := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "https://github.com/etcdperf/etcdperf/docs/run-file.schema.json",
		"title":       fmt.Sprintf("etcdperf run file, version %d", results.Version),
		"description": "Generated from the Go types by go run ./internal/schemagen; do not edit.",
		"$ref":        root["$ref"],
		"$defs":       g.defs,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gen reflects Go types into schemas, each named struct once in defs.
type gen struct {
	defs map[string]any
}

var (
	timeType    = reflect.TypeOf(time.Time{})
	rawType     = reflect.TypeOf(json.RawMessage{})
	marshaler   = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	stringTypes = map[reflect.Type]string{
		// Types that encode themselves, as what they write.
		reflect.TypeOf(results.Uint128{}): "an unsigned 128-bit integer in decimal",
	}
)

func defName(t reflect.Type) string {
	// Named as before the move under internal/, so the schema's names stay the package's short path.
	pkg := strings.TrimPrefix(t.PkgPath(), "github.com/etcdperf/etcdperf/")
	return strings.TrimPrefix(pkg, "internal/") + "." + t.Name()
}

func nullable(s map[string]any) map[string]any {
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// schema is t's schema; a named struct becomes a reference to its definition.
func (g *gen) schema(t reflect.Type) (map[string]any, error) {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}, nil
	case t == rawType:
		return map[string]any{}, nil
	case stringTypes[t] != "":
		return map[string]any{"type": "string", "description": stringTypes[t]}, nil
	case t.Kind() == reflect.Int64 && t.Implements(marshaler):
		// A duration type that writes Go's duration text (profiles.Duration).
		return map[string]any{"type": "string", "description": "a Go duration, e.g. 1m0s"}, nil
	case t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler):
		return nil, fmt.Errorf("%s encodes itself: say in schemagen what it writes", t)
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Pointer:
		s, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return nullable(s), nil
	case reflect.Slice, reflect.Array:
		s, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": []string{"array", "null"}, "items": s}, nil
	case reflect.Map:
		if t == reflect.TypeOf(results.Sections{}) {
			return map[string]any{"$ref": "#/$defs/" + defName(t)}, nil
		}
		s, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": []string{"object", "null"}, "additionalProperties": s}, nil
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t)
		}
		name := defName(t)
		if _, done := g.defs[name]; !done {
			g.defs[name] = nil // taken: a type that holds itself (Run.Steps) refers to it
			obj, err := g.object(t)
			if err != nil {
				return nil, err
			}
			g.defs[name] = obj
		}
		return map[string]any{"$ref": "#/$defs/" + name}, nil
	}
	return nil, fmt.Errorf("%s: no schema for kind %s", t, t.Kind())
}

// object is a struct's schema: its fields as encoding/json writes them,
// embedded structs inlined, and those without omitempty required.
func (g *gen) object(t reflect.Type) (map[string]any, error) {
	props := map[string]any{}
	var required []string
	if err := g.fields(t, props, &required); err != nil {
		return nil, err
	}
	obj := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		obj["required"] = required
	}
	return obj, nil
}

func (g *gen) fields(t reflect.Type, props map[string]any, required *[]string) error {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if err := g.fields(et, props, required); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, shadowed := props[name]; shadowed {
			continue // the shallower field wins, as in encoding/json
		}
		s, err := g.schema(f.Type)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		props[name] = s
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			*required = append(*required, name)
		}
	}
	return nil
}

// Stale says, as an error, that the schema checked in under root (the module
// root) is not what the types make; nil when it is. Every package whose types
// are in the run file calls it from a test, so that changing one fails there
// until the schema is regenerated (go run ./internal/schemagen).
func Stale(root string) error {
	got, err := Generate()
	if err != nil {
		return err
	}
	want, err := os.ReadFile(filepath.Join(root, Path))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s is not what the run file's types make: run go run ./internal/schemagen and review the change (a field added is read by older files as absent; a field removed, renamed or changed in meaning needs results.Version bumped and a reader for the old version)", Path)
	}
	return nil
}

// Validator checks run files against a schema.
type Validator struct {
	schema *jsonschema.Schema
}

// Load compiles the schema file at path (docs/run-file.schema.json).
func Load(path string) (*Validator, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("run file schema: %w", err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("run file schema %s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("run-file.schema.json", doc); err != nil {
		return nil, fmt.Errorf("run file schema %s: %w", path, err)
	}
	s, err := c.Compile("run-file.schema.json")
	if err != nil {
		return nil, fmt.Errorf("run file schema %s: %w", path, err)
	}
	return &Validator{schema: s}, nil
}

// Validate checks one run file's JSON.
func (v *Validator) Validate(runFile []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(runFile))
	if err != nil {
		return fmt.Errorf("run file: %w", err)
	}
	return v.schema.Validate(doc)
}
