// Package version says which etcdperf this is: the module version, the VCS commit
// and whether the tree was dirty, as the Go toolchain stamps them into the binary,
// the Go version and the etcd release it embeds. The same facts are read from this
// process (Get) or from a binary file (the image builder labels its image with them).
package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Module is etcdperf's module path.
const Module = "github.com/etcdperf/etcdperf"

// etcdServer is the module whose version is the embedded etcd release.
const etcdServer = "go.etcd.io/etcd/server/v3"

// Info is what a run file, --version and the image labels record.
type Info struct {
	Module     string `json:"module"`
	Version    string `json:"version"`               // module version, "devel" when the toolchain stamped none
	Commit     string `json:"commit,omitempty"`      // vcs.revision
	CommitTime string `json:"commit_time,omitempty"` // vcs.time, RFC 3339
	Dirty      bool   `json:"dirty"`                 // vcs.modified: built from uncommitted changes
	Go         string `json:"go"`                    // toolchain that built the binary
	Etcd       string `json:"embedded_etcd"`         // etcd server release linked in, e.g. 3.6.16
}

// Get is the running binary's Info.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Module: Module, Version: "devel"}
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo reads an Info from a binary's build info.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	i := Info{Module: bi.Main.Path, Version: bi.Main.Version, Go: bi.GoVersion}
	if i.Module == "" {
		i.Module = Module
	}
	if i.Version == "" || i.Version == "(devel)" {
		i.Version = "devel"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.time":
			i.CommitTime = s.Value
		case "vcs.modified":
			i.Dirty = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		if d.Path == etcdServer {
			if d.Replace != nil {
				d = d.Replace
			}
			i.Etcd = strings.TrimPrefix(d.Version, "v")
		}
	}
	return i
}

// ShortCommit is the commit's first 12 hex digits ("unknown" without VCS
// stamping, as in go run or a build outside the repository).
func (i Info) ShortCommit() string {
	switch {
	case i.Commit == "":
		return "unknown"
	case len(i.Commit) > 12:
		return i.Commit[:12]
	}
	return i.Commit
}

// String is the one line --version prints.
func (i Info) String() string {
	dirty := ""
	if i.Dirty {
		dirty = ", dirty"
	}
	etcd := ""
	if i.Etcd != "" {
		etcd = ", embedded etcd " + i.Etcd
	}
	return fmt.Sprintf("etcdperf %s (commit %s%s, %s%s)", i.Version, i.ShortCommit(), dirty, i.Go, etcd)
}

// Tag is the version as an image tag: OCI tags allow [A-Za-z0-9_.-] only, so the
// "+dirty" the toolchain appends becomes "-dirty".
func (i Info) Tag() string {
	tag := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '-'
	}, i.Version)
	if len(tag) > 128 {
		tag = tag[:128]
	}
	return tag
}
