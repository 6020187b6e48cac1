package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(dir, "ro")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, dir, runFile, want string
	}{
		{"folder", dir, "", ""},
		{"folders to create", filepath.Join(dir, "a", "b"), "", ""},
		{"run file in a new folder", "ignored", filepath.Join(dir, "c", "run.json"), ""},
		{"a file in the way", file, "", "is not a folder"},
		{"below a file", filepath.Join(file, "sub"), "", "not a directory"},
		{"read-only", readOnly, "", "is not writable"},
	} {
		if c.name == "read-only" && os.Geteuid() == 0 {
			continue // root writes anywhere
		}
		err := CheckWritable(c.dir, c.runFile)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("the check created a folder: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the check left files behind: %v", entries)
	}
}
