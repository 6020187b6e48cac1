package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/analyze"
)

// serverCounter sums the samples of metric name at url whose labels include
// every one of labels (e.g. `grpc_method="Txn"`): the server's own count. A
// histogram's name_count reads its observation count. It parses with the
// analyzer's parser, the one the product grades with.
func serverCounter(t *testing.T, url, name string, labels ...string) float64 {
	t.Helper()
	text, err := analyze.Fetch(context.Background(), nil, url)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := analyze.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	sel := analyze.Labels{}
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		sel[k] = strings.Trim(v, `"`)
	}
	v, ok := snap.Value(name, sel)
	if base, isCount := strings.CutSuffix(name, "_count"); !ok && isCount {
		var h analyze.Hist
		h, ok = snap.Histogram(base, sel)
		v = h.Count
	}
	if !ok && len(labels) == 0 {
		t.Fatalf("no metric %s at %s", name, url)
	}
	return v
}

// counters reads several counters at once, for deltas around a run.
func counters(t *testing.T, url string, names ...string) map[string]float64 {
	t.Helper()
	m := map[string]float64{}
	for _, n := range names {
		name, label, _ := strings.Cut(n, "|")
		if label == "" {
			m[n] = serverCounter(t, url, name)
		} else {
			m[n] = serverCounter(t, url, name, strings.Split(label, ",")...)
		}
	}
	return m
}
