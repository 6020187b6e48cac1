package measure

import (
	"context"
	"errors"
	"os"
	"sync"
	"syscall"

	"github.com/etcdperf/etcdperf/diskprobe"
	"github.com/etcdperf/etcdperf/results"
)

// diskProbes run etcdperf's light fsync probe (diskprobe.Light) on the
// filesystem of each member data dir on this host, one per filesystem, from the
// start of the measured window to its end: the disk is then graded from a
// measurement of its own, taken under the same load, rather than from etcd's
// 1 ms × 2^k histogram buckets, and that measurement, independent of the member's
// CPU, settles whether slow fsyncs are the disk's or a starved CPU's.
type diskProbes struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	out    []results.DiskResult
	errs   []string
}

// startDiskProbes starts the probes for the members whose data dir is known.
func startDiskProbes(ctx context.Context, members []results.Member) *diskProbes {
	ctx, cancel := context.WithCancel(ctx)
	p := &diskProbes{cancel: cancel}
	// One probe a filesystem (more would only load it more), named for the
	// first member on it and shared with the others there.
	type fsProbe struct {
		dir, name string
		shared    []string
	}
	var probes []*fsProbe
	byDev := map[uint64]*fsProbe{}
	for _, m := range members {
		if m.DataDir == "" {
			continue
		}
		fi, err := os.Stat(m.DataDir)
		if err != nil {
			continue
		}
		name := m.Name
		if name == "" {
			name = m.ID
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if fp := byDev[st.Dev]; fp != nil {
				fp.shared = append(fp.shared, name)
				continue
			}
			byDev[st.Dev] = &fsProbe{dir: m.DataDir, name: name}
			probes = append(probes, byDev[st.Dev])
			continue
		}
		probes = append(probes, &fsProbe{dir: m.DataDir, name: name})
	}
	for _, fp := range probes {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			res, err := diskprobe.Run(ctx, diskprobe.Light(fp.dir))
			p.mu.Lock()
			defer p.mu.Unlock()
			if err != nil && !errors.Is(err, context.Canceled) {
				p.errs = append(p.errs, fp.name+": "+err.Error())
				return
			}
			res.Member, res.Interrupted = fp.name, false // stopped with the load, as meant
			res.SharedWith = fp.shared
			p.out = append(p.out, res)
		}()
	}
	return p
}

// stop ends the probes and returns what they measured, and why any could not run
// (a tmpfs data dir, no free space).
func (p *diskProbes) stop() ([]results.DiskResult, []string) {
	if p == nil {
		return nil, nil
	}
	p.cancel()
	p.wg.Wait()
	return p.out, p.errs
}
