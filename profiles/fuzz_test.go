package profiles

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds the parser arbitrary documents: it must return a profile or a
// ValidationError, never panic, and whatever it accepts must be valid.
func FuzzParse(f *testing.F) {
	entries, err := Builtin()
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		f.Add(e.YAML)
	}
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(valid))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.yaml", data)
		if err != nil {
			if _, ok := err.(*ValidationError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if p.Rate <= 0 || p.Clients < 1 || len(p.Ops) == 0 {
			t.Fatalf("accepted an invalid profile: %+v", p)
		}
	})
}
