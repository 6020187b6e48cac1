package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

func TestPrefixOf(t *testing.T) {
	for _, c := range []struct {
		key  string
		hash bool
		want string
	}{
		{"/registry/pods/ns/p1", false, "/registry/pods/"},
		{"/registry/pods", false, "/registry/"},
		{"/big/0001", false, "/big/"},
		{"plain", false, ""},
		{"a/b/c", false, "a/b/"},
		{"/registry/pods/ns/p1", true, "/" + hashName("registry") + "/" + hashName("pods") + "/"},
		{"/registry/pods", true, "/" + hashName("registry") + "/"},
		{"plain", true, ""},
	} {
		if got := prefixOf(c.key, c.hash); got != c.want {
			t.Errorf("prefixOf(%q, %v) = %q, want %q", c.key, c.hash, got, c.want)
		}
	}
	if hashName("registry") == "registry" || len(hashName("registry")) != 8 {
		t.Errorf("hashName(registry) = %q", hashName("registry"))
	}
}

// TestArchiveRoundTrip writes a bundle and reads it back; a file that is not a
// bundle, and a bundle of another schema version, are refused.
func TestArchiveRoundTrip(t *testing.T) {
	dir := t.TempDir()
	b := &Bundle{
		Manifest: Manifest{Kind: KindLive, CreatedAt: time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC), Endpoints: []string{"http://127.0.0.1:2379"}},
		Data:     Data{Members: []MemberStatus{{Name: "m0", Endpoint: "http://127.0.0.1:2379", Version: "3.6.16"}}},
		Run:      &results.Run{Version: results.Version, Command: "bundle", Valid: true},
	}
	path := filepath.Join(dir, "b.tar.gz")
	if err := Write(path, b); err != nil {
		t.Fatal(err)
	}
	if !Is(path) {
		t.Fatal("Is: false for a bundle")
	}
	got, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Data.Members[0].Version != "3.6.16" || got.Run.Command != "bundle" || len(got.Manifest.Files) != 3 || got.Manifest.SchemaVersion != SchemaVersion {
		t.Errorf("read back %+v", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the folder holds %d files, want the bundle alone (no temp file left)", len(entries))
	}

	runFile := filepath.Join(dir, "run.json")
	if err := results.WriteFile(runFile, b.Run); err != nil {
		t.Fatal(err)
	}
	if Is(runFile) {
		t.Error("Is: true for a run file")
	}
	if _, err := Read(bytes.NewReader([]byte("{}"))); !errors.Is(err, ErrNotBundle) {
		t.Errorf("Read(JSON) = %v, want ErrNotBundle", err)
	}
	// A bundle of a later schema: its manifest says so.
	var buf bytes.Buffer
	writeRaw(t, &buf, map[string]string{manifestFile: `{"schema_version": 9}`, dataFile: `{"schema_version": 9}`})
	if _, err := Read(&buf); err == nil {
		t.Error("Read accepted schema version 9")
	}
}

// writeRaw writes files as a gzipped tar to w.
func writeRaw(t *testing.T, w io.Writer, files map[string]string) {
	t.Helper()
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}
