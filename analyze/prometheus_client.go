package analyze

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/internal/metrics"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// LoadHTTPConfig reads a Prometheus HTTP client configuration file, the format
// promtool takes with --http.config.file: basic_auth, authorization (with
// credentials or credentials_file), oauth2, tls_config, proxy_url, ... Relative
// file names in it are relative to the file's folder, as in Prometheus.
func LoadHTTPConfig(path string) (*config.HTTPClientConfig, error) {
	cfg, _, err := config.LoadHTTPConfigFile(path)
	if err != nil {
		return nil, fmt.Errorf("prometheus http config %s: %s", path, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("prometheus http config %s: %w", path, err)
	}
	return cfg, nil
}

// ErrUnauthorized says Prometheus (or the proxy in front of it) refused the
// request: 401 or 403.
var ErrUnauthorized = errors.New("unauthorized")

// authError is a 401 or 403 answer, turned into an error by authCheck so the
// user reads one line naming the status instead of client_golang's
// "client_error: client error: 401" with the proxy's HTML page.
type authError struct{ status string }

func (e *authError) Error() string {
	return "HTTP " + e.status + ": credentials missing or refused; give them in --prometheus-http-config (basic_auth, authorization)"
}

func (e *authError) Unwrap() error { return ErrUnauthorized }

// authCheck is a RoundTripper that turns 401 and 403 answers into an authError
// and bounds the size of an answer.
type authCheck struct{ next http.RoundTripper }

func (a authCheck) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		resp.Body.Close()
		return nil, &authError{status: resp.Status}
	}
	resp.Body = &boundedBody{rc: resp.Body, left: maxPromBytes}
	return resp, nil
}

// maxPromBytes bounds one answer: the kept series of a few members are a few MB.
const maxPromBytes = 64 << 20

// errTooLarge says an answer exceeded maxPromBytes.
var errTooLarge = fmt.Errorf("answer larger than %d MiB: narrow --selector", maxPromBytes>>20)

// boundedBody fails a read past its bound, rather than truncating the JSON.
type boundedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// queryTimeout bounds one API call; the largest answer (every kept series of a
// few members at one instant) takes well under a second on a healthy server.
const queryTimeout = 30 * time.Second

// client is the API client for p.URL, built on first use.
func (p *Prometheus) client() (v1.API, error) {
	if p.api != nil {
		return p.api, nil
	}
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("prometheus URL %q: want http(s)://host:port", p.URL)
	}
	cfg := config.DefaultHTTPClientConfig
	if p.HTTPConfig != nil {
		cfg = *p.HTTPConfig
	}
	rt, err := config.NewRoundTripperFromConfig(cfg, "etcdperf", config.WithUserAgent("etcdperf"))
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", p.URL, err)
	}
	c, err := api.NewClient(api.Config{Address: p.URL, RoundTripper: authCheck{rt}})
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", p.URL, err)
	}
	p.api = v1.NewAPI(c)
	return p.api, nil
}

// apiErr gives an API call's error context in one line.
func (p *Prometheus) apiErr(err error, what string) error {
	var ae *authError
	if errors.As(err, &ae) {
		return fmt.Errorf("prometheus %s: %w", p.URL, ae)
	}
	var e *v1.Error
	if errors.As(err, &e) && e.Type == v1.ErrBadResponse {
		return fmt.Errorf("prometheus %s: not a Prometheus API answer (%s): check the URL", p.URL, e.Msg)
	}
	return fmt.Errorf("prometheus %s: %s: %w", p.URL, what, err)
}

// query runs an instant query at time at.
func (p *Prometheus) query(ctx context.Context, q string, at time.Time) (model.Value, error) {
	c, err := p.client()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, _, err := c.Query(ctx, q, at)
	if err != nil {
		return nil, p.apiErr(err, "query "+q)
	}
	return v, nil
}

// vector runs an instant query whose answer is a vector.
func (p *Prometheus) vector(ctx context.Context, q string, at time.Time) (model.Vector, error) {
	v, err := p.query(ctx, q, at)
	if err != nil {
		return nil, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("prometheus %s: query %s: answer is a %s, want a vector", p.URL, q, v.Type())
	}
	return vec, nil
}

// metricTypes is the type of every metric family Prometheus knows from its
// targets' exposition (the metadata API, Prometheus 2.15 and later), read once:
// the samples themselves carry no type.
func (p *Prometheus) metricTypes(ctx context.Context) (map[string]v1.MetricType, error) {
	if p.types != nil {
		return p.types, nil
	}
	c, err := p.client()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	md, err := c.Metadata(ctx, "", "")
	if err != nil {
		return nil, p.apiErr(err, "metadata")
	}
	p.types = make(map[string]v1.MetricType, len(md))
	for name, ms := range md {
		if len(ms) > 0 && keptName(name) {
			// Targets of one name agree in practice; the first is as good as any.
			p.types[name] = ms[0].Type
		}
	}
	return p.types, nil
}

// keptName reports whether a metric name is one metrics.Kept keeps.
func keptName(name string) bool {
	for _, k := range metrics.Kept {
		if strings.HasPrefix(name, k) {
			return true
		}
	}
	return false
}
