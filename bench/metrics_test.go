package bench

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// serverCounter sums the samples of metric name at url whose labels contain
// every one of labels (e.g. `grpc_method="Txn"`): the server's own count.
func serverCounter(t *testing.T, url, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	found := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		match := true
		for _, l := range labels {
			match = match && strings.Contains(rest, l)
		}
		if !match {
			continue
		}
		f, err := strconv.ParseFloat(rest[strings.LastIndexByte(rest, ' ')+1:], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum, found = sum+f, true
	}
	if !found && len(labels) == 0 {
		t.Fatalf("no metric %s at %s", name, url)
	}
	return sum
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
