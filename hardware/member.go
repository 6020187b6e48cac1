package hardware

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strconv"

	"github.com/etcdperf/etcdperf/results"
)

// ReadMember records in m the process and cgroup limits of a member that runs on
// this host, so the analyzer grades it against what it really has rather than
// against etcdperf's own cgroup. pid is the member's process, or 0 to find the
// process listening on the port of one of its client URLs; the caller must know
// the member is local (a remote member's port may be taken here by another).
// fsys is rooted at "/"; nil means the real one. m is left as it was on error.
func ReadMember(fsys fs.FS, m *results.Member, pid int) error {
	if fsys == nil {
		fsys = os.DirFS("/")
	}
	if pid <= 0 {
		err := fmt.Errorf("no client URL: %w", ErrNoData)
		for _, u := range m.ClientURLs {
			if pid, err = listenerOf(fsys, u); err == nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("member %s: %w", m.Name, err)
		}
	}
	cg, err := ReadCgroup(fsys, pid)
	if err != nil {
		return fmt.Errorf("member %s (pid %d): %w", m.Name, pid, err)
	}
	m.Pid, m.MemoryLimitBytes, m.CPUQuotaCores = pid, cg.MemoryLimitBytes, cg.CPUQuota
	return nil
}

// listenerOf is the pid of the process listening on the port of client URL u.
func listenerOf(fsys fs.FS, u string) (int, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return 0, err
	}
	port, err := strconv.Atoi(pu.Port())
	if err != nil {
		return 0, fmt.Errorf("client URL %s: no port", u)
	}
	return ListenerPid(fsys, port)
}
