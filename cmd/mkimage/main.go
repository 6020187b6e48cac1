// Command mkimage writes etcdperf's container image as an OCI archive from a
// static etcdperf binary, without a container runtime (make image runs it).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/etcdperf/etcdperf/internal/k8s/image"
)

func main() {
	bin := flag.String("binary", "bin/etcdperf-static", "static (CGO_ENABLED=0) linux etcdperf binary")
	out := flag.String("out", "bin/etcdperf-image.tar", "OCI archive to write")
	flag.Parse()
	if err := run(*bin, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(2)
	}
}

func run(bin, out string) error {
	c, err := image.FromBinary(bin)
	if err != nil {
		return err
	}
	// SOURCE_DATE_EPOCH (reproducible-builds.org) overrides the commit time.
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil || sec < 0 {
			return fmt.Errorf("SOURCE_DATE_EPOCH %q: want unix seconds", s)
		}
		c.Created = time.Unix(sec, 0).UTC()
	}
	img, err := image.Build(c)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".etcdperf-image-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := image.WriteOCIArchive(tmp, img, c.Ref(), c.Info.Tag(), c.Created); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s@%s\n", out, c.Ref(), digest)
	return nil
}
