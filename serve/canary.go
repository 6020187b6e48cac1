package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
)

// Canary is what serve runs: the scheduler's results go to the exporter and
// the page, which its HTTP handler serves with /healthz.
type Canary struct {
	Exporter *Exporter
	Page     *Page
	Schedule Schedule
	// WebConfigFile is an exporter-toolkit web config (TLS, client
	// certificates, basic auth), as node_exporter's --web.config.file; "" serves
	// plain HTTP. It covers every path, /healthz too.
	WebConfigFile string
	// Logger takes the web server's messages; nil discards them.
	Logger *slog.Logger
	// Targets, when set, serves /probe and /-/reload (the multi-target form);
	// then Run may be given no probe of its own to schedule.
	Targets *Targets

	mu      sync.Mutex
	started time.Time
	last    time.Time // the last recorded tick
}

// Record hands a probe's result to the exporter and the page.
func (c *Canary) Record(r Result) {
	c.Exporter.Record(r)
	c.Page.Record(r)
	c.mu.Lock()
	c.last = time.Now()
	c.mu.Unlock()
}

// Handler serves / (the page), /metrics and /healthz.
func (c *Canary) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(c.Exporter.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", c.healthz)
	if c.Targets != nil {
		mux.Handle("/probe", c.Targets)
		mux.HandleFunc("/-/reload", c.reload)
	}
	mux.Handle("/", c.Page)
	return mux
}

// healthz is 200 while the scheduler ticks: the last tick (or the start) is
// no older than twice the longest wait between two probes plus one probe's
// bound. It says nothing of the cluster's health, which is the verdict's.
func (c *Canary) healthz(w http.ResponseWriter, _ *http.Request) {
	if c.Schedule.Every <= 0 { // /probe only: probes run when scraped
		_, _ = w.Write([]byte("ok\n"))
		return
	}
	c.mu.Lock()
	last := c.last
	if last.IsZero() {
		last = c.started
	}
	c.mu.Unlock()
	limit := 3 * c.Schedule.Next(1<<10) // the longest back-off, 3 times
	if age := time.Since(last); age > limit {
		http.Error(w, fmt.Sprintf("no probe finished for %s (limit %s)", age.Round(time.Second), limit), http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// reload rereads the config file of /probe, as blackbox_exporter's
// /-/reload (POST or PUT): 500 with the error when it does not load.
func (c *Canary) reload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		http.Error(w, "POST or PUT to reload", http.StatusMethodNotAllowed)
		return
	}
	if err := c.Targets.Reload(r.Context()); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write([]byte("reloaded\n"))
}

// Run serves HTTP on l and probes on schedule until ctx is done or the
// schedule ends (with no probe, until ctx is done); then the
// probe in progress stops (bench deletes its keys) and the server shuts down.
func (c *Canary) Run(ctx context.Context, l net.Listener, probe Probe) error {
	c.mu.Lock()
	c.started = time.Now()
	c.mu.Unlock()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	srv := &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	logger := c.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	go func() { served <- web.Serve(l, srv, &web.FlagConfig{WebConfigFile: &c.WebConfigFile}, logger) }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if probe == nil {
			<-ctx.Done()
			return
		}
		Run(ctx, c.Schedule, probe, c.Record)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
	case err = <-served: // the listener failed: stop probing too
	}
	stop()
	<-done
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
