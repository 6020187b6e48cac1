package serve

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCanaryWebConfig serves with an exporter-toolkit web config that asks for
// basic auth: /metrics without credentials or with wrong ones is 401, with
// them 200.
func TestCanaryWebConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "web.yml")
	// bcrypt of "canary-secret" (cost 4), as node_exporter's web config takes it.
	const users = "basic_auth_users:\n  prom: $2a$04$ZyY7WYUJSfD.5eUv83HpIekWCCKHxWPeYcB2ojKTRuf2pkL7x8Jwa\n"
	if err := os.WriteFile(cfg, []byte(users), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &Canary{Exporter: NewExporter(BuildInfo{}, ""), Page: &Page{}, Schedule: Schedule{Every: time.Hour}, WebConfigFile: cfg}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- c.Run(ctx, l, func(context.Context) Result { return Result{Skipped: SkipUnreachable} })
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	url := "http://" + l.Addr().String() + "/metrics"
	for _, cred := range []struct {
		user, pass string
		want       int
	}{{"", "", http.StatusUnauthorized}, {"prom", "wrong", http.StatusUnauthorized}, {"prom", "canary-secret", http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if cred.user != "" {
			req.SetBasicAuth(cred.user, cred.pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != cred.want {
			t.Errorf("user %q password %q: %d, want %d", cred.user, cred.pass, resp.StatusCode, cred.want)
		}
	}
}
