package analyze

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/etcdperf/etcdperf/results"
)

// Prometheus reads the members' metrics from a Prometheus server's HTTP API
// instead of scraping the members, for clusters whose /metrics a client machine
// cannot reach. Scrapes rebuilds, per member, the scrapes a Scraper would have
// taken around a run, so the rules grade them unchanged.
type Prometheus struct {
	// URL is the server's base URL, e.g. http://prometheus.monitoring:9090.
	URL string
	// Selector holds label matchers for the members' series, e.g. job="etcd"
	// (braces optional); empty matches every target.
	Selector string
	// HTTPConfig carries TLS, credentials and proxy in Prometheus' own client
	// configuration format (LoadHTTPConfig); nil connects without.
	HTTPConfig *config.HTTPClientConfig
	// ContainerSelector holds label matchers for the cAdvisor series of the
	// members' containers, e.g. pod=~"etcd-.*" or id="/system.slice/etcd.service";
	// empty takes the container named etcd (kubeadm's static pod) on each member's
	// host.
	ContainerSelector string

	api   v1.API                   // built from URL and HTTPConfig on first use
	types map[string]v1.MetricType // the metadata API's answer, read once
}

// promSeries matches what metrics.Kept keeps from a member's /metrics.
var promSeries = `__name__=~"(` + strings.Join(metrics.Kept, "|") + `).+"`

// promProbe is a series every etcd member exposes (3.4 and later); its sample
// timestamps are the times Prometheus scraped each member.
const promProbe = metrics.HasLeader

// promLookahead bounds the search for a member's first scrape at or after the end
// of the window: Prometheus' default lookback, more than any sane scrape interval.
const promLookahead = 5 * time.Minute

// promDuringEvery is the spacing of the "during" samples, as the bench Scraper's;
// promMaxDuring caps their number on long windows.
const (
	promDuringEvery = 5 * time.Second
	promMaxDuring   = 10
)

// ErrNoSeries says Prometheus answered but holds no series the selector matches.
var ErrNoSeries = errors.New("no series")

// Scrapes returns one scrape per member (Prometheus' instance label) and sample
// time: "before" is each member's last scrape at or before from, "after" its first
// at or after to (the last before it when Prometheus has none later yet), and
// "during" samples lie in between, every 5 s up to 10 of them. Their text is the
// exposition format of the series Prometheus stored, filtered as a direct scrape
// is. Prometheus only knows what it scraped: pad the window by one scrape interval.
func (p *Prometheus) Scrapes(ctx context.Context, from, to time.Time) ([]results.Scrape, error) {
	if !to.After(from) {
		return nil, fmt.Errorf("prometheus: --to %s is not after --from %s", fmtTime(to), fmtTime(from))
	}
	times := []time.Time{from}
	step := max(promDuringEvery, to.Sub(from)/(promMaxDuring+1))
	for t := from.Add(step); to.Sub(t) >= time.Second; t = t.Add(step) {
		times = append(times, t)
	}
	end, err := p.afterTime(ctx, to)
	if err != nil {
		return nil, err
	}
	times = append(times, end)

	var out []results.Scrape
	last := map[string]string{} // member → time of its previous scrape
	for i, at := range times {
		phase := results.PhaseDuring
		switch i {
		case 0:
			phase = results.PhaseBefore
		case len(times) - 1:
			phase = results.PhaseAfter
		}
		snaps, err := p.snapshot(ctx, at)
		if err != nil {
			return nil, err
		}
		for _, sc := range snaps {
			// Two evaluation times that fell on one Prometheus scrape are one scrape;
			// the after one keeps its phase.
			if last[sc.Member] == sc.Time && phase == results.PhaseDuring {
				continue
			}
			last[sc.Member] = sc.Time
			sc.Phase = phase
			out = append(out, sc)
		}
	}
	return out, nil
}

// afterTime is the evaluation time at which every member's latest sample is at or
// after to: the latest of the members' first scrapes after to, or to itself when
// Prometheus has none after it yet.
func (p *Prometheus) afterTime(ctx context.Context, to time.Time) (time.Time, error) {
	q := fmt.Sprintf("%s%s[%ds]", promProbe, p.matchers(""), int(promLookahead.Seconds()))
	v, err := p.query(ctx, q, to.Add(promLookahead))
	if err != nil {
		return time.Time{}, err
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return time.Time{}, fmt.Errorf("prometheus %s: query %s: answer is a %s, want a matrix", p.URL, q, v.Type())
	}
	end := to
	for _, s := range m {
		for _, v := range s.Values {
			t := v.Timestamp.Time().UTC()
			if !t.Before(to) {
				if t.After(end) {
					end = t
				}
				break
			}
		}
	}
	return end, nil
}

// snapshot is every member's latest samples at time at, as scrapes.
func (p *Prometheus) snapshot(ctx context.Context, at time.Time) ([]results.Scrape, error) {
	types, err := p.metricTypes(ctx)
	if err != nil {
		return nil, err
	}
	series, err := p.vector(ctx, p.matchers(promSeries), at)
	if err != nil {
		return nil, err
	}
	if len(series) == 0 {
		return nil, fmt.Errorf("prometheus %s: %w match {%s} at %s: check --selector and that Prometheus scrapes the members",
			p.URL, ErrNoSeries, p.selector(), fmtTime(at))
	}
	stamps, err := p.vector(ctx, "timestamp("+promProbe+p.matchers("")+")", at)
	if err != nil {
		return nil, err
	}
	when := map[string]time.Time{}
	for _, s := range stamps {
		when[string(s.Metric["instance"])] = unixTime(float64(s.Value))
	}
	byMember := map[string][]*model.Sample{}
	jobOf := map[string]string{}
	var members []string
	for _, s := range series {
		inst, job := string(s.Metric["instance"]), string(s.Metric["job"])
		if j, seen := jobOf[inst]; seen && j != job {
			return nil, fmt.Errorf("prometheus %s: instance %s is scraped by jobs %q and %q: narrow --selector to one", p.URL, inst, j, job)
		}
		if _, seen := jobOf[inst]; !seen {
			members = append(members, inst)
		}
		jobOf[inst] = job
		byMember[inst] = append(byMember[inst], s)
	}
	slices.Sort(members)
	var out []results.Scrape
	for _, m := range members {
		t, ok := when[m]
		if !ok {
			// Not an etcd member (no etcd_server_has_leader): analyze notes it.
			t = at
		}
		text, err := exposition(byMember[m], types)
		if err != nil {
			return nil, fmt.Errorf("prometheus %s: instance %s: %w", p.URL, m, err)
		}
		host, err := p.hostText(ctx, m, at, types)
		if err != nil {
			return nil, err
		}
		out = append(out, results.Scrape{Member: m, URL: p.URL, Time: scrapeTime(t), Text: Filter(text) + host})
	}
	return out, nil
}

// selector is the user's matchers without braces.
func (p *Prometheus) selector() string {
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(p.Selector), "{"), "}"))
}

// matchers is {extra, selector}, or "" when both are empty.
func (p *Prometheus) matchers(extra string) string {
	var m []string
	for _, s := range []string{extra, p.selector()} {
		if s != "" {
			m = append(m, s)
		}
	}
	if len(m) == 0 {
		return ""
	}
	return "{" + strings.Join(m, ",") + "}"
}

// nodeSeries and containerSeries match the node_exporter and cAdvisor series the
// rules read (metrics.HostSeries); node_cpu_seconds_total only in its idle mode,
// one series per CPU, which is all a CPU count needs.
var (
	nodeSeries      = `__name__=~"` + seriesRegexp("node_") + `",mode=~"|idle"`
	containerSeries = `__name__=~"` + seriesRegexp("container_") + `"`
)

// seriesRegexp is the alternation of the metrics.HostSeries names with prefix.
func seriesRegexp(prefix string) string {
	var names []string
	for _, n := range metrics.HostSeries {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n) // [a-zA-Z_]: nothing to quote
		}
	}
	return strings.Join(names, "|")
}

// hostText is the exposition text of the node_exporter series of the member's
// host (targets whose instance has the member's host name or address) and of the
// cAdvisor series of its container, as Prometheus held them at time at: a member
// etcdperf cannot see into is graded with them. Empty when Prometheus scrapes
// neither; the container's series are left out when the selector matches more
// than one container, which would mix their limits.
func (p *Prometheus) hostText(ctx context.Context, instance string, at time.Time, types map[string]v1.MetricType) (string, error) {
	host := hostOnly(instance)
	if host == "" {
		return "", nil
	}
	onHost := "instance=~" + strconv.Quote(regexp.QuoteMeta(host)+"(:[0-9]+)?")
	node, err := p.vector(ctx, "{"+nodeSeries+","+onHost+"}", at)
	if err != nil {
		return "", err
	}
	sel := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(p.ContainerSelector), "{"), "}"))
	if sel == "" {
		sel = onHost + `,container="etcd"`
	}
	cont, err := p.vector(ctx, "{"+containerSeries+","+sel+"}", at)
	if err != nil {
		return "", err
	}
	ids := map[string]bool{}
	for _, s := range cont {
		ids[string(s.Metric["id"])] = true
	}
	if len(ids) > 1 {
		cont = nil
	}
	series := append(node, cont...)
	if len(series) == 0 {
		return "", nil
	}
	text, err := exposition(series, types)
	if err != nil {
		return "", fmt.Errorf("prometheus %s: the host series of %s: %w", p.URL, instance, err)
	}
	return text, nil
}

// hostOnly is an instance label's host: "10.0.0.5" of "10.0.0.5:2379", "::1" of "[::1]:2379".
func hostOnly(instance string) string {
	if h, _, err := net.SplitHostPort(instance); err == nil {
		return h
	}
	return instance
}
