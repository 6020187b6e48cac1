package diskprobe

import (
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/internal/units"
)

func TestFioCommand(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		cfg     Config
		want    string
	}{
		{PatternFio, Config{Dir: "/var/lib/etcd"},
			"fio --rw=write --ioengine=sync --fdatasync=1 --directory=/var/lib/etcd --size=22m --bs=2300 --name=etcdperf"},
		{PatternFio, Config{Dir: "/data", BlockSize: 8000, Size: 100 << 20},
			"fio --rw=write --ioengine=sync --fdatasync=1 --directory=/data --size=100m --bs=8000 --name=etcdperf"},
		{PatternFio, Config{Dir: "/mnt/my disk", Size: 100000},
			"fio --rw=write --ioengine=sync --fdatasync=1 --directory='/mnt/my disk' --size=100000 --bs=2300 --name=etcdperf"},
		{PatternFio, Config{Dir: "/d", Size: 1000}, ""}, // invalid: smaller than a block
		{PatternWAL, Config{Dir: "/d"},
			"fio --rw=write --ioengine=sync --fdatasync=1 --directory=/d --filesize=64000000 --io_size=22m --bs=2304 --name=etcdperf-wal"},
		{PatternEtcd, Config{Dir: "/d", Pattern: PatternEtcd, Size: 1 << 30},
			"fio --rw=write --ioengine=sync --fdatasync=1 --directory=/d --filesize=64000000 --io_size=1g --bs=2304 --name=etcdperf-wal"},
		{PatternBackend, Config{Dir: "/d"}, ""},
	} {
		if got := FioCommand(tc.pattern, tc.cfg); got != tc.want {
			t.Errorf("FioCommand(%s, %+v)\n got %s\nwant %s", tc.pattern, tc.cfg, got, tc.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/etcd": "/var/lib/etcd",
		"a b":           "'a b'",
		"it's":          `'it'\''s'`,
		"":              "''",
		"$HOME":         "'$HOME'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for in, want := range map[int64]string{
		22 << 20: "22m", 1 << 30: "1g", 4096: "4k", 2300: "2300", 1536 << 10: "1536k", 3 << 40: "3t",
	} {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %s, want %s", in, got, want)
		}
		if back, err := units.ParseSize(want); err != nil || back != in {
			t.Errorf("units.ParseSize(FormatSize(%d)) = %d, %v", in, back, err)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := Config{Dir: "/d"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Pattern != PatternFio || c.Size != 22<<20 || c.BlockSize != 2300 || c.Duration != 0 {
		t.Errorf("defaults = %+v", c)
	}
	c, _ = Config{Pattern: PatternBackend}.withDefaults()
	if c.Duration != DefaultBackendDuration {
		t.Errorf("backend duration = %s, want %s", c.Duration, DefaultBackendDuration)
	}
	for _, bad := range []Config{
		{Pattern: "random"},
		{BlockSize: 10},
		{BlockSize: 4096, Size: 1000},
		{Size: -1},
		{Duration: -time.Second},
		{SegmentBytes: 4096},
		{CommitPages: 10000, DBBytes: 1 << 20},
	} {
		if _, err := bad.withDefaults(); err == nil {
			t.Errorf("withDefaults(%+v) accepted a bad config", bad)
		}
	}
}
