package etcdctl

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestFromEnv(t *testing.T) {
	newFS := func() (*pflag.FlagSet, *time.Duration, *[]string) {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		d := fs.Duration("command-timeout", 5*time.Second, "")
		eps := fs.StringSlice("endpoints", nil, "")
		return fs, d, eps
	}
	t.Setenv("ETCDCTL_COMMAND_TIMEOUT", "9s")
	t.Setenv("ETCDCTL_ENDPOINTS", "http://a:2379,http://b:2379")
	t.Setenv("ETCDCTL_NO_SUCH_FLAG", "1")
	fs, d, eps := newFS()
	var warn bytes.Buffer
	if err := FromEnv(fs, &warn); err != nil {
		t.Fatal(err)
	}
	if *d != 9*time.Second || len(*eps) != 2 || !fs.Changed("endpoints") {
		t.Errorf("command-timeout %s endpoints %v", *d, *eps)
	}
	if w := warn.String(); w != "etcdperf: warning: unrecognized environment variable ETCDCTL_NO_SUCH_FLAG=1\n" {
		t.Errorf("warnings %q", w)
	}

	// The flag and its variable together: refused, as etcdctl does.
	fs, _, _ = newFS()
	if err := fs.Parse([]string{"--command-timeout", "1s"}); err != nil {
		t.Fatal(err)
	}
	warn.Reset()
	err := FromEnv(fs, &warn)
	if strings.Contains(warn.String(), "COMMAND_TIMEOUT") {
		t.Errorf("a shadowed variable is not unrecognized: %q", warn.String())
	}
	if !errors.Is(err, ErrShadowed) || !strings.Contains(err.Error(), "ETCDCTL_COMMAND_TIMEOUT") {
		t.Errorf("shadowed: %v", err)
	}

	t.Setenv("ETCDCTL_COMMAND_TIMEOUT", "soon")
	fs, _, _ = newFS()
	if err := FromEnv(fs, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "ETCDCTL_COMMAND_TIMEOUT") {
		t.Errorf("bad value: %v", err)
	}
}

func TestLookupNoRecords(t *testing.T) {
	// .invalid never resolves (RFC 2606): one error naming the domain.
	_, err := Lookup("etcdperf.invalid", "", false, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--discovery-srv etcdperf.invalid") || strings.Contains(err.Error(), "\n") {
		t.Errorf("%v", err)
	}
}
