package drill

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/inspect"
	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/results"
)

// FillFor is the data to write before a drill under root: bytes of keys with
// values of valueBytes, or, given shapePath (the JSON of inspect -w json), the
// shape inspect measured, scaled to bytes when bytes > 0.
func FillFor(root string, bytes int64, valueBytes int, shapePath string) (FillSpec, error) {
	if shapePath == "" {
		return SizeFill(root, bytes, valueBytes)
	}
	r, err := inspect.ReadReport(shapePath)
	if err != nil {
		return FillSpec{}, fmt.Errorf("--shape: %w", err)
	}
	return ShapeFill(root, r, bytes)
}

// WriteFill writes f, refusing a root that already holds keys unless force (the
// prefix rule of every run, bench.CheckPrefix), and says how long it took.
func (e *Env) WriteFill(ctx context.Context, cli *clientv3.Client, f FillSpec, force bool) error {
	if len(f.Prefixes) == 0 {
		return nil
	}
	if err := bench.CheckPrefix(ctx, cli, f.Root, force, e.timeout()); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	start := time.Now()
	e.say("drill: filling %s under %s", units.Bytes(f.Bytes()), f.Root)
	if err := Fill(ctx, cli, f, nil); err != nil {
		return err
	}
	e.say("drill: filled in %.1f s", time.Since(start).Seconds())
	return nil
}

// DeleteFill deletes the fill from a user's cluster after the drill (an embedded
// one is discarded whole), as bench.Cleanup deletes a run's keys; a failure is
// said, not returned: the drill's outcome stands.
func (e *Env) DeleteFill(cli *clientv3.Client, f FillSpec) {
	if len(f.Prefixes) == 0 {
		return
	}
	if err := bench.Cleanup(cli, f.Root, false); err != nil {
		e.say("drill: could not delete the fill under %s: %v", f.Root, err)
	}
}

// LoadConfig is the background load of a drill: puts at Rate, or a profile.
type LoadConfig struct {
	// Dial opens one client to the members the load may use; the load opens Conns.
	Dial  func() (*clientv3.Client, error)
	Conns int
	// DialDirect, when set, opens the direct load connection of each client
	// (--transport, see bench.UseDirect); a nil one leaves the clients' own.
	DialDirect func() (DirectConn, error)
	// Workers and Rate shape the puts; a Profile sets its own, and RateSet says
	// that Rate overrides the profile's.
	Workers int
	Rate    float64
	RateSet bool
	ValSize int
	Profile string
	// Prefix holds the load's keys (checked empty unless Force, deleted afterwards).
	Prefix string
	Force  bool
	// NewRun starts the run file the load fills.
	NewRun func() *results.Run
}

// DirectConn is a direct load connection: the request loops' calls, closed
// with the load.
type DirectConn interface {
	grpc.ClientConnInterface
	Close() error
}

// ErrLoadConfig marks a load that cannot be built from its options (a bad
// profile, a value too large): the user's input, not the cluster.
var ErrLoadConfig = errors.New("drill load")

// NewLoad opens the load's clients and returns the load, which runs until the
// drill stops it; close releases the clients.
func NewLoad(c LoadConfig) (load Load, closeAll func(), err error) {
	var clis []*clientv3.Client
	var direct []DirectConn
	closeAll = func() {
		for _, cc := range direct {
			cc.Close()
		}
		for _, cli := range clis {
			cli.Close()
		}
	}
	for range max(1, c.Conns) {
		cli, err := c.Dial()
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("open load connection: %w", err)
		}
		clis = append(clis, cli)
		if c.DialDirect == nil {
			continue
		}
		cc, err := c.DialDirect()
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("open load connection: %w", err)
		}
		if cc != nil {
			direct = append(direct, cc)
		}
	}
	w, bc, err := c.workload(clis)
	if err != nil {
		closeAll()
		return nil, nil, fmt.Errorf("%w: %w", ErrLoadConfig, err)
	}
	bench.UseDirect(w, direct)
	// The drill ends the load; the duration only bounds a drill that hangs.
	bc.Duration, bc.Warmup, bc.Prefix, bc.Force, bc.KV = 24*time.Hour, 0, c.Prefix, c.Force, clis[0]
	return func(ctx context.Context) (*results.Run, error) {
		run := c.NewRun()
		err := bench.Run(ctx, bc, w, run)
		return run, err
	}, closeAll, nil
}

func (c LoadConfig) workload(clis []*clientv3.Client) (bench.Workload, bench.Config, error) {
	bc := bench.Config{Workers: c.Workers, Rate: c.Rate}
	if c.Profile == "" {
		w, err := bench.NewPut(clis, bench.PutConfig{Prefix: c.Prefix, KeySize: 8, ValSize: c.ValSize, KeySpace: 10000})
		return w, bc, err
	}
	e, err := profiles.Load(c.Profile)
	if err != nil {
		return nil, bc, err
	}
	w, bc, err := profiles.Build(e.Profile, clis, c.Prefix)
	if c.RateSet {
		bc.Rate = c.Rate
	}
	return w, bc, err
}

// Outcome is how a drill ended, for the exit code.
type Outcome int

// The outcomes, in the order Judge checks them.
const (
	// Done: the drill ran and the cluster is as it was.
	Done Outcome = iota
	// Interrupted: stopped by the user (ctx), the cluster restored.
	Interrupted
	// Refused: the guard refused the cluster or a step (ErrRefused).
	Refused
	// Failed: the drill could not run to its end (err).
	Failed
	// Changed: the drill ran, but the cluster after it is not as it was.
	Changed
)

// Judge is the outcome of a drill that returned err, was interrupted or not,
// and left the cluster as it was (ok) or not.
func Judge(err error, interrupted, ok bool) Outcome {
	switch {
	case interrupted:
		return Interrupted
	case errors.Is(err, ErrRefused):
		return Refused
	case err != nil:
		return Failed
	case !ok:
		return Changed
	}
	return Done
}
