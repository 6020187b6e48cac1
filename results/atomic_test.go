package results

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		write func(io.Writer) error
		err   error
		want  string
	}{
		{"a failed write keeps the old file and leaves no temp file", func(w io.Writer) error {
			io.WriteString(w, "half")
			return boom
		}, boom, "old"},
		{"a whole write replaces it", func(w io.Writer) error {
			_, err := io.WriteString(w, "new")
			return err
		}, nil, "new"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := WriteAtomic(path, 0o640, tc.write); !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			b, err := os.ReadFile(path)
			if err != nil || string(b) != tc.want {
				t.Fatalf("file = %q, %v; want %q", b, err, tc.want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Fatalf("%d entries in the folder, want only the file", len(ents))
			}
		})
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode = %v, %v; want 0640", fi.Mode(), err)
	}
}
