package report

import (
	"io"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/bench"
)

// TestBar: the progress line shows elapsed of total (or requests of
// total), requests and errors so far, the current rate and the running p99.
func TestBar(t *testing.T) {
	for _, c := range []struct {
		cfg  bench.Config
		want string
	}{
		{bench.Config{Duration: 30 * time.Second}, "12s/30s  3012 req  4 err  250 req/s  p99 3.100ms"},
		{bench.Config{Total: 5000}, "3012/5000 req  4 err  250 req/s  p99 3.100ms"},
	} {
		b := NewBar(io.Discard, c.cfg)
		b.Update(bench.Progress{Measured: 12*time.Second + 400*time.Millisecond, Requests: 3012, Errors: 4, Rate: 250, P99: 3100 * time.Microsecond})
		if got := b.bar.Get("stats"); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
		b.Finish()
	}
}
