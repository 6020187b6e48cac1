// Package hardware collects facts about the host (CPUs, memory, cgroup limits, the
// disk and filesystem under etcd's data dir) and grades hosts and workloads against
// the tiers of etcd's hardware guide.
//
// Facts come from small collectors, one per source, in the style of node_exporter:
// each reports whether it succeeded and how long it took, and "no data" (the source
// does not exist here, e.g. no cgroup or an overlay filesystem) is distinct from
// failure.
package hardware

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/prometheus/procfs"

	"github.com/etcdperf/etcdperf/results"
)

// ErrNoData is returned by a collector whose source does not exist on this host.
var ErrNoData = errors.New("no data")

// Config says what to inspect.
type Config struct {
	// DataDir is the directory whose filesystem and disk are inspected; "" skips them.
	DataDir string
	// Root is the directory holding proc/ and sys/; "" means "/". Tests give
	// fixtures.
	Root string
}

// rootDir is root, or "/" for "".
func rootDir(root string) string {
	if root == "" {
		return "/"
	}
	return root
}

// procFS is the proc filesystem under root ("" is "/"), read through
// prometheus/procfs; ErrNoData where there is none.
func procFS(root string) (procfs.FS, error) {
	fs, err := procfs.NewFS(filepath.Join(rootDir(root), "proc"))
	if err != nil {
		return procfs.FS{}, fmt.Errorf("proc: %w", ErrNoData)
	}
	return fs, nil
}

// Collector fills some fields of a Host from one source.
type Collector struct {
	Name    string
	Collect func(cfg Config, h *results.Host) error
}

// Collectors run in order; "cgroup" runs after "memory" so the limit can narrow it.
var Collectors = []Collector{
	{Name: "cpu", Collect: collectCPU},
	{Name: "memory", Collect: collectMemory},
	{Name: "host", Collect: collectHostInfo},
	{Name: "cgroup", Collect: collectCgroup},
	{Name: "filesystem", Collect: collectFilesystem},
	{Name: "disk", Collect: collectDisk},
}

// Collect runs every collector and returns the facts with each collector's outcome.
func Collect(cfg Config) *results.Host {
	h := &results.Host{DataDir: cfg.DataDir}
	for _, c := range Collectors {
		h.Collectors = append(h.Collectors, run(c, cfg, h))
	}
	return h
}

func run(c Collector, cfg Config, h *results.Host) results.CollectorStatus {
	start := time.Now()
	err := c.Collect(cfg, h)
	st := results.CollectorStatus{Name: c.Name, DurationMs: float64(time.Since(start).Microseconds()) / 1000}
	switch {
	case err == nil:
		st.Status = results.CollectorOK
	case errors.Is(err, ErrNoData):
		st.Status = results.CollectorNoData
		st.Error = err.Error()
	default:
		st.Status = results.CollectorError
		st.Error = err.Error()
	}
	return st
}
