package drill

import (
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/inspect"
)

func TestSizeFill(t *testing.T) {
	f, err := SizeFill("/etcdperf/drill-fill/", 100<<20, 4096)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Bytes()
	if got < 100<<20-8192 || got > 100<<20 {
		t.Fatalf("fill writes %d bytes, want about %d", got, 100<<20)
	}
	if _, err := SizeFill("/p/", 1<<20, 2<<20); err == nil {
		t.Fatal("a value over the request limit was accepted")
	}
	if f, _ := SizeFill("/p/", 0, 0); len(f.Prefixes) != 0 {
		t.Fatal("an empty fill has prefixes")
	}
}

func TestShapeFill(t *testing.T) {
	r := &inspect.Result{Prefixes: []inspect.Prefix{
		{Prefix: "/registry/pods/", Keys: 1000, KeyBytes: 1000 * 40, ValueBytes: 1000 * 3000, OldRevisions: 2000},
		{Prefix: "/registry/events/", Keys: 500, KeyBytes: 500 * 50, ValueBytes: 500 * 800},
		{Prefix: "/empty/", Keys: 0},
	}}
	f, err := ShapeFill("/etcdperf/drill-fill/", r, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Prefixes) != 2 {
		t.Fatalf("prefixes = %d, want 2", len(f.Prefixes))
	}
	pods := f.Prefixes[0]
	if pods.Prefix != "registry/pods/" || pods.Keys != 1000 || pods.ValueBytes != 3000 || pods.Revisions != 3 || pods.KeyBytes != 40-len("/registry/pods/") {
		t.Fatalf("pods = %+v", pods)
	}
	if k := fillKey(f.Root, pods, 7); !strings.HasPrefix(k, "/etcdperf/drill-fill/registry/pods/") || len(k) != len(f.Root)+len(pods.Prefix)+pods.KeyBytes {
		t.Fatalf("key %q", k)
	}
	scaled, err := ShapeFill("/etcdperf/drill-fill/", r, f.Bytes()/10)
	if err != nil {
		t.Fatal(err)
	}
	if b := scaled.Bytes(); b < f.Bytes()/10*9/10 || b > f.Bytes()/10*11/10 {
		t.Fatalf("scaled fill writes %d, want about %d", b, f.Bytes()/10)
	}
	if _, err := ShapeFill("/p/", &inspect.Result{}, 0); err == nil {
		t.Fatal("an empty inspection was accepted")
	}
}
