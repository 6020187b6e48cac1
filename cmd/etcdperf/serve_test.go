package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeSIGTERM runs the binary as a canary: -w json prints one startup
// object with the address, /metrics answers, and SIGTERM mid-probe stops it
// with exit 0, its keys deleted and nothing outside its prefix touched.
func TestServeSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	ep, cli := benchEtcd(t)
	s := startBin(t, t.TempDir(), "serve", "--endpoints", ep, "--every", "20s", "--listen", "127.0.0.1:0", "-w", "json", "--results-dir", t.TempDir())
	var start struct {
		Listen string `json:"listen"`
		Prefix string `json:"prefix"`
	}
	s.waitFor(t, "the startup line", func() bool { return json.Unmarshal(s.stdout.Bytes(), &start) == nil })
	s.waitFor(t, "keys under "+start.Prefix, func() bool { return prefixKeys(t, cli, start.Prefix) > 0 })
	resp, err := http.Get("http://" + start.Listen + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "etcdperf_build_info{") {
		t.Errorf("/metrics of the binary lacks etcdperf_build_info:\n%.2000s", b)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !s.wait(45 * time.Second) {
		t.Fatal("still running 45 s after SIGTERM")
	}
	if s.code != ExitOK {
		t.Errorf("exit %d after SIGTERM, want 0: %s", s.code, s.stderr.String())
	}
	if n := prefixKeys(t, cli, "/etcdperf/"); n != 0 {
		t.Errorf("%d keys left under /etcdperf/", n)
	}
	checkUntouched(t, cli)
}

// TestServeRefuses: bad flags (a period too short for the probe's load, a
// profile serve does not probe with, an instance that is no directory name) are
// refused with one line and exit 2; a key of someone else's under the prefix is
// left alone.
func TestServeRefuses(t *testing.T) {
	if testing.Short() {
		t.Skip("live run")
	}
	ep, cli := benchEtcd(t)
	if _, err := cli.Put(context.Background(), "/etcdperf/serve/theirs", "x"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile", "kubernetes", "--every", "1h"}, "serve probes with puts and gets"},
		{[]string{"--instance", "a/b"}, "must not hold a /"},
		{[]string{"--every", "5s"}, "--every 5s is too short"},
		{[]string{"--load", "xxl"}, "want tiny, s, m, l or xl"},
		{[]string{"--load", "s", "--profile", "read-heavy"}, "not both"},
	} {
		r := runBin(t, nil, append([]string{"serve", "--endpoints", ep, "--listen", "127.0.0.1:0"}, c.args...)...)
		if r.code != ExitError || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if n := prefixKeys(t, cli, "/etcdperf/serve/"); n != 1 {
		t.Errorf("%d keys under the prefix after the refusal, want the 1 that was there", n)
	}
}
