package image

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/etcdperf/etcdperf/internal/version"
)

// readArchive unpacks an OCI archive and reads its one image back through
// go-containerregistry's layout reader, with its index annotations.
func readArchive(t *testing.T, archive []byte) (v1.Image, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("%d manifests in the index, want 1", len(im.Manifests))
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("invalid image: %v", err)
	}
	return img, im.Manifests[0].Annotations
}

// layerFiles lists the image's files with their headers and contents.
func layerFiles(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = h
	}
}

// checkConfig checks what a cluster and Pod Security rely on.
func checkConfig(t *testing.T, img v1.Image, want Config) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != Entrypoint {
		t.Errorf("entrypoint %q, want [%s]", cf.Config.Entrypoint, Entrypoint)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (non-root)", cf.Config.User)
	}
	if cf.OS != "linux" || cf.Architecture != want.Arch {
		t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, want.Arch)
	}
	if !cf.Created.Time.Equal(want.Created) {
		t.Errorf("created %s, want %s", cf.Created.Time, want.Created)
	}
	for k, v := range want.Labels() {
		if cf.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, cf.Config.Labels[k], v)
		}
	}
	files := layerFiles(t, img)
	if h := files["etcdperf"]; h == nil || h.Mode != 0o755 || h.Uid != 0 {
		t.Errorf("/etcdperf: %+v, want mode 0755 owned by root", h)
	}
	if h := files["results/"]; h == nil || h.Uid != UID {
		t.Errorf("/results: %+v, want owned by %d", h, UID)
	}
	if h := files["tmp/"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("/tmp: %+v, want mode 1777", h)
	}
	for name, h := range files {
		if !h.ModTime.Equal(want.Created) {
			t.Errorf("%s: mtime %s, want %s", name, h.ModTime, want.Created)
		}
	}
}

// TestBuildReproducible: one config gives one archive, byte for byte, and the
// image read back has the entrypoint, user and labels it was built with.
func TestBuildReproducible(t *testing.T) {
	c := Config{
		Binary:  []byte("\x7fELF stand-in for the static binary"),
		Info:    version.Info{Module: version.Module, Version: "v0.1.0+dirty", Commit: "0123456789abcdef", Dirty: true, Go: "go1.26.8", Etcd: "3.6.16"},
		Created: time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC),
		Arch:    "amd64",
	}
	var archives [2][]byte
	for i := range archives {
		img, err := Build(c)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteOCIArchive(&b, img, c.Ref(), c.Info.Tag(), c.Created); err != nil {
			t.Fatal(err)
		}
		archives[i] = b.Bytes()
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Fatal("two builds of one config differ")
	}
	img, ann := readArchive(t, archives[0])
	if ann["org.opencontainers.image.ref.name"] != "v0.1.0-dirty" || ann["io.containerd.image.name"] != Repository+":v0.1.0-dirty" {
		t.Errorf("index annotations %v", ann)
	}
	checkConfig(t, img, c)

	for _, bad := range []Config{{Arch: "amd64"}, {Binary: c.Binary}} {
		if _, err := Build(bad); err == nil {
			t.Errorf("%+v built", bad)
		}
	}
}

// TestImageArchive reads the archive `make image` wrote (ETCDPERF_IMAGE; make
// test sets it after building the image): its config and the binary inside,
// whose build info must be what the labels say.
func TestImageArchive(t *testing.T) {
	path := os.Getenv("ETCDPERF_IMAGE")
	if path == "" {
		t.Skip("ETCDPERF_IMAGE not set: make test builds the image (make image) and sets it")
	}
	archive, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, ann := readArchive(t, archive)
	files := layerFiles(t, img)
	if files["etcdperf"] == nil || files["etcdperf"].Size < 1<<20 {
		t.Fatalf("/etcdperf: %+v, want the binary", files["etcdperf"])
	}
	// The binary inside, read back from the layer.
	layers, _ := img.Layers()
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var bin []byte
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "etcdperf" {
			if bin, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	bi, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Info: version.FromBuildInfo(bi)}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	want.Arch, want.Created = cf.Architecture, cf.Created.Time
	checkConfig(t, img, want)
	if want.Info.Etcd == "" {
		t.Errorf("binary's build info lacks the etcd version: %+v", want.Info)
	}
	// The toolchain stamps the commit from a .git folder; a git worktree's .git is
	// a file, which it does not read.
	if fi, err := os.Stat("../../.git"); err == nil && fi.IsDir() && want.Info.Commit == "" {
		t.Errorf("binary built in a git checkout lacks the commit (make image passes -buildvcs=auto): %+v", want.Info)
	}
	if ann["io.containerd.image.name"] != want.Ref() {
		t.Errorf("image name %q, want %q", ann["io.containerd.image.name"], want.Ref())
	}
	t.Logf("%s: %s, %s", path, want.Ref(), want.Info)
}
