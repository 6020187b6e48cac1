package conn

import (
	"strings"
	"testing"
	"time"
)

// valid is the flags' defaults.
func valid() Config {
	return Config{DialTimeout: 2 * time.Second, EmbeddedMembers: 1, InsecureTransport: true}
}

func TestValidate(t *testing.T) {
	f, _, _ := certs(t)
	for _, c := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"defaults", func(*Config) {}, ""},
		{"dial timeout", func(c *Config) { c.DialTimeout = 0 }, "--dial-timeout must be positive"},
		{"negative limit", func(c *Config) { c.MaxRecvBytes = -1 }, "must not be negative"},
		{"members", func(c *Config) { c.EmbeddedMembers = 8 }, "between 1 and 7"},
		{"cert without key", func(c *Config) { c.Cert = f.ClientCert }, "--cert and --key go together"},
		{"data dir with endpoints", func(c *Config) { c.Endpoints, c.DataDir = []string{"127.0.0.1:2379"}, "/tmp/x" }, "--data-dir is for the embedded etcd"},
		{"missing CA", func(c *Config) { c.CACert = "/nonexistent/ca.pem" }, "--cacert: stat /nonexistent/ca.pem"},
		{"TLS files", func(c *Config) { c.CACert, c.Cert, c.Key = f.CA, f.ClientCert, f.ClientKey }, ""},
	} {
		cfg := valid()
		c.set(&cfg)
		err := cfg.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Validate() = %v, want %q", c.name, err, c.want)
		}
	}
}

func TestTLSConfig(t *testing.T) {
	f, _, _ := certs(t)
	for _, c := range []struct {
		name    string
		set     func(*Config)
		wantTLS bool
	}{
		{"plain", func(*Config) {}, false},
		{"https endpoint", func(c *Config) { c.Endpoints = []string{"127.0.0.1:2379", "https://127.0.0.1:2380"} }, true},
		{"--insecure-transport=false", func(c *Config) { c.InsecureTransport = false }, true},
		{"--cacert", func(c *Config) { c.CACert = f.CA }, true},
		{"--insecure-skip-tls-verify", func(c *Config) { c.InsecureSkipTLS = true }, true},
	} {
		cfg := valid()
		c.set(&cfg)
		got, err := cfg.TLSConfig()
		if err != nil || (got != nil) != c.wantTLS {
			t.Errorf("%s: TLSConfig() = %v, %v; want TLS %v", c.name, got, err, c.wantTLS)
		}
	}
	cfg := valid()
	cfg.CACert = f.ClientKey // not a CA bundle
	if _, err := cfg.TLSConfig(); err == nil || !strings.Contains(err.Error(), "TLS files") {
		t.Errorf("a key as --cacert: %v", err)
	}
}

func TestClientConfigLimits(t *testing.T) {
	cfg := valid()
	if got := cfg.ClientConfig(nil, nil, "", ""); got.MaxCallSendMsgSize != DefaultMaxRequestBytes || got.MaxCallRecvMsgSize != DefaultMaxRecvBytes {
		t.Errorf("defaults: send %d recv %d", got.MaxCallSendMsgSize, got.MaxCallRecvMsgSize)
	}
	cfg.MaxRequestBytes, cfg.MaxRecvBytes = 1000, 2000
	got := cfg.ClientConfig([]string{"a"}, nil, "u", "p")
	if got.MaxCallSendMsgSize != 1000 || got.MaxCallRecvMsgSize != 2000 || got.Username != "u" || got.Password != "p" || got.DialTimeout != cfg.DialTimeout {
		t.Errorf("got %+v", got)
	}
}

func TestCredentials(t *testing.T) {
	for _, c := range []struct {
		user, password     string
		wantUser, wantPass string
		wantErr            string
	}{
		{"", "", "", "", ""},
		{"root:secret", "", "root", "secret", ""},
		{"root:", "", "root", "", ""},
		{"root", "secret", "root", "secret", ""},
		{"root:secret", "other", "", "", "cannot be used when --user includes a password"},
		{"root", "", "", "", "--user needs a password"}, // no terminal to prompt on
	} {
		cfg := valid()
		cfg.User, cfg.Password = c.user, c.password
		user, pass, err := cfg.Credentials(nil, nil)
		if user != c.wantUser || pass != c.wantPass || (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("--user %q --password %q: %q, %q, %v", c.user, c.password, user, pass, err)
		}
	}
}
