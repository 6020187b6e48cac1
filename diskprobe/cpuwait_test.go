package diskprobe

import (
	"testing"
	"time"
)

func TestParseSchedstat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"4193021 819069 3\n", 819069, true},
		{"1 0 0", 0, true},
		{"4193021", 0, false},
		{"", 0, false},
		{"1 x 3", 0, false},
		{"1 -5 3", 0, false},
	} {
		got, ok := parseSchedstat([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q: %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseSchedstat(f *testing.F) {
	f.Add([]byte("4193021 819069 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, ok := parseSchedstat(b); ok && d < 0 {
			t.Fatalf("%q: negative wait %v", b, d)
		}
	})
}

// TestRunQueueOnThread: on Linux the probe's thread reads its own wait, which
// only grows.
func TestRunQueueOnThread(t *testing.T) {
	rec := newRecorder()
	done := rec.onThread()
	defer done()
	if rec.rq == nil {
		t.Skip("no /proc/thread-self/schedstat on this kernel")
	}
	a := rec.rq.waited()
	for range 1000 {
		time.Sleep(0)
	}
	if b := rec.rq.waited(); b < a {
		t.Errorf("run-queue wait went back: %v then %v", a, b)
	}
	if n := testing.AllocsPerRun(100, func() { rec.rq.waited() }); n > 1 {
		t.Errorf("waited allocates %v times a call; it sits in the timed loop", n)
	}
}
