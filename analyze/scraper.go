package analyze

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// scrapeTimeout bounds one scrape when the caller's client sets no timeout, so a
// stuck member cannot hold a run's "after" phase forever.
const scrapeTimeout = 10 * time.Second

// Scraper scrapes the /metrics of several members before, during and after a run.
// Failed scrapes are recorded (Scrape.Error), never fatal: a run's load results stay
// valid when a metrics endpoint is unreachable, and the analyzer marks what it could
// not see as unknown.
//
// Use:
//
//	s := analyze.NewScraper(httpClient, urls, 5*time.Second)
//	s.Before(ctx)
//	s.Start(ctx)
//	... run the load ...
//	run.Scrapes = s.After(ctx)
type Scraper struct {
	client *http.Client
	urls   []string
	every  time.Duration

	mu      sync.Mutex
	scrapes []results.Scrape
	stop    chan struct{}
	done    chan struct{}
}

// NewScraper returns a Scraper of the given /metrics URLs (e.g.
// "https://10.0.0.1:2379/metrics"). client carries TLS settings and may be nil;
// every is the period of the "during" scrapes (0 disables them).
func NewScraper(client *http.Client, urls []string, every time.Duration) *Scraper {
	if client == nil {
		client = &http.Client{Timeout: scrapeTimeout}
	}
	return &Scraper{client: client, urls: urls, every: every}
}

// Before scrapes every URL once, phase "before".
func (s *Scraper) Before(ctx context.Context) { s.scrapeAll(ctx, results.PhaseBefore) }

// Start scrapes every URL each period in the background, phase "during", until
// After is called or ctx ends.
func (s *Scraper) Start(ctx context.Context) {
	if s.every <= 0 || s.stop != nil {
		return
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.stop:
				return
			case <-t.C:
				s.scrapeAll(ctx, results.PhaseDuring)
			}
		}
	}()
}

// After stops the background scrapes, scrapes every URL once more (phase "after")
// and returns all scrapes taken, in time order per member.
func (s *Scraper) After(ctx context.Context) []results.Scrape {
	if s.stop != nil {
		close(s.stop)
		<-s.done
		s.stop = nil
	}
	s.scrapeAll(ctx, results.PhaseAfter)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]results.Scrape, len(s.scrapes))
	copy(out, s.scrapes)
	return out
}

// scrapeAll scrapes the members concurrently, so a slow one does not skew the
// others' timestamps.
func (s *Scraper) scrapeAll(ctx context.Context, phase string) {
	var wg sync.WaitGroup
	got := make([]results.Scrape, len(s.urls))
	for i, u := range s.urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = ScrapeOne(ctx, s.client, u, phase)
		}()
	}
	wg.Wait()
	s.mu.Lock()
	s.scrapes = append(s.scrapes, got...)
	s.mu.Unlock()
}

// ScrapeOne takes one scrape of url for the run file. The text is filtered and
// checked to parse; a failure is recorded in Scrape.Error.
func ScrapeOne(ctx context.Context, client *http.Client, rawURL, phase string) results.Scrape {
	sc := results.Scrape{Member: memberName(rawURL), URL: rawURL, Phase: phase}
	if client == nil || client.Timeout == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, scrapeTimeout)
		defer cancel()
	}
	start := time.Now()
	text, err := Fetch(ctx, client, rawURL)
	// The midpoint of the request is the best estimate of when the member's
	// counters were read.
	took := time.Since(start)
	sc.Time, sc.Seconds = scrapeTime(start.Add(took/2)), math.Round(took.Seconds()*1e3)/1e3
	if err != nil {
		sc.Error = err.Error()
		return sc
	}
	if _, err := Parse(text); err != nil {
		sc.Error = "scrape " + rawURL + ": " + err.Error()
		return sc
	}
	sc.Text = text
	return sc
}

// memberName is the host:port of a metrics URL, which names a member uniquely.
func memberName(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return rawURL
	}
	return u.Host
}
