package report

import (
	"fmt"
	"io"
	"time"

	"github.com/cheggaaa/pb/v3"

	"github.com/etcdperf/etcdperf/bench"
)

// Bar is the progress bar of a load run on a terminal: measured requests of
// the run's total, or seconds of its duration.
type Bar struct {
	bar     *pb.ProgressBar
	byCount bool
	total   time.Duration
}

// NewBar starts a bar for the run cfg bounds, written to w.
func NewBar(w io.Writer, cfg bench.Config) *Bar {
	b := &Bar{byCount: cfg.Total > 0, total: cfg.Duration}
	n := int64(cfg.Total)
	if !b.byCount {
		n = int64(cfg.Duration / time.Second)
	}
	// What k6 and vegeta users expect to read: elapsed of total, requests and
	// errors so far, the current rate and the running p99.
	b.bar = pb.New64(n).SetTemplateString(`{{bar . "[" "=" ">" " " "]"}} {{string . "stats"}}`).SetWriter(w).Start()
	return b
}

// Update shows p; it is a bench.Config.Progress.
func (b *Bar) Update(p bench.Progress) {
	progress := fmt.Sprintf("%d/%d req", p.Requests, b.bar.Total())
	if b.byCount {
		b.bar.SetCurrent(p.Requests)
	} else {
		b.bar.SetCurrent(int64(p.Measured / time.Second))
		progress = fmt.Sprintf("%s/%s  %d req", p.Measured.Truncate(time.Second), b.total, p.Requests)
	}
	p99 := "-"
	if p.P99 > 0 {
		p99 = Ms(float64(p.P99) / float64(time.Millisecond))
	}
	b.bar.Set("stats", fmt.Sprintf("%s  %d err  %.0f req/s  p99 %s", progress, p.Errors, p.Rate, p99))
}

// Finish stops the bar.
func (b *Bar) Finish() { b.bar.Finish() }
