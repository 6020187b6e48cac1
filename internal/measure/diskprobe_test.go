package measure

import (
	"context"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// TestDiskProbes: one light probe per filesystem of the members' data dirs,
// stopped with the load and kept as a probe of that member, not an interrupted
// one; a member without a known data dir is not probed.
func TestDiskProbes(t *testing.T) {
	dir := t.TempDir()
	members := []results.Member{
		{Name: "m1", DataDir: dir},
		{Name: "m2", DataDir: t.TempDir()}, // same filesystem: not probed twice
		{Name: "remote"},
	}
	p := startDiskProbes(context.Background(), members)
	time.Sleep(300 * time.Millisecond)
	out, errs := p.stop()
	if len(errs) > 0 {
		t.Skipf("the probe cannot run here: %v", errs) // e.g. the temp dir is a tmpfs
	}
	if len(out) != 1 || out[0].Member != "m1" || out[0].IntervalMs != 100 || out[0].Interrupted || out[0].Fdatasyncs == 0 {
		t.Fatalf("probes %+v, want one of m1, paced at 100 ms, with fdatasyncs", out)
	}
	var none *diskProbes
	if out, _ := none.stop(); out != nil {
		t.Errorf("no probes: %v", out)
	}
}
