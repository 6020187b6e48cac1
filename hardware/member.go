package hardware

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/etcdperf/etcdperf/results"
)

// ReadMember records in m the process and cgroup limits of a member that runs on
// this host, so the analyzer grades it against what it really has rather than
// against etcdperf's own cgroup. pid is the member's process, or 0 to find the
// process listening on the port of one of its client URLs; the caller must know
// the member is local (a remote member's port may be taken here by another);
// the process's start (ProcessStartS) lets the analyzer prove it is the member.
// root holds proc/ and sys/; "" means "/". m is left as it was on error.
func ReadMember(root string, m *results.Member, pid int) error {
	if pid <= 0 {
		err := fmt.Errorf("no client URL: %w", ErrNoData)
		for _, u := range m.ClientURLs {
			if pid, err = listenerOf(root, u); err == nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("member %s: %w", m.Name, err)
		}
	}
	cg, err := ReadCgroup(root, pid)
	if err != nil {
		return fmt.Errorf("member %s (pid %d): %w", m.Name, pid, err)
	}
	m.Pid, m.MemoryLimitBytes, m.CPUQuotaCores = pid, cg.MemoryLimitBytes, cg.CPUQuota
	if start, err := ProcessStart(root, pid); err == nil {
		m.ProcessStartS = start
	}
	if m.DataDir == "" {
		m.DataDir = DataDirOf(root, pid)
	}
	return nil
}

// listenerOf is the pid of the process listening on the port of client URL u.
func listenerOf(root string, u string) (int, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return 0, err
	}
	port, err := strconv.Atoi(pu.Port())
	if err != nil {
		return 0, fmt.Errorf("client URL %s: no port", u)
	}
	return ListenerPid(root, port)
}

// DataDirOf is the data dir of the etcd process pid, as etcd resolves it: the
// --data-dir flag, else ETCD_DATA_DIR, else "<name>.etcd" (name from --name or
// ETCD_NAME, default "default"), relative to the process's working directory.
// root holds proc/; "" means "/". "" when it cannot be read.
func DataDirOf(root string, pid int) string {
	fs, err := procFS(root)
	if err != nil {
		return ""
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return ""
	}
	args, err := p.CmdLine()
	if err != nil {
		return ""
	}
	flags := map[string]string{}
	for i := 1; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			continue
		}
		if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			value, i = args[i+1], i+1
		}
		flags[name] = value
	}
	if environ, err := p.Environ(); err == nil {
		for _, kv := range environ {
			for env, flag := range map[string]string{"ETCD_DATA_DIR=": "data-dir", "ETCD_NAME=": "name"} {
				if v, ok := strings.CutPrefix(kv, env); ok && flags[flag] == "" {
					flags[flag] = v
				}
			}
		}
	}
	dir := flags["data-dir"]
	if dir == "" {
		name := flags["name"]
		if name == "" {
			name = "default"
		}
		dir = name + ".etcd"
	}
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	cwd, err := p.Cwd()
	if err != nil || !filepath.IsAbs(cwd) {
		return ""
	}
	return filepath.Join(cwd, dir)
}
