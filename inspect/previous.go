package inspect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/etcdperf/etcdperf/analyze"
	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// Previous is the db size at an earlier time, for the growth rate.
type Previous struct {
	At        time.Time
	SizeBytes int64
	// From names the file and what in it the size came from.
	From string
}

// LoadPrevious reads an earlier `inspect -w json` output, or a run file whose
// metrics scrapes hold etcd_mvcc_db_total_size_in_bytes (the latest scrape, largest
// member).
func LoadPrevious(path string) (*Previous, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--previous: %w", err)
	}
	var rep Result
	if err := json.Unmarshal(b, &rep); err == nil && !rep.InspectedAt.IsZero() && rep.DB.SizeBytes > 0 {
		return &Previous{At: rep.InspectedAt, SizeBytes: rep.DB.SizeBytes, From: path + " (inspect output)"}, nil
	}
	run, err := results.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("--previous %s: neither an inspect JSON output nor a run file: %w", path, err)
	}
	type point struct {
		at   time.Time
		size int64
	}
	var pts []point
	for _, sc := range run.Scrapes {
		at, terr := time.Parse(time.RFC3339Nano, sc.Time)
		snap, perr := analyze.Parse(sc.Text)
		if sc.Text == "" || terr != nil || perr != nil {
			continue
		}
		if v, ok := snap.Value(metrics.DBTotal, nil); ok {
			pts = append(pts, point{at, int64(v)})
		}
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("--previous %s: the run file holds no scrape with %s", path, metrics.DBTotal)
	}
	p := &Previous{}
	for _, pt := range pts {
		p.At = later(p.At, pt.at)
	}
	// The members of one scrape round are read a few milliseconds apart: take the
	// largest member of the last round.
	for _, pt := range pts {
		if p.At.Sub(pt.at) < time.Minute {
			p.SizeBytes = max(p.SizeBytes, pt.size)
		}
	}
	p.From = path + " (run file scrape)"
	return p, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
