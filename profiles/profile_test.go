package profiles

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestBuiltinProfilesParse(t *testing.T) {
	entries, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"check-perf-l", "check-perf-m", "check-perf-s", "check-perf-xl", "kubernetes", "large-ranges", "large-values", "read-heavy", "write-heavy"}
	var got []string
	for _, e := range entries {
		got = append(got, e.Profile.Name)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("built-in profiles %v, want %v", got, want)
	}
}

// TestCheckPerfLevels pins the check-perf profiles to etcdctl's checkPerfCfgMap
// (etcd 3.6.16 etcdctl/ctlv3/command/check.go) and its 256-byte keys, 1 KiB values.
func TestCheckPerfLevels(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rate    float64
		clients int
	}{{"check-perf-s", 150, 50}, {"check-perf-m", 1000, 200}, {"check-perf-l", 8000, 500}, {"check-perf-xl", 15000, 1000}} {
		e, err := Load(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		p := e.Profile
		if p.Rate != tc.rate || p.Clients != tc.clients || p.Connections != tc.clients ||
			time.Duration(p.Duration) != 60*time.Second || p.Warmup != 0 ||
			p.Keys.Size != 256 || p.Values.Size != 1024 || len(p.Ops) != 1 || p.Ops[0].Op != OpPut {
			t.Errorf("%s = %+v, want etcdctl's %g puts/s from %d clients for 60 s, 256-byte keys, 1 KiB values", tc.name, p, tc.rate, tc.clients)
		}
	}
}

const valid = `name: t
version: 1
description: test
rate: 100
clients: 10
duration: 10s
keys:
  size: 16
  space: 1000
values:
  size: 1KiB
ops:
  - op: put
    ratio: 0.5
  - op: range
    ratio: 0.5
    width: 10
`

// TestValidationErrors checks that each bad field is reported at its line.
func TestValidationErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		line       int
		want       string
	}{
		{"unknown top-level field", strings.Replace(valid, "rate: 100", "rat: 100", 1), 4, `rat: unknown field "rat"`},
		{"unknown op field", valid + "    widht: 3\n", 18, `ops[1].widht: unknown field`},
		{"negative rate", strings.Replace(valid, "rate: 100", "rate: -5", 1), 4, "rate: must be between 1"},
		{"wrong type", strings.Replace(valid, "clients: 10", "clients: many", 1), 5, "cannot unmarshal"},
		{"bad duration", strings.Replace(valid, "duration: 10s", "duration: 10", 1), 6, "want a duration"},
		{"bad size", strings.Replace(valid, "size: 1KiB", "size: 1XB", 1), 11, "not a byte size"},
		{"ratios do not sum to 1", strings.Replace(valid, "ratio: 0.5\n    width", "ratio: 0.4\n    width", 1), 12, "sum to 1"},
		{"unknown op", strings.Replace(valid, "op: range", "op: scan", 1), 15, `unknown op "scan"`},
		{"width over key space", strings.Replace(valid, "width: 10", "width: 5000", 1), 17, "ops[1].width"},
		{"field of another op", strings.Replace(valid, "ratio: 0.5\n  - op: range", "ratio: 0.5\n    watchers: 3\n  - op: range", 1), 15, "ops[0].watchers: does not apply to a put op"},
		{"size and range", strings.Replace(valid, "size: 1KiB", "size: 1KiB\n  max: 2KiB", 1), 10, "values: give either size or min and max"},
		{"min over max", strings.Replace(valid, "size: 1KiB", "min: 4KiB\n  max: 2KiB", 1), 12, "want 1 ≤ min ≤ max"},
		{"watch without put", strings.Replace(strings.Replace(valid, "op: put", "op: watch", 1), "ratio: 0.5\n  - op: range\n    ratio: 0.5", "watchers: 2\n  - op: range\n    ratio: 1", 1), 12, "a watch needs a put or txn op"},
		{"key space too big for key size", strings.Replace(valid, "size: 16", "size: 2", 1), 9, "keys.space: 1000 keys need 4-byte keys"},
		{"syntax error", "name: t\nrate: [1,\n", 2, ""},
		{"empty", "", 1, "empty document"},
		{"list instead of mapping", "- a\n- b\n", 1, "want a mapping"},
		{"missing name", strings.Replace(valid, "name: t\n", "", 1), 1, "name: required"},
		{"over the request limit", strings.Replace(valid, "size: 1KiB", "size: 2MiB", 1), 11, "over 1MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tc.yaml))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a ValidationError", err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(err, ErrInvalid) is false")
			}
			first := ve.Errs[0]
			if first.Line != tc.line {
				t.Errorf("line %d, want %d: %v", first.Line, tc.line, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestValidProfile(t *testing.T) {
	p, err := Parse("p.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if p.Values.Size != 1024 || p.Ops[1].Width != 10 || time.Duration(p.Duration) != 10*time.Second {
		t.Errorf("decoded %+v", p)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]Size{"1024": 1024, "1KiB": 1024, "1.5MiB": 1536 << 10, "256B": 256, "10 KiB": 10240} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5", "NaN", "1e20", "3GiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

func TestLoad(t *testing.T) {
	if _, err := Load("nope"); !errors.Is(err, ErrUnknown) {
		t.Errorf("Load(nope) = %v, want ErrUnknown", err)
	}
	f := t.TempDir() + "/mine.yaml"
	if err := os.WriteFile(f, []byte(valid), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := Load(f)
	if err != nil || e.Profile.Name != "t" || e.File != f {
		t.Errorf("Load(file) = %+v, %v", e, err)
	}
}

// TestBuildShapes checks which bench workloads a profile becomes, without a
// server: constructors only check their configs.
func TestBuildShapes(t *testing.T) {
	clis := fakeClients(t)
	for _, tc := range []struct {
		name string
		ops  []string // op kinds reported, in order
	}{
		{"check-perf-s", []string{"put"}},
		{"write-heavy", []string{"range", "put"}},
		{"large-values", []string{"put"}},
		{"kubernetes", []string{"txn", "txn-create", "txn-delete", "watch", "list", "list-page", "lease-grant", "lease-put", "compact"}},
	} {
		e, err := Load(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		w, cfg, err := Build(e.Profile, clis, "/etcdperf/t/")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []string
		var sum float64
		for _, k := range w.Ops() {
			got = append(got, k.Name)
			sum += k.Share
		}
		if strings.Join(got, ",") != strings.Join(tc.ops, ",") {
			t.Errorf("%s ops %v, want %v", tc.name, got, tc.ops)
		}
		if sum < 0.999 || sum > 1.001 {
			t.Errorf("%s shares sum to %g", tc.name, sum)
		}
		if cfg.Rate != e.Profile.Rate || cfg.Workers != e.Profile.Clients || cfg.Prefix != "/etcdperf/t/" {
			t.Errorf("%s config %+v", tc.name, cfg)
		}
	}
}

func TestValueSizes(t *testing.T) {
	got := valueSizes(Values{Min: 1024, Max: 10240})
	if len(got) != valueBuckets || got[0] != 1024 || got[len(got)-1] != 10240 {
		t.Errorf("valueSizes = %v", got)
	}
	if got := valueSizes(Values{Size: 7}); len(got) != 1 || got[0] != 7 {
		t.Errorf("valueSizes(7) = %v", got)
	}
}

func TestRecordIn(t *testing.T) {
	p := &Profile{Name: "kubernetes", Version: 2, Clients: 32, Rate: 96.77}
	flags := map[string]string{"endpoints": "e"}
	p.RecordIn(flags)
	want := map[string]string{"endpoints": "e", "profile": "kubernetes", "profile_version": "2", "clients": "32", "rate": "96.77"}
	if !reflect.DeepEqual(flags, want) {
		t.Fatalf("RecordIn: got %v, want %v", flags, want)
	}
}
