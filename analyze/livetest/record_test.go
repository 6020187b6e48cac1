package livetest

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/etcdperf/etcdperf/analyze"
)

var record = flag.Bool("record", false, "re-record the /metrics fixtures in testdata from live etcd servers")

// TestRecordFixtures records /metrics of an embedded etcd (this module's release)
// and of Debian's etcd 3.4, before and after 300 puts of 1 KiB, as the run file
// stores them (filtered). Run: go test ./analyze/livetest/ -run TestRecordFixtures -record
func TestRecordFixtures(t *testing.T) {
	if !*record {
		t.Skip("fixtures are recorded only with -record")
	}
	for _, tc := range []struct {
		name  string
		start func(*testing.T) string
	}{
		{"etcd-3.6", startEmbedded},
		{"etcd-3.4", func(t *testing.T) string { return startEtcd34(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := tc.start(t)
			c := newClient(t, ep)
			ctx := context.Background()
			before, err := analyze.Fetch(ctx, nil, ep+"/metrics")
			if err != nil {
				t.Fatal(err)
			}
			putLoad(t, c, "/etcdperf/fixture/", 300, 1024, 8)
			after, err := analyze.Fetch(ctx, nil, ep+"/metrics")
			if err != nil {
				t.Fatal(err)
			}
			for name, text := range map[string]string{"before": before, "after": after} {
				p := filepath.Join("..", "testdata", tc.name+"-"+name+".txt")
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s (%d bytes)", p, len(text))
			}
		})
	}
}
