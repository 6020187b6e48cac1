package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// FuzzRead feeds Read arbitrary bytes, seeded with a real bundle: it must fail
// cleanly, never panic.
func FuzzRead(f *testing.F) {
	path := filepath.Join(f.TempDir(), "b.tar.gz")
	b := &Bundle{Manifest: Manifest{Kind: KindLive, CreatedAt: time.Unix(0, 0).UTC()},
		Data: Data{Members: []MemberStatus{{Name: "m0", Error: "status: refused"}}},
		Run:  &results.Run{Version: results.Version, Command: "bundle", Valid: true}}
	if err := Write(path, b); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{0x1f, 0x8b})
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Read(bytes.NewReader(data))
	})
}

// FuzzPrefixOf checks that a prefix never shows a hashed key's segments.
func FuzzPrefixOf(f *testing.F) {
	for _, k := range []string{"/registry/pods/a", "a", "", "//", "/a//b/c"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		p := prefixOf(key, true)
		for _, r := range p {
			if r != '/' && !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
				t.Fatalf("prefixOf(%q) = %q shows more than hashes", key, p)
			}
		}
	})
}
