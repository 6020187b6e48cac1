package hardware

import (
	"io/fs"
	"testing"
	"testing/fstest"
)

// TestDataDirOf reads an etcd process's data dir as etcd resolves it: the flag
// (either form), the environment, or <name>.etcd in its working directory.
func TestDataDirOf(t *testing.T) {
	proc := func(cmdline, environ string) fstest.MapFS {
		return fstest.MapFS{
			"proc/7/cmdline": {Data: []byte(cmdline)},
			"proc/7/environ": {Data: []byte(environ)},
			"proc/7/cwd":     {Data: []byte("/srv/etcd"), Mode: fs.ModeSymlink},
		}
	}
	for _, tc := range []struct {
		name, cmdline, environ, want string
	}{
		{"flag with =", "etcd\x00--name\x00m1\x00--data-dir=/var/lib/etcd\x00", "", "/var/lib/etcd"},
		{"flag and value", "etcd\x00--data-dir\x00/var/lib/etcd\x00--name=m1\x00", "", "/var/lib/etcd"},
		{"relative flag", "etcd\x00-data-dir=data\x00", "", "/srv/etcd/data"},
		{"environment", "etcd\x00", "HOME=/root\x00ETCD_DATA_DIR=/data\x00", "/data"},
		{"default from the name", "etcd\x00--name=m1\x00", "", "/srv/etcd/m1.etcd"},
		{"default", "etcd\x00", "", "/srv/etcd/default.etcd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DataDirOf(tree(t, proc(tc.cmdline, tc.environ)), 7); got != tc.want {
				t.Errorf("DataDirOf = %q, want %q", got, tc.want)
			}
		})
	}
	if got := DataDirOf(tree(t, fstest.MapFS{}), 7); got != "" {
		t.Errorf("no process: %q, want empty", got)
	}
}
