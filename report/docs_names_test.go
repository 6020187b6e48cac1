package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docName is a Go name as docs write it: pkg.Name, or pkg.Type.Member.
var docName = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?`)

// TestDocsNames: every pkg.Name (and pkg.Type.Field or .Method) that README.md
// and docs/ mention, of a package of this module, is declared in the code, so
// a rename cannot leave the docs naming what no longer exists.
func TestDocsNames(t *testing.T) {
	root := filepath.Join("..")
	names := moduleNames(t, root)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, page)
		for _, m := range docName.FindAllStringSubmatch(string(b), -1) {
			decls, ok := names[m[1]]
			if !ok {
				continue // not a package of this module (time.Duration, clientv3.Client)
			}
			if !decls[m[2]] {
				t.Errorf("%s names %s.%s, which package %s does not declare", rel, m[1], m[2], m[1])
			} else if m[3] != "" && !decls[m[2]+"."+m[3]] {
				t.Errorf("%s names %s, which %s.%s does not have", rel, m[0], m[1], m[2])
			}
		}
	}
}

// moduleNames maps each package name of the module (but main) to its exported
// declarations: Name, Type.Field and Type.Method.
func moduleNames(t *testing.T, root string) map[string]map[string]bool {
	t.Helper()
	names := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		decls := names[f.Name.Name]
		if decls == nil {
			decls = map[string]bool{}
			names[f.Name.Name] = decls
		}
		addDecls(decls, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// addDecls adds the exported names f declares to decls.
func addDecls(decls map[string]bool, f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				decls[d.Name.Name] = true
				continue
			}
			decls[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						decls[n.Name] = true
					}
				case *ast.TypeSpec:
					decls[s.Name.Name] = true
					addMembers(decls, s.Name.Name, s.Type)
				}
			}
		}
	}
}

// addMembers adds a struct's fields or an interface's methods as Type.Member.
func addMembers(decls map[string]bool, typ string, e ast.Expr) {
	var list *ast.FieldList
	switch e := e.(type) {
	case *ast.StructType:
		list = e.Fields
	case *ast.InterfaceType:
		list = e.Methods
	default:
		return
	}
	for _, f := range list.List {
		if len(f.Names) == 0 { // embedded: promoted members are not followed
			decls[typ+"."+recvName(f.Type)] = true
		}
		for _, n := range f.Names {
			decls[typ+"."+n.Name] = true
		}
	}
}

// recvName is the type name of a receiver or embedded field: T of *T, T[K] or pkg.T.
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}
