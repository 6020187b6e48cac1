package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/etcdperf/etcdperf/results"
)

// Names of the archive's files.
const (
	manifestFile = "manifest.json"
	readmeFile   = "README.txt"
	dataFile     = "bundle.json"
	runFile      = "run.json"
	probeFile    = "probe.json"
)

// maxFile bounds what Read takes of one file of an archive: a bundle's largest
// file is run.json with two scrapes of every member (some hundred KiB each), so
// 256 MiB is never reached by a bundle and stops a hostile archive.
const maxFile = 256 << 20

// ErrNotBundle marks a file that is not a bundle (not gzip, or no manifest).
var ErrNotBundle = errors.New("not an etcdperf bundle")

// Write writes b to path as a gzipped tar atomically (a temp file in the same
// folder, synced, then renamed): a reader never sees half a bundle. It fills
// b.Manifest.Files.
func Write(path string, b *Bundle) (err error) {
	files, err := b.encode()
	if err != nil {
		return err
	}
	err = results.WriteAtomic(path, 0o600, func(w io.Writer) error {
		zw := gzip.NewWriter(w)
		tw := tar.NewWriter(zw)
		for _, file := range files {
			hdr := &tar.Header{Name: file.name, Mode: 0o644, Size: int64(len(file.body)), ModTime: b.Manifest.CreatedAt, Typeflag: tar.TypeReg}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if _, err := tw.Write(file.body); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return zw.Close()
	})
	if err != nil {
		return fmt.Errorf("write bundle %s: %w", path, err)
	}
	return nil
}

type archived struct {
	name string
	body []byte
}

// encode is the archive's files, the manifest first and listing the others.
func (b *Bundle) encode() ([]archived, error) {
	b.Data.SchemaVersion, b.Manifest.SchemaVersion = SchemaVersion, SchemaVersion
	var files []archived
	add := func(name, what string, v any) error {
		var body []byte
		if s, ok := v.(string); ok {
			body = []byte(s)
		} else {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", " ")
			if err := enc.Encode(v); err != nil {
				return fmt.Errorf("bundle: %s: %w", name, err)
			}
			body = buf.Bytes()
		}
		files = append(files, archived{name, body})
		b.Manifest.Files = append(b.Manifest.Files, File{Name: name, Bytes: int64(len(body)), What: what})
		return nil
	}
	b.Manifest.Files = nil
	if err := add(readmeFile, "how to read this bundle", readme(b)); err != nil {
		return nil, err
	}
	if err := add(dataFile, "members' status, reads, round trips, key space, data dirs, repair cost (docs/bundle.md)", b.Data); err != nil {
		return nil, err
	}
	if b.Run != nil {
		if err := add(runFile, "run file: membership, /metrics scrapes, alarms, host facts and the verdict (docs/run-file.schema.json)", b.Run); err != nil {
			return nil, err
		}
	}
	if b.Probe != nil {
		if err := add(probeFile, "run file of --probe's check --load tiny", b.Probe); err != nil {
			return nil, err
		}
	}
	m, err := json.MarshalIndent(b.Manifest, "", " ")
	if err != nil {
		return nil, fmt.Errorf("bundle: manifest: %w", err)
	}
	return append([]archived{{manifestFile, append(m, '\n')}}, files...), nil
}

// Open reads the bundle at path.
func Open(path string) (*Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read bundle: %w", err)
	}
	defer f.Close()
	b, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Is says whether the file at path starts as a gzip stream does, as a bundle
// does and a run file (JSON) never does.
func Is(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [2]byte
	_, err = io.ReadFull(f, head[:])
	return err == nil && head == [2]byte{0x1f, 0x8b}
}

// Read decodes a bundle from r: its manifest and bundle.json of this schema
// version, its run files checked as results.Decode checks them.
func Read(r io.Reader) (*Bundle, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotBundle, err)
	}
	tr := tar.NewReader(zr)
	b := &Bundle{}
	seen := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotBundle, err)
		}
		switch {
		case hdr.Typeflag != tar.TypeReg || hdr.Size > maxFile:
			continue
		case hdr.Name != manifestFile && hdr.Name != dataFile && hdr.Name != runFile && hdr.Name != probeFile:
			continue // README.txt, and files of later versions
		}
		body, err := io.ReadAll(io.LimitReader(tr, maxFile))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrNotBundle, hdr.Name, err)
		}
		seen[hdr.Name] = true
		switch hdr.Name {
		case manifestFile:
			err = json.Unmarshal(body, &b.Manifest)
		case dataFile:
			err = json.Unmarshal(body, &b.Data)
		case runFile:
			b.Run, err = results.Decode(bytes.NewReader(body))
		case probeFile:
			b.Probe, err = results.Decode(bytes.NewReader(body))
		}
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", hdr.Name, err)
		}
	}
	if !seen[manifestFile] || !seen[dataFile] {
		return nil, fmt.Errorf("%w: no %s and %s", ErrNotBundle, manifestFile, dataFile)
	}
	for _, v := range []int{b.Manifest.SchemaVersion, b.Data.SchemaVersion} {
		if v != SchemaVersion {
			return nil, fmt.Errorf("bundle schema version %d; this build reads version %d", v, SchemaVersion)
		}
	}
	return b, nil
}
