// Command mkimage writes etcdperf's container image as an OCI archive from a
// static etcdperf binary, without a container runtime (make image runs it).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/etcdperf/etcdperf/k8s/image"
	"github.com/etcdperf/etcdperf/results"
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
	err = results.WriteAtomic(out, 0o644, func(w io.Writer) error {
		return image.WriteOCIArchive(w, img, c.Ref(), c.Info.Tag(), c.Created)
	})
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s@%s\n", out, c.Ref(), digest)
	return nil
}
