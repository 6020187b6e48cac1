package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.yaml.in/yaml/v3"

	"github.com/etcdperf/etcdperf/internal/check"
	"github.com/etcdperf/etcdperf/internal/conn"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// Config is serve's --config.file: the modules a /probe?target=…&module=…
// scrape names, as blackbox_exporter's config has them.
type Config struct {
	Modules map[string]*Module `yaml:"modules"`
}

// Module is how /probe probes a target: its load, its verdict's p99, the
// canary's identity in the cluster and how to reach it (TLS, auth).
type Module struct {
	// Load is tiny (the default) or check's s, m, l, xl; Profile a profile
	// name or YAML file instead.
	Load    string `yaml:"load"`
	Profile string `yaml:"profile"`
	// P99 is the verdict's threshold (default: the profile's SLO, else 100ms).
	P99 model.Duration `yaml:"p99"`
	// Timeout bounds a probe; the scrape's own timeout bounds it too.
	Timeout model.Duration `yaml:"timeout"`
	// Prefix and Instance name the canary's directory <prefix><instance>/
	// (defaults: serve's --prefix and --instance).
	Prefix   string `yaml:"prefix"`
	Instance string `yaml:"instance"`
	// LeaseTTL is how long the canary's key outlives the last probe (default 1h).
	LeaseTTL  model.Duration `yaml:"lease_ttl"`
	TLSConfig TLSConfig      `yaml:"tls_config"`
	Auth      Auth           `yaml:"auth"`

	profile *profiles.Profile
}

// TLSConfig is a module's client TLS, named as Prometheus's tls_config.
type TLSConfig struct {
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// Auth is a module's etcd user (etcd's auth, not HTTP's).
type Auth struct {
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	PasswordFile string `yaml:"password_file"`
}

// DefaultLeaseTTL is a module's lease when it sets none: /probe is paced by
// Prometheus's scrape interval, which the canary does not know; a key whose
// lease runs out between two scrapes is written anew (still one revision a
// probe).
const DefaultLeaseTTL = time.Hour

// LoadConfig reads and checks a config file: every module's profile must
// load and be one the canary may send (see Prober.Validate), its TLS files
// must exist and its user have a password.
func LoadConfig(path string, def Identity) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		// yaml's list of errors, one line: a bad flag's message is one line.
		return nil, errors.New(strings.Join(strings.Fields(err.Error()), " "))
	}
	if len(c.Modules) == 0 {
		return nil, errors.New("no modules")
	}
	for _, name := range slices.Sorted(maps.Keys(c.Modules)) {
		m := c.Modules[name]
		if m == nil {
			m = &Module{}
			c.Modules[name] = m
		}
		if err := m.check(def); err != nil {
			return nil, fmt.Errorf("module %s: %w", name, err)
		}
	}
	return &c, nil
}

// check fills a module's defaults and refuses what could not probe.
func (m *Module) check(def Identity) error {
	if m.Prefix == "" {
		m.Prefix = def.Prefix
	}
	if m.Instance == "" {
		m.Instance = def.Instance
	}
	if m.LeaseTTL == 0 {
		m.LeaseTTL = model.Duration(DefaultLeaseTTL)
	}
	p, err := LoadProfile(m.Load, m.Profile)
	if err != nil {
		return err
	}
	m.profile = p
	tls := m.TLSConfig
	if (tls.CertFile == "") != (tls.KeyFile == "") {
		return errors.New("tls_config: cert_file and key_file go together")
	}
	for _, f := range []string{tls.CAFile, tls.CertFile, tls.KeyFile, m.Auth.PasswordFile} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return err
		}
	}
	if m.Auth.Username != "" && m.Auth.Password == "" && m.Auth.PasswordFile == "" {
		return errors.New("auth: a username needs a password or password_file")
	}
	// A timeout of an hour: Validate's bound is the load against the timeout.
	pr := &Prober{Profile: p, ID: Identity{Prefix: m.Prefix, Instance: m.Instance}}
	return pr.Validate(max(time.Duration(m.Timeout), time.Hour))
}

// LoadProfile is the profile of serve's --load (tiny, s, m, l, xl) or of
// --profile (a name or a YAML file); give one, not both.
func LoadProfile(load, profile string) (*profiles.Profile, error) {
	if load != "" && profile != "" {
		return nil, errors.New("give --load or --profile, not both")
	}
	if profile != "" {
		e, err := profiles.Load(profile)
		return e.Profile, err
	}
	if load == "" || load == LoadTiny {
		return TinyProfile()
	}
	name, err := check.LoadProfile(load)
	if err != nil {
		return nil, errors.New(strings.Replace(err.Error(), "want s,", "want tiny, s,", 1))
	}
	e, err := profiles.Load(name)
	return e.Profile, err
}

// TimeoutOffset is taken off Prometheus's scrape timeout so that the answer
// arrives before Prometheus gives up, as blackbox_exporter's --timeout-offset.
const TimeoutOffset = 500 * time.Millisecond

// Targets serves /probe: each scrape runs one probe of its target with its
// module and answers with that probe's series. A target's Prober (its
// connection, its lease) is kept from one scrape to the next, so the
// footprint is that of the scheduled canary: one revision a probe under
// <prefix><instance>/, a lease, no delete of anything else. Probes of one
// target never overlap: a scrape that finds one running waits for it, within
// its own timeout.
type Targets struct {
	// ConfigFile is reread by Reload.
	ConfigFile string
	// Default is the identity of modules that name none.
	Default Identity
	// Base is the connection settings of every target (timeouts, transport);
	// a module adds TLS and auth, the target the endpoints.
	Base conn.Config
	// NewRun returns the header of a probe's run file.
	NewRun func(*conn.Session) *results.Run
	// Build is what each answer's etcdperf_build_info carries.
	Build BuildInfo

	mu      sync.Mutex
	cfg     *Config
	probers map[proberKey]*Prober
	closed  bool                     // by Close: no prober is made any more
	busy    map[string]chan struct{} // by target: held while one of its probes runs
}

type proberKey struct{ module, target string }

// Reload reads ConfigFile again; a bad file keeps the config in force. The
// probers of modules that changed or went are closed (their leases revoked).
func (t *Targets) Reload(ctx context.Context) error {
	c, err := LoadConfig(t.ConfigFile, t.Default)
	if err != nil {
		return fmt.Errorf("--config.file %s: %w", t.ConfigFile, err)
	}
	t.mu.Lock()
	old := t.cfg
	t.cfg = c
	stale := map[proberKey]*Prober{}
	for k, p := range t.probers {
		if nm := c.Modules[k.module]; nm == nil || !sameModule(old.Modules[k.module], nm) {
			stale[k] = p
			delete(t.probers, k)
		}
	}
	t.mu.Unlock()
	return t.closeAll(ctx, stale)
}

// closeAll closes each prober once its target's probe in progress, if any,
// has ended: a lease revoked under a running probe would leave the key of
// the lease it grants next. The wait is bounded by that probe's timeout.
func (t *Targets) closeAll(ctx context.Context, ps map[proberKey]*Prober) error {
	var errs []error
	for k, p := range ps {
		sem := t.lock(k.target)
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		errs = append(errs, p.Close(ctx))
		<-sem
	}
	return errors.Join(errs...)
}

// sameModule says whether a reloaded module probes as before (its profile
// read anew is compared by its file's settings).
func sameModule(a, b *Module) bool {
	x, y := *a, *b
	x.profile, y.profile = nil, nil
	return reflect.DeepEqual(x, y) && reflect.DeepEqual(*a.profile, *b.profile)
}

// Close revokes every target's lease (deleting the canary's keys and nothing
// else) and closes the connections.
func (t *Targets) Close(ctx context.Context) error {
	t.mu.Lock()
	ps := t.probers
	t.probers, t.closed = nil, true
	t.mu.Unlock()
	return t.closeAll(ctx, ps)
}

// ServeHTTP serves /probe?target=<endpoints>&module=<name>[&cluster=<name>]:
// target is one cluster's endpoints, comma-separated; cluster is the label of
// its series (default: the target).
func (t *Targets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	target, modName := q.Get("target"), q.Get("module")
	if modName == "" {
		modName = "tiny"
	}
	t.mu.Lock()
	var mod *Module
	if t.cfg != nil {
		mod = t.cfg.Modules[modName]
	}
	t.mu.Unlock()
	switch {
	case len(endpoints(target)) == 0:
		http.Error(w, "target parameter is missing: give the cluster's endpoints, comma-separated", http.StatusBadRequest)
		return
	case mod == nil:
		http.Error(w, fmt.Sprintf("unknown module %q", modName), http.StatusBadRequest)
		return
	}
	cluster := q.Get("cluster")
	if cluster == "" {
		cluster = target
	}
	if strings.ContainsAny(cluster, "\"\\\n") {
		http.Error(w, "cluster: no quotes, backslashes or newlines", http.StatusBadRequest)
		return
	}
	timeout, err := scrapeTimeout(r, time.Duration(mod.Timeout))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	res := t.probe(ctx, modName, mod, target, timeout)
	e := newExporter(cluster)
	e.setBuild(t.Build)
	e.Record(res)
	promhttp.HandlerFor(e.Registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// Reasons of a /probe that ran no probe.
const (
	// ReasonBusy: the target's previous probe still ran when the scrape timed out.
	ReasonBusy = "busy"
	// ReasonTimeout: the scrape's timeout is shorter than the probe's bound.
	ReasonTimeout = "timeout"
)

// probe runs one probe of target, after the one running, if any.
func (t *Targets) probe(ctx context.Context, modName string, mod *Module, target string, timeout time.Duration) Result {
	r := Result{Start: time.Now()}
	// The load and half again for the status, member and key checks and the
	// members' scrapes around it: a load cut short measures less than it says.
	load := time.Duration(mod.profile.Duration + mod.profile.Warmup)
	if need := load * 3 / 2; timeout < need {
		r.Skipped, r.Err = ReasonTimeout, fmt.Errorf("a timeout of %s is shorter than the probe's %s (%s and half again): raise scrape_timeout", timeout, need, mod.profile.Name)
		r.End = time.Now()
		return r
	}
	sem := t.lock(target)
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		r.Skipped, r.Err, r.End = ReasonBusy, ctx.Err(), time.Now()
		return r
	}
	defer func() { <-sem }()
	p := t.prober(modName, target)
	if p == nil { // the module went in a reload, or the canary stops
		r.Err, r.End = fmt.Errorf("module %s is no longer configured", modName), time.Now()
		return r
	}
	return p.Probe(ctx)
}

// lock is target's semaphore.
func (t *Targets) lock(target string) chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.busy == nil {
		t.busy = map[string]chan struct{}{}
	}
	sem := t.busy[target]
	if sem == nil {
		sem = make(chan struct{}, 1)
		t.busy[target] = sem
	}
	return sem
}

// prober is the target's Prober for the module in force, made at its first
// scrape; nil when the module is gone or the canary stops.
func (t *Targets) prober(modName, target string) *Prober {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := proberKey{modName, target}
	if p := t.probers[k]; p != nil {
		return p
	}
	mod := t.cfg.Modules[modName]
	if mod == nil || t.closed {
		return nil
	}
	cfg := t.Base
	cfg.Endpoints = endpoints(target) // never none: that would start an embedded etcd
	cfg.CACert, cfg.Cert, cfg.Key = mod.TLSConfig.CAFile, mod.TLSConfig.CertFile, mod.TLSConfig.KeyFile
	cfg.InsecureSkipTLS = mod.TLSConfig.InsecureSkipVerify
	cfg.User, cfg.Password = "", ""
	p := &Prober{Profile: mod.profile, ID: Identity{Prefix: mod.Prefix, Instance: mod.Instance},
		LeaseTTL: time.Duration(mod.LeaseTTL), CommandTimeout: cfg.CommandTimeout, DialTimeout: cfg.DialTimeout,
		Endpoints: cfg.Endpoints, TLS: cfg.TLSConfig, NewRun: t.NewRun}
	p.P99, p.P99Source = check.P99Limit(time.Duration(mod.P99), mod.profile)
	p.TLSFiles = slices.DeleteFunc([]string{cfg.CACert, cfg.Cert, cfg.Key}, func(f string) bool { return f == "" })
	auth := mod.Auth
	p.Connect = func(ctx context.Context) (*conn.Session, []*clientv3.Client, func(), error) {
		c := cfg
		if auth.Username != "" {
			c.User, c.Password = auth.Username, auth.Password
			if auth.PasswordFile != "" { // read at every connect: a rotated secret
				b, err := os.ReadFile(auth.PasswordFile)
				if err != nil {
					return nil, nil, nil, err
				}
				c.Password = strings.TrimRight(string(b), "\r\n")
			}
		}
		return conn.OpenLoad(ctx, &c, nil, io.Discard, max(mod.profile.Connections, 1))
	}
	if t.probers == nil {
		t.probers = map[proberKey]*Prober{}
	}
	t.probers[k] = p
	return p
}

// scrapeTimeout is the probe's bound: Prometheus's
// X-Prometheus-Scrape-Timeout-Seconds less TimeoutOffset, and the module's
// timeout when shorter, as blackbox_exporter has it; 120 s when neither is
// known.
func scrapeTimeout(r *http.Request, module time.Duration) (time.Duration, error) {
	timeout := 120 * time.Second
	if v := r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"); v != "" {
		s, err := strconv.ParseFloat(v, 64)
		if err != nil || s <= 0 || math.IsInf(s, 0) || math.IsNaN(s) {
			return 0, fmt.Errorf("X-Prometheus-Scrape-Timeout-Seconds %q: want positive seconds", v)
		}
		timeout = time.Duration(s*float64(time.Second)) - TimeoutOffset
	}
	if module > 0 && module < timeout {
		timeout = module
	}
	return max(timeout, 0), nil
}

// endpoints splits a target into its endpoints.
func endpoints(target string) []string {
	return slices.DeleteFunc(strings.Split(target, ","), func(e string) bool { return strings.TrimSpace(e) == "" })
}
