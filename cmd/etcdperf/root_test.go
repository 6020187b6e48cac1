package main

import (
	"encoding/json"
	"testing"
)

func TestVersion(t *testing.T) {
	r := runBin(t, nil, "version", "-w", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	if v["embedded_etcd"] == "" {
		t.Errorf("no embedded etcd version: %v", v)
	}
}

// TestBadInvocations is the collected bad-input table: each must print one line and exit 2.
func TestBadInvocations(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"unknown flag", nil, []string{"version", "--bogus"}},
		{"unknown command", nil, []string{"frobnicate"}},
		{"bad output format", nil, []string{"version", "-w", "xml"}},
		{"bad dial timeout", nil, []string{"version", "--dial-timeout", "abc"}},
		{"negative dial timeout", nil, []string{"version", "--dial-timeout", "-1s"}},
		{"bad env dial timeout", []string{"ETCDCTL_DIAL_TIMEOUT=soon"}, []string{"version"}},
		{"cert without key", nil, []string{"version", "--cert", "/etc/hostname"}},
		{"missing cacert", nil, []string{"version", "--cacert", "/nonexistent/ca.pem"}},
		{"zero embedded members", nil, []string{"version", "--embedded-members", "0"}},
		{"data dir with endpoints", nil, []string{"version", "--endpoints", "127.0.0.1:1", "--data-dir", "/tmp/x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertCleanError(t, runBin(t, tc.env, tc.args...))
		})
	}
}
