// Package image builds etcdperf's container image without a container runtime:
// the static binary as the one layer on an empty base (go-containerregistry),
// written as an OCI image layout in one tar file (what skopeo calls oci-archive,
// `kind load image-archive` and `ctr image import` take). The same binary and
// time give the same bytes: every timestamp is Created, every owner fixed.
package image

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/etcdperf/etcdperf/internal/version"
	"github.com/etcdperf/etcdperf/k8s"
)

// Repository is the name the image is tagged with; `etcdperf k8s job` defaults to
// it with the running binary's version as the tag.
const Repository = k8s.Repository

// Inside the image.
const (
	Entrypoint = "/etcdperf"
	// UID is the user the image runs as: not root, so Pod Security's
	// runAsNonRoot admits it; the Job's pods run as the same.
	UID        = k8s.UID
	ResultsDir = "/results" // writable by UID; the Job mounts a volume there
)

// Config is what goes into the image.
type Config struct {
	Binary  []byte       // the static etcdperf binary
	Info    version.Info // its version, from its build info: the labels and the tag
	Created time.Time    // every timestamp in the image (SOURCE_DATE_EPOCH)
	Arch    string       // GOARCH of the binary
}

// Ref is the image reference the config is tagged with.
func (c Config) Ref() string { return Repository + ":" + c.Info.Tag() }

// Labels are the OCI annotation keys the image config carries.
func (c Config) Labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "etcdperf",
		"org.opencontainers.image.description": "etcd benchmark and diagnosis: check perf, bench, disk, qualify, plan, analyze",
		"org.opencontainers.image.source":      "https://" + version.Module,
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.version":     c.Info.Version,
		"org.opencontainers.image.revision":    c.Info.Commit,
		"org.opencontainers.image.created":     c.Created.UTC().Format(time.RFC3339),
		"io.etcdperf.embedded-etcd":            c.Info.Etcd,
		"io.etcdperf.go-version":               c.Info.Go,
	}
}

// Build assembles the image.
func Build(c Config) (v1.Image, error) {
	if len(c.Binary) == 0 {
		return nil, errors.New("image: no binary")
	}
	if c.Arch == "" {
		return nil, errors.New("image: no architecture")
	}
	layerTar, err := rootfs(c)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	created := v1.Time{Time: c.Created.UTC()}
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: c.Arch,
		OS:           "linux",
		RootFS:       v1.RootFS{Type: "layers"},
		Created:      created,
		Config: v1.Config{
			Entrypoint: []string{Entrypoint},
			User:       fmt.Sprintf("%d:%d", UID, UID),
			WorkingDir: ResultsDir,
			Env:        []string{"PATH=/", "TMPDIR=/tmp"},
			Labels:     c.Labels(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("image: config: %w", err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "etcdperf make image", Comment: "static etcdperf binary"},
	})
	if err != nil {
		return nil, fmt.Errorf("image: append layer: %w", err)
	}
	return img, nil
}

// rootfs is the layer: the binary, /tmp, a results dir and a home the user owns,
// and /etc/passwd and /etc/group naming the user (so tools that look up the uid
// find a name).
func rootfs(c Config) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	ts := c.Created.UTC()
	entries := []struct {
		name     string
		mode     int64
		uid      int
		body     []byte
		typeflag byte
	}{
		{"etc/", 0o755, 0, nil, tar.TypeDir},
		{"etc/group", 0o644, 0, fmt.Appendf(nil, "root:x:0:\nnonroot:x:%d:\n", UID), tar.TypeReg},
		{"etc/passwd", 0o644, 0, fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", UID, UID), tar.TypeReg},
		{"etcdperf", 0o755, 0, c.Binary, tar.TypeReg},
		{"home/", 0o755, 0, nil, tar.TypeDir},
		{"home/nonroot/", 0o700, UID, nil, tar.TypeDir},
		{"results/", 0o755, UID, nil, tar.TypeDir},
		{"tmp/", 0o1777, 0, nil, tar.TypeDir},
	}
	for _, e := range entries {
		h := &tar.Header{
			Typeflag: e.typeflag, Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid,
			Size: int64(len(e.body)), ModTime: ts, Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("image: layer %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, fmt.Errorf("image: layer %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	return b.Bytes(), nil
}

// WriteOCIArchive writes img as an OCI image layout in tar form, its index naming
// it ref (org.opencontainers.image.ref.name holds the tag, as skopeo's
// oci-archive:FILE:TAG looks it up; io.containerd.image.name the full name, as
// ctr image import reads it).
func WriteOCIArchive(w io.Writer, img v1.Image, ref, tag string, created time.Time) error {
	manifest, err := img.RawManifest()
	if err != nil {
		return fmt.Errorf("image: manifest: %w", err)
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("image: digest: %w", err)
	}
	mt, err := img.MediaType()
	if err != nil {
		return fmt.Errorf("image: media type: %w", err)
	}
	cfgName, err := img.ConfigName()
	if err != nil {
		return fmt.Errorf("image: config: %w", err)
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return fmt.Errorf("image: config: %w", err)
	}
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2, MediaType: types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: mt, Size: int64(len(manifest)), Digest: digest,
			Annotations: map[string]string{"org.opencontainers.image.ref.name": tag, "io.containerd.image.name": ref},
		}},
	})
	if err != nil {
		return fmt.Errorf("image: index: %w", err)
	}
	tw := tar.NewWriter(w)
	ts := created.UTC()
	file := func(name string, body []byte) error {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: ts, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	dir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: ts, Format: tar.FormatPAX})
	}
	blobs := []struct {
		h    v1.Hash
		body []byte
	}{{cfgName, cfg}, {digest, manifest}}
	layers, err := img.Layers()
	if err != nil {
		return fmt.Errorf("image: layers: %w", err)
	}
	for _, l := range layers {
		h, err := l.Digest()
		if err != nil {
			return fmt.Errorf("image: layer digest: %w", err)
		}
		rc, err := l.Compressed()
		if err != nil {
			return fmt.Errorf("image: layer: %w", err)
		}
		body, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("image: layer: %w", err)
		}
		blobs = append(blobs, struct {
			h    v1.Hash
			body []byte
		}{h, body})
	}
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return fmt.Errorf("image: write: %w", err)
	}
	if err := file("index.json", index); err != nil {
		return fmt.Errorf("image: write: %w", err)
	}
	if err := dir("blobs/"); err != nil {
		return fmt.Errorf("image: write: %w", err)
	}
	if err := dir("blobs/sha256/"); err != nil {
		return fmt.Errorf("image: write: %w", err)
	}
	for _, bl := range blobs {
		if err := file("blobs/"+bl.h.Algorithm+"/"+bl.h.Hex, bl.body); err != nil {
			return fmt.Errorf("image: write: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("image: write: %w", err)
	}
	return nil
}

// FromBinary is the Config of a built etcdperf binary: its version, commit, Go and
// etcd versions and architecture from its build info, Created from its commit
// time (so two builds of one commit give one image). It refuses a binary built
// with cgo: the empty base has no C library.
func FromBinary(path string) (Config, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("image: %w", err)
	}
	bi, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		return Config{}, fmt.Errorf("image: %s: %w", path, err)
	}
	c := Config{Binary: bin, Info: version.FromBuildInfo(bi), Created: time.Unix(0, 0).UTC()}
	for _, s := range bi.Settings {
		switch s.Key {
		case "GOARCH":
			c.Arch = s.Value
		case "GOOS":
			if s.Value != "linux" {
				return Config{}, fmt.Errorf("image: %s is built for %s, want linux", path, s.Value)
			}
		case "CGO_ENABLED":
			if s.Value != "0" {
				return Config{}, fmt.Errorf("image: %s is built with cgo: build it with CGO_ENABLED=0, the image has no C library", path)
			}
		}
	}
	if c.Info.CommitTime != "" {
		if t, err := time.Parse(time.RFC3339, c.Info.CommitTime); err == nil {
			c.Created = t.UTC()
		}
	}
	return c, nil
}
