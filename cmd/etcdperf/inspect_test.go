package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/inspect"
	"github.com/etcdperf/etcdperf/internal/clustertest"
)

func TestInspectBadInvocations(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a snapshot\n", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"zero depth", []string{"inspect", "--snapshot", notDB, "--depth", "0"}, "--depth must be positive"},
		{"negative depth", []string{"inspect", "--depth=-2"}, "--depth must be positive"},
		{"bad values mode", []string{"inspect", "--values", "some"}, "--values"},
		{"bad byte size", []string{"inspect", "--page-bytes", "lots"}, "not a byte size"},
		{"not a snapshot", []string{"inspect", "--snapshot", notDB}, "not a bbolt database"},
		{"missing snapshot", []string{"inspect", "--snapshot", filepath.Join(dir, "nope")}, "no such file"},
		{"snapshot with endpoints", []string{"inspect", "--snapshot", notDB, "--endpoints", "127.0.0.1:1"}, "cannot be combined"},
		{"live flag on a snapshot", []string{"inspect", "--snapshot", notDB, "--max-rps", "5"}, "--max-rps is for live"},
		{"bad previous", []string{"inspect", "--snapshot", notDB, "--previous", notDB}, "--previous"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, nil, tc.args...)
			assertCleanError(t, r)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, tc.want)
			}
		})
	}
}

// inspectJSON is the part of the inspect output contract the e2e test checks.
type inspectJSON struct {
	Revision int64 `json:"revision"`
	Total    struct {
		Keys       int64 `json:"keys"`
		KeyBytes   int64 `json:"key_bytes"`
		ValueBytes int64 `json:"value_bytes"`
	} `json:"total"`
	Prefixes []struct {
		Prefix     string `json:"prefix"`
		Keys       int64  `json:"keys"`
		KeyBytes   int64  `json:"key_bytes"`
		ValueBytes int64  `json:"value_bytes"`
	} `json:"prefixes"`
	ValueSize map[string]int64 `json:"value_size_bytes"`
	Findings  []struct {
		Class    string            `json:"class"`
		Severity string            `json:"severity"`
		Summary  string            `json:"summary"`
		Evidence []json.RawMessage `json:"evidence"`
	} `json:"findings"`
}

func TestInspectEndToEnd(t *testing.T) {
	ctx := context.Background()
	c := clustertest.Start(t, cluster.Config{TickMs: 10, ElectionMs: 100})
	cli := clustertest.Client(t, c)
	// 20 keys of 300 B under /app/a/, 5 of 2 KiB under /app/b/, each /app/b/ key written twice.
	wantKeys, wantKeyBytes, wantValueBytes := int64(0), int64(0), int64(0)
	put := func(k string, n int) {
		if _, err := cli.Put(ctx, k, strings.Repeat("x", n)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		k := fmt.Sprintf("/app/a/%02d", i)
		put(k, 300)
		wantKeys, wantKeyBytes, wantValueBytes = wantKeys+1, wantKeyBytes+int64(len(k)), wantValueBytes+300
	}
	for i := 0; i < 5; i++ {
		k := fmt.Sprintf("/app/b/%d", i)
		put(k, 10)
		put(k, 2048)
		wantKeys, wantKeyBytes, wantValueBytes = wantKeys+1, wantKeyBytes+int64(len(k)), wantValueBytes+2048
	}
	rev := func() int64 {
		resp, err := cli.Get(ctx, "/app/a/00")
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	before := rev()
	check := func(mode string, r result) inspectJSON {
		t.Helper()
		if r.code != ExitOK {
			t.Fatalf("%s: exit %d: %s", mode, r.code, r.stderr)
		}
		var out inspectJSON
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("%s: stdout is not one JSON object: %v\n%s", mode, err, r.stdout)
		}
		if out.Total.Keys != wantKeys || out.Total.KeyBytes != wantKeyBytes || out.Total.ValueBytes != wantValueBytes {
			t.Errorf("%s: total %+v, want %d keys, %d key bytes, %d value bytes", mode, out.Total, wantKeys, wantKeyBytes, wantValueBytes)
		}
		if len(out.Prefixes) != 2 || out.Prefixes[0].Prefix != "/app/b/" || out.Prefixes[0].Keys != 5 || out.Prefixes[1].Keys != 20 {
			t.Errorf("%s: prefixes %+v", mode, out.Prefixes)
		}
		if out.ValueSize["max"] != 2048 || out.Revision != before || len(out.Findings) == 0 {
			t.Errorf("%s: value sizes %v, revision %d (want %d), %d findings", mode, out.ValueSize, out.Revision, before, len(out.Findings))
		}
		return out
	}
	ep := strings.Join(c.Endpoints(), ",")
	check("live", runBin(t, nil, "inspect", "--endpoints", ep, "--page-size", "4", "--max-rps", "0", "-w", "json"))
	if after := rev(); after != before {
		t.Errorf("live inspect moved the revision from %d to %d", before, after)
	}
	for _, w := range []string{"simple", "table"} {
		if r := runBin(t, nil, "inspect", "--endpoints", ep, "-w", w); r.code != ExitOK || !strings.Contains(r.stdout, "/app/b/") {
			t.Errorf("-w %s: exit %d, stdout %q, stderr %q", w, r.code, r.stdout, r.stderr)
		}
	}

	snap := filepath.Join(t.TempDir(), "snap.db")
	rc, err := cli.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(snap)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, rc); err != nil {
		t.Fatal(err)
	}
	rc.Close()
	f.Close()
	raw, _ := os.ReadFile(snap)
	sum := sha256.Sum256(raw)
	check("snapshot", runBin(t, nil, "inspect", "--snapshot", snap, "-w", "json"))
	if after, _ := os.ReadFile(snap); sha256.Sum256(after) != sum {
		t.Error("inspect --snapshot changed the file")
	}
	// An earlier inspection's output (here: this one, a day older and half the size)
	// gives the growth rate.
	prev := filepath.Join(t.TempDir(), "prev.json")
	var full inspect.Result
	r := runBin(t, nil, "inspect", "--snapshot", snap, "-w", "json")
	if err := json.Unmarshal([]byte(r.stdout), &full); err != nil {
		t.Fatal(err)
	}
	full.InspectedAt = full.InspectedAt.Add(-24 * time.Hour)
	full.DB.SizeBytes /= 2
	b, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prev, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r = runBin(t, nil, "inspect", "--snapshot", snap, "--previous", prev, "-w", "json")
	var grown inspect.Result
	if err := json.Unmarshal([]byte(r.stdout), &grown); err != nil || grown.Growth == nil || grown.Growth.BytesPerDay <= 0 || grown.Growth.DaysToQuota == nil {
		t.Errorf("growth from --previous: %v, %+v (stderr %s)", err, grown.Growth, r.stderr)
	}

	raw[len(raw)/3] ^= 0x55
	tampered := filepath.Join(t.TempDir(), "tampered.db")
	if err := os.WriteFile(tampered, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	r = runBin(t, nil, "inspect", "--snapshot", tampered)
	assertCleanError(t, r)
	if !strings.Contains(r.stderr, "sha256") {
		t.Errorf("tampered snapshot: %q", r.stderr)
	}

	// With auth on, a client without read permission gets one clear line and exit 2.
	for _, step := range []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "reader", "pw"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	r = runBin(t, nil, "inspect", "--endpoints", ep, "--user", "reader:pw")
	assertCleanError(t, r)
	if !strings.Contains(r.stderr, "no permission to range") {
		t.Errorf("no permission: %q", r.stderr)
	}
}
