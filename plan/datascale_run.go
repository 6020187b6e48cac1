package plan

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/profiles"
)

// BackendSettle is how long datascale waits after the fill for the backend to
// commit it, so that Status sees the grown db: the db size Status reports
// changes when the backend commits its batch (every --backend-batch-interval,
// 100 ms by default), so a few intervals.
const BackendSettle = time.Second

// DatascaleConfig is plan --datascale as its flags give it.
type DatascaleConfig struct {
	Keys    uint64
	KeySize int
	ValSize string // a size (profiles.ParseSize)
	Prefix  string
}

// Check checks c's flags, before any cluster is reached, and returns the
// measurement to complete (Measure).
func (c DatascaleConfig) Check() (Datascale, error) {
	val, err := profiles.ParseSize(c.ValSize)
	switch {
	case err != nil:
		return Datascale{}, fmt.Errorf("--val-size: %w", err)
	case c.Keys == 0:
		return Datascale{}, errors.New("--keys must be at least 1")
	case c.Prefix == "":
		return Datascale{}, errors.New("--prefix must not be empty: plan deletes its prefix afterwards")
	}
	return Datascale{Keys: c.Keys, KeySize: c.KeySize, ValueSize: int(val)}, nil
}

// Fill checks c and returns the fill of its keys through cli and the
// measurement to complete (Measure).
func (c DatascaleConfig) Fill(cli *clientv3.Client) (*bench.Range, Datascale, error) {
	d, err := c.Check()
	if err != nil {
		return nil, d, err
	}
	w, err := bench.NewRange([]*clientv3.Client{cli}, bench.RangeConfig{Prefix: c.Prefix, KeySize: c.KeySize, ValSize: d.ValueSize, Keys: c.Keys, Width: 1})
	return w, d, err
}

// Measure reads the member's sizes, runs the fill, waits settle for the backend
// to commit it, reads them again and projects (Project) with the member's
// memory as memory reads it then (MemberMemory's figures).
func (d *Datascale) Measure(ctx context.Context, fill bench.Preparer, sizes func() (Sizes, error), settle time.Duration, memory func() (int64, string)) error {
	before, err := sizes()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := fill.Prepare(ctx, nil); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	d.FillSeconds = time.Since(start).Seconds()
	time.Sleep(settle)
	after, err := sizes()
	if err != nil {
		return err
	}
	mem, note := memory()
	d.Project(before, after, mem, note)
	return nil
}
