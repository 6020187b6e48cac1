package hardware

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// tcpListen is the state column of proc/net/tcp for a listening socket (TCP_LISTEN).
const tcpListen = "0A"

// ListenerPid is the pid of the local process listening on TCP port, so a member
// given only by its endpoint can be graded against its own cgroup. It finds the
// LISTEN socket's inode in proc/net/tcp under root ("" is "/"), or else in
// proc/net/tcp6, then the process among proc/*/fd that holds "socket:[inode]",
// newest first. ErrNoData when nothing listens on the port in this network
// namespace, or no process visible here holds the socket (another user's without
// root, or another PID namespace's).
//
// The socket tables are parsed here: prometheus/procfs deprecates its NetTCP
// readers for netlink sock_diag. The process walk is procfs's.
//
// Each table read walks the kernel's whole established-connection hash (4–5 ms
// a table for 262,144 buckets here, listeners or not), and the long-lived
// daemons of low pids hold the most fds (270 for pid 1 here): a member under
// test is mostly a newer process than they are. Both cut the lookup from 12–18
// ms to 6–9 ms here.
func ListenerPid(root string, port int) (int, error) {
	proc, err := procFS(root)
	if err != nil {
		return 0, err
	}
	inodes := map[string]bool{}
	for _, name := range []string{"net/tcp", "net/tcp6"} {
		b, err := os.ReadFile(filepath.Join(rootDir(root), "proc", name))
		if err != nil {
			continue // tcp6 is absent where IPv6 is disabled
		}
		for _, ino := range listenInodes(string(b), port) {
			inodes[ino] = true
		}
		if len(inodes) > 0 {
			break
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("no TCP listener on port %d: %w", port, ErrNoData)
	}
	procs, err := proc.AllProcs()
	if err != nil {
		return 0, fmt.Errorf("listener on port %d: %w", port, err)
	}
	sort.Sort(procs)
	for _, p := range slices.Backward(procs) {
		links, err := p.FileDescriptorTargets()
		if err != nil {
			continue // exited since, or not ours to read
		}
		for _, link := range links {
			if ino, ok := socketInode(link); ok && inodes[ino] {
				return p.PID, nil
			}
		}
	}
	return 0, fmt.Errorf("listener on port %d: no process visible here holds it: %w", port, ErrNoData)
}

// listenInodes are the inodes of the sockets listening on port in a proc/net/tcp
// or proc/net/tcp6 table. A line is "sl local_address rem_address st ... uid
// timeout inode ...", the local address as hex "ADDR:PORT".
func listenInodes(table string, port int) []string {
	var out []string
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if !ok || err != nil || int(p) != port || f[9] == "0" {
			continue
		}
		out = append(out, f[9])
	}
	return out
}

// socketInode is the inode of an fd link "socket:[12345]".
func socketInode(link string) (string, bool) {
	s, ok := strings.CutPrefix(link, "socket:[")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(s, "]")
}

// AllLoopback reports whether every endpoint (a URL or host:port) is on this
// host: localhost or a loopback address. False for none.
func AllLoopback(endpoints []string) bool {
	if len(endpoints) == 0 {
		return false
	}
	for _, ep := range endpoints {
		host := ep
		if u, err := url.Parse(ep); err == nil && u.Host != "" {
			host = u.Host
		}
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host == "localhost" {
			continue
		}
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return false
		}
	}
	return true
}
