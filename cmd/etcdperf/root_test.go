package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/internal/version"
)

// TestVersion: version -w json is the build info; --version and version print
// the same line, with the commit when the binary was built in a git checkout (the
// toolchain does not read a git worktree's .git file); run files record the same.
func TestVersion(t *testing.T) {
	r := runBin(t, nil, "version", "-w", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var v version.Info
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not one version object: %v\n%s", err, r.stdout)
	}
	if v.Etcd == "" || !strings.HasPrefix(v.Go, "go") || v.Module != version.Module || v.Version == "" {
		t.Errorf("version %+v", v)
	}
	if fi, err := os.Stat("../../.git"); err == nil && fi.IsDir() && v.Commit == "" {
		t.Errorf("built in a git checkout, but no commit: %+v", v)
	}
	flag, cmd := runBin(t, nil, "--version"), runBin(t, nil, "version")
	if flag.code != 0 || flag.stdout != cmd.stdout || !strings.Contains(flag.stdout, "commit "+v.ShortCommit()) || !strings.Contains(flag.stdout, v.Etcd) {
		t.Errorf("--version %q, version %q", flag.stdout, cmd.stdout)
	}
	t.Logf("%s", strings.TrimSpace(flag.stdout))
	tab := runBin(t, nil, "version", "-w", "table")
	if !strings.HasPrefix(tab.stdout, "FIELD") || !strings.Contains(tab.stdout, v.Etcd) {
		t.Errorf("-w table: %q", tab.stdout)
	}
	// What run files record.
	if ti := toolInfo(); ti.EmbeddedEtcd != embeddedEtcdVersion() || ti.GoVersion != runtime.Version() {
		t.Errorf("run file tool %+v", ti)
	}
}

// TestBadInvocations is the collected bad-input table: each must print one line
// naming the problem, exit 2, and show no stack trace.
func TestBadInvocations(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	garbage := file("garbage.json", "{\"version\": 1, \"ops\": [{\"op\": 3")
	notMetrics := file("metrics.txt", "etcd_server_has_leader{ 1\n")
	badProfile := file("profile.yaml", "name: broken\nrate: [150\n")
	unknownField := file("fields.yaml", "name: x\nrats: 150\n")
	notSnapshot := file("snapshot.db", strings.Repeat("not bbolt ", 1000))
	notDir := file("not-a-dir", "")
	files, other := writeCerts(t, true), writeCerts(t, true)
	expired := writeCerts(t, false)
	expiredSrv := tlsServer(t, expired)
	hang := hangServer(t)
	refused := []string{"--endpoints", "127.0.0.1:1"} // a bench that got past its checks fails on this instead

	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string // in the one line on stderr
	}{
		{"unknown flag", nil, []string{"version", "--bogus"}, "unknown flag: --bogus"},
		{"unknown bench flag", nil, []string{"bench", "put", "--bogus"}, "unknown flag: --bogus"},
		{"unknown command", nil, []string{"frobnicate"}, "unknown command"},
		{"bad output format", nil, []string{"version", "-w", "xml"}, "xml"},
		{"bad dial timeout", nil, []string{"version", "--dial-timeout", "abc"}, "--dial-timeout"},
		{"negative dial timeout", nil, []string{"version", "--dial-timeout", "-1s"}, "--dial-timeout"},
		{"bad env dial timeout", []string{"ETCDCTL_DIAL_TIMEOUT=soon"}, []string{"version"}, "ETCDCTL_DIAL_TIMEOUT"},
		{"cert without key", nil, []string{"version", "--cert", "/etc/hostname"}, "--cert and --key"},
		{"missing cacert", nil, []string{"version", "--cacert", "/nonexistent/ca.pem"}, "--cacert"},
		{"zero embedded members", nil, []string{"version", "--embedded-members", "0"}, "--embedded-members"},
		{"data dir with endpoints", nil, []string{"version", "--endpoints", "127.0.0.1:1", "--data-dir", "/tmp/x"}, "--data-dir"},
		{"bad bench duration", nil, append([]string{"bench", "put", "--duration", "10x"}, refused...), "--duration"},
		{"negative bench duration", nil, append([]string{"bench", "put", "--duration", "-5s"}, refused...), "must not be negative"},
		{"negative total", nil, append([]string{"bench", "put", "--total", "-5"}, refused...), "--total"},
		{"NaN rate", nil, append([]string{"bench", "put", "--rate", "NaN"}, refused...), "--rate"},
		{"infinite rate", nil, append([]string{"bench", "range", "--rate", "+Inf"}, refused...), "--rate"},
		{"negative value size", nil, append([]string{"bench", "put", "--val-size", "-1"}, refused...), "--val-size"},
		{"negative key size", nil, append([]string{"bench", "watch", "--key-size", "-3"}, refused...), "--key-size"},
		{"negative clients", nil, append([]string{"bench", "mixed", "--clients", "-2"}, refused...), "--clients"},
		{"value over 1.5 MiB", nil, append([]string{"bench", "put", "--val-size", "1600000"}, refused...), "1.5 MiB"},
		{"negative disk size", nil, []string{"disk", "--size", "-1m"}, "--size"},
		{"negative block size", nil, []string{"disk", "--block-size", "-5", "--dir", dir}, "--block-size"},
		{"unknown disk pattern", nil, []string{"disk", "--pattern", "random", "--dir", dir}, "random"},
		{"bad inspect depth", nil, []string{"inspect", "--depth", "0"}, "--depth"},
		{"endpoint refuses", nil, []string{"bench", "put", "--endpoints", "127.0.0.1:1"}, "connection refused"},
		{"endpoint refuses, from env", []string{"ETCDCTL_ENDPOINTS=127.0.0.1:1"}, []string{"inspect"}, "connection refused"},
		{"endpoint hangs", nil, []string{"bench", "put", "--endpoints", hang, "--dial-timeout", "500ms"}, "no answer within the dial timeout"},
		{"TLS endpoint hangs", nil, []string{"inspect", "--endpoints", "https://" + hang, "--dial-timeout", "500ms"}, "no answer within the dial timeout"},
		{"expired server certificate", nil, []string{"bench", "put", "--endpoints", expiredSrv, "--cacert", expired.CA}, "certificate has expired"},
		{"mismatched cert and key", nil, []string{"bench", "put", "--endpoints", "https://127.0.0.1:1", "--cert", files.ClientCert, "--key", other.ClientKey}, "private key does not match"},
		{"empty user name", nil, append([]string{"bench", "put", "--user", ":"}, refused...), "the user name is empty"},
		{"empty user", nil, append([]string{"bench", "put", "--user", ""}, refused...), "the user name is empty"},
		{"user without password", nil, []string{"bench", "put", "--endpoints", "127.0.0.1:1", "--user", "u"}, "needs a password"},
		{"password twice", nil, []string{"bench", "put", "--endpoints", "127.0.0.1:1", "--user", "u:p", "--password", "q"}, "--password"},
		{"garbage run file", nil, []string{"report", garbage}, "not a run file"},
		{"garbage run file to analyze", nil, []string{"analyze", garbage}, "not a run file"},
		{"garbage metrics", nil, []string{"analyze", "--metrics", notMetrics, "--metrics", notMetrics}, "parse"},
		{"garbage profile", nil, []string{"check", "--profile", badProfile}, "profile.yaml"},
		{"profile with an unknown field", nil, []string{"check", "--profile", unknownField}, "unknown field"},
		{"garbage snapshot", nil, []string{"inspect", "--snapshot", notSnapshot}, "not a readable etcd snapshot"},
		{"results dir not writable", nil, append([]string{"bench", "put", "--results-dir", filepath.Join(notDir, "runs")}, refused...), "results dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, tc.env, tc.args...)
			assertCleanError(t, r)
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, tc.want)
			}
		})
	}
}
