package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, c := range []struct {
		name string
		bi   debug.BuildInfo
		want Info
		line string
		tag  string
	}{
		{
			name: "stamped, dirty",
			bi: debug.BuildInfo{
				GoVersion: "go1.26.8",
				Main:      debug.Module{Path: Module, Version: "v0.3.1-0.20261201071500-0123456789ab+dirty"},
				Deps:      []*debug.Module{{Path: etcdServer, Version: "v3.6.16"}},
				Settings: []debug.BuildSetting{
					{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
					{Key: "vcs.time", Value: "2026-12-01T07:15:00Z"},
					{Key: "vcs.modified", Value: "true"},
				},
			},
			want: Info{Module: Module, Version: "v0.3.1-0.20261201071500-0123456789ab+dirty", Commit: "0123456789abcdef0123456789abcdef01234567",
				CommitTime: "2026-12-01T07:15:00Z", Dirty: true, Go: "go1.26.8", Etcd: "3.6.16"},
			line: "etcdperf v0.3.1-0.20261201071500-0123456789ab+dirty (commit 0123456789ab, dirty, go1.26.8, embedded etcd 3.6.16)",
			tag:  "v0.3.1-0.20261201071500-0123456789ab-dirty",
		},
		{
			name: "go run: no stamp",
			bi:   debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "(devel)"}},
			want: Info{Module: Module, Version: "devel", Go: "go1.26.8"},
			line: "etcdperf devel (commit unknown, go1.26.8)",
			tag:  "devel",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := FromBuildInfo(&c.bi)
			if got != c.want {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
			if got.String() != c.line {
				t.Errorf("String %q, want %q", got.String(), c.line)
			}
			if got.Tag() != c.tag {
				t.Errorf("Tag %q, want %q", got.Tag(), c.tag)
			}
		})
	}
}

// TestGet: the test binary is built by the toolchain, so it has build info.
func TestGet(t *testing.T) {
	i := Get()
	if i.Go == "" || i.Version == "" || !strings.HasPrefix(i.Go, "go") {
		t.Errorf("%+v", i)
	}
}
