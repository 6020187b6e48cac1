package qualify

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	ok := Config{DataDir: dir, Duration: time.Second, P99: 100 * time.Millisecond}
	if err := ok.Validate(false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		want   string
		remote bool
		set    func(*Config)
	}{
		{"drop --endpoints", true, func(*Config) {}},
		{"--data-dir is required", false, func(c *Config) { c.DataDir = "" }},
		{"not an existing folder", false, func(c *Config) { c.DataDir = filepath.Join(dir, "nope") }},
		{"--tier", false, func(c *Config) { c.Tier = "huge" }},
		{"--duration", false, func(c *Config) { c.Duration = 0 }},
		{"--p99", false, func(c *Config) { c.P99 = -time.Second }},
	} {
		c := ok
		tc.set(&c)
		if err := c.Validate(tc.remote); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error naming %q, got %v", tc.want, err)
		}
	}
	if err := ok.CheckHost(&results.Host{DataDirFS: "tmpfs"}); err == nil || !strings.Contains(err.Error(), "in memory") {
		t.Errorf("tmpfs: %v", err)
	}
	if err := ok.CheckHost(&results.Host{DataDirFS: "ext4"}); err != nil {
		t.Errorf("ext4: %v", err)
	}
	// A folder that is not there cannot be probed: the user's input, one line.
	_, err := Config{DataDir: filepath.Join(dir, "nope")}.Probe(context.Background())
	var cannot *CannotProbeError
	if !errors.As(err, &cannot) || cannot.Error() != cannot.Err.Error() {
		t.Errorf("probe of a missing folder: %v", err)
	}
}
