package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	fc "github.com/etcdperf/etcdperf/internal/flagcheck"
)

// badStrings are a refused value of each string flag; freeStrings are the string
// flags any value of which is accepted, with why.
var (
	badStrings = map[string]string{
		"write-out": "xml", "format": "pdf", "pattern": "zigzag", "load": "xxl", "profile": "no-such-profile",
		"tier": "huge", "results": "s3", "slo": "p99=fast", "consistency": "maybe", "user": "",
		"size": "lots", "ratios": "put=x", "cacert": "/nonexistent/ca.pem",
		"cert": "/nonexistent/cert.pem", "key": "/nonexistent/key.pem", "prometheus-http-config": "/nonexistent.yml",
		"tls-secret": "Bad_Name", "name": "Bad_Name", "namespace": "Bad_NS",
		"cpu": "lots", "memory": "lots", "threshold": "much", "keys": "all", "listen": "no-port", "transport": "quic", "rule-label": "novalue",
		"instance": "a/b", "web.config.file": "/nonexistent/web.yml", "config.file": "/nonexistent/canary.yml", "web-config-secret": "Bad_Name", "cluster-name": `a"b`,
	}
	freeStrings = map[string]string{
		"prefix": "any key prefix", "data-dir": "created", "results-dir": "created", "run-file": "created",
		"password": "any password", "dir": "checked by the probe when it runs", "plots": "created",
		"report": "created", "output": "created", "image": "any image reference", "key-prefix": "any key prefix",
		"member": "named at run time", "members": "named at run time", "new-member": "checked with the cluster",
		"restart-cmd": "a shell command", "start-cmd": "a shell command", "retire-cmd": "a shell command",
		"shape": "checked with the cluster", "kubernetes": "checked by the plan model", "kube-assume": "checked by the plan model",
		"selector": "PromQL matchers, checked by Prometheus", "container-selector": "PromQL matchers, checked by Prometheus", "metrics-urls": "URLs, checked when scraped",
		"values": "checked by inspect", "cpu-profile": "created", "endpoints": "checked when dialled",
		"analysis": "read when rendered", "snapshot": "read when inspected", "previous": "read when inspected",
		"metrics": "read when analyzed", "prometheus": "checked when queried",
		"discovery-srv-name": "a service name, used with --discovery-srv",
		"discovery-srv":      "resolved when a command connects (internal/etcdctl's TestLookupNoRecords)",
		"pvc":                "read with --results pvc only; TestManifestRefusesBadJobs refuses a bad one",
		"disk-dir":           "checked by the fsync probe when it runs (serve)",
		"kube-model":         "read with --kubernetes only (plan_kube tests)", "val-size": "plan's, read with --datascale only (bench's is numeric)",
	}
)

// badValues are values of f that must be refused: one that does not parse for
// its type, and those its rule excludes.
func badValues(t *testing.T, f *pflag.Flag) []string {
	var out []string
	switch f.Value.Type() {
	case "bool":
		return []string{"maybe"}
	case "time":
		return []string{"soon"}
	case "duration":
		out = append(out, "fast")
	case "string", "stringSlice", "stringArray":
		if v, ok := badStrings[f.Name]; ok {
			return []string{v}
		}
		if _, ok := freeStrings[f.Name]; !ok {
			t.Errorf("--%s (%s): no case: add a refused value to badStrings or the reason any value is fine to freeStrings", f.Name, f.Value.Type())
		}
		return nil
	default:
		if !fc.Numeric(f) {
			t.Errorf("--%s: type %s has no cases", f.Name, f.Value.Type())
			return nil
		}
		out = append(out, "abc")
	}
	r, ok := flagRules[f.Name]
	if !ok {
		t.Errorf("--%s (%s): no rule in flagRules", f.Name, f.Value.Type())
		return out
	}
	unit := ""
	if f.Value.Type() == "duration" {
		unit = "s"
	}
	switch r.Kind {
	case fc.Positive:
		out = append(out, "0"+unit, "-1"+unit)
	case fc.NonNegative:
		out = append(out, "-1"+unit)
	case fc.Fraction:
		out = append(out, "1.5", "-0.5")
	case fc.Between:
		out = append(out, fmt.Sprint(r.Max+1), fmt.Sprint(r.Min-1))
	}
	// An unsigned flag refuses -1 when it parses.
	return out
}

// positional are the arguments a command needs to reach its flag checks, and
// context the flags it requires (given before the bad one, which then wins).
var (
	positional = map[string][]string{
		"etcdperf report": {"run.json"}, "etcdperf compare": {"a.json", "b.json"}, "etcdperf merge": {"a.json"},
		"etcdperf profiles show": {"check-perf-s"}, "etcdperf k8s job": {"--", "bench", "put", "--endpoints=x"},
		"etcdperf k8s worker": {"--", "bench", "put", "--run-file=x"},
		"etcdperf k8s canary": {"--", "--endpoints=x"},
	}
	contextArgs = map[string][]string{
		"etcdperf k8s job": {"--workers=2"},
		"etcdperf plan":    {"--profile=check-perf-s", "--slo=p99=25ms", "--endpoints=http://127.0.0.1:1"},
		"etcdperf qualify": {"--data-dir=/nonexistent-etcdperf-dir"},
		"etcdperf analyze": {"--prometheus=http://127.0.0.1:1", "--from=1800000000", "--to=1800000060"},
	}
)

// TestBadFlagValues is the bad-input table of every flag of every command,
// derived from the command tree: each refused value exits 2 with one line naming
// the flag, before anything runs, and writes nothing.
func TestBadFlagValues(t *testing.T) {
	n := 0
	inherited := map[string]bool{} // an inherited flag is checked by its parent alike for every command: once
	for path, cmd := range leaves(t) {
		if path == "etcdperf help" || strings.HasPrefix(path, "etcdperf completion") {
			continue // cobra's own; they take the global flags only to ignore them
		}
		words := strings.Fields(strings.TrimPrefix(path, "etcdperf "))
		visit := func(f *pflag.Flag) {
			if f.Name == "help" || f.Hidden {
				return
			}
			for _, v := range badValues(t, f) {
				n++
				dir := t.TempDir()
				args := append(append(slices.Clone(words), contextArgs[path]...), "--"+f.Name+"="+v, "--results-dir", filepath.Join(dir, "runs"))
				if f.Name == "results-dir" {
					args = args[:len(args)-2]
				}
				args = append(args, positional[path]...)
				r := runBinIn(t, dir, args...)
				name := fmt.Sprintf("%s --%s=%s", path, f.Name, v)
				if r.code != ExitError || strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 {
					t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line", name, r.code, r.stderr)
					continue
				}
				if !strings.Contains(r.stderr, "--"+f.Name) && !strings.Contains(r.stderr, "-"+f.Shorthand+" ") && !strings.Contains(r.stderr, f.Name) {
					t.Errorf("%s: %q does not name the flag", name, r.stderr)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("%s: wrote %v", name, entries)
				}
			}
		}
		// The command's own flags and those it inherits (the connection flags, -w).
		cmd.LocalFlags().VisitAll(visit)
		cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if !inherited[f.Name] {
				inherited[f.Name] = true
				visit(f)
			}
		})
	}
	t.Logf("%d refused values", n)
}

// TestTransportFlag: --transport is a connection flag, so every load command
// has it with one rule: a value other than lean, grpc or grpc-tuned is refused
// before anything runs, in one line naming the values; the empty value too.
func TestTransportFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "put", "--transport", "quic"}, `--transport must be one of lean, grpc, grpc-tuned, got "quic"`},
		{[]string{"bench", "txn", "--transport="}, `--transport must be one of lean, grpc, grpc-tuned, got ""`},
		{[]string{"check", "--transport", "GRPC"}, `got "GRPC"`},
		{[]string{"plan", "--profile=check-perf-s", "--slo=p99=25ms", "--transport", "h2"}, `got "h2"`},
		{[]string{"qualify", "--transport", "h2"}, `got "h2"`},
		{[]string{"drill", "rolling-restart", "--transport", "h2"}, `got "h2"`},
		{[]string{"drill", "replace-member", "--transport", "h2"}, `got "h2"`},
	} {
		dir := t.TempDir()
		r := runBinIn(t, dir, append(tc.args, "--results-dir", filepath.Join(dir, "runs"))...)
		if r.code != ExitError || strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, r.code, r.stderr, tc.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%v: wrote %v", tc.args, entries)
		}
	}
	// Every value is shown in the help of every command that drives load.
	for _, c := range [][]string{{"bench", "put"}, {"check"}, {"plan"}, {"qualify"}, {"drill", "rolling-restart"}} {
		r := runBin(t, nil, append(c, "--help")...)
		if r.code != 0 || !strings.Contains(r.stdout, "--transport string") || !strings.Contains(r.stdout, "grpc-tuned") {
			t.Errorf("%v --help: exit %d, no --transport in\n%s", c, r.code, r.stdout)
		}
	}
}
