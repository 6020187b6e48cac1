package metrics

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// TestNames reads names.go itself, so a name added there is checked without
// being listed twice: every name is unique and starts with a kept prefix (the
// scrape filter drops the rest, and a rule reading a dropped family would say
// "absent" on every run).
func TestNames(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "names.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	prefixes := Kept
	seen := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if strings.HasPrefix(id.Name, "Prefix") {
					continue
				}
				v, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				if prev, dup := seen[v]; dup {
					t.Errorf("%s and %s both name %q", prev, id.Name, v)
				}
				seen[v] = id.Name
				kept := false
				for _, p := range prefixes {
					kept = kept || strings.HasPrefix(v, p)
				}
				if !kept {
					t.Errorf("%s = %q has no kept prefix %v: the scrape filter would drop it", id.Name, v, prefixes)
				}
			}
		}
	}
	if len(seen) < 30 {
		t.Errorf("read %d names from names.go; the parse missed some", len(seen))
	}
}
