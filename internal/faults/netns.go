package faults

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// NetNS is a network namespace reached from this host over a veth pair: a
// process started in it (Command) listens on NSIP, which is not a listener of
// this host's namespace, so a tool run here cannot map the member's port to its
// process, PID or cgroup — as for a member on another machine — while the test
// still can, and limits it with cgroups like any other process.
type NetNS struct {
	Name string // the namespace, as `ip netns` names it
	// HostIP is this side of the veth pair; NSIP the namespace's side.
	HostIP, NSIP string
}

// netnsSeq numbers the namespaces of this process, so several can exist at once.
var netnsSeq = struct {
	sync.Mutex
	n int
}{}

// HaveNetNS says why network namespaces and veth pairs cannot be made here,
// nil when they can (root, iproute2 and a kernel with both).
func HaveNetNS() error {
	if os.Geteuid() != 0 {
		return errors.New("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("no ip (iproute2): %w", err)
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return fmt.Errorf("no network namespaces in this kernel: %w", err)
	}
	return nil
}

// NewNetNS makes a namespace with its loopback up and a veth pair to this host
// on a /30 of 10.231.0.0/16 that no interface here uses yet. It skips, saying
// why, when the machine cannot make one; cleanup deletes the namespace, which
// removes its end of the pair and so the pair.
func NewNetNS(t testing.TB) *NetNS {
	t.Helper()
	if err := HaveNetNS(); err != nil {
		t.Skipf("cannot make a network namespace: %v", err)
	}
	netnsSeq.Lock()
	defer netnsSeq.Unlock()
	for range 256 {
		netnsSeq.n++
		n := netnsSeq.n % 16384
		base := net.IPv4(10, 231, byte(n>>6), byte(n<<2&0xff))
		hostIP := net.IPv4(base[12], base[13], base[14], base[15]+1).String()
		nsIP := net.IPv4(base[12], base[13], base[14], base[15]+2).String()
		if inUse(hostIP) || inUse(nsIP) {
			continue
		}
		ns := &NetNS{Name: fmt.Sprintf("etcdperf-%d-%d", os.Getpid(), n), HostIP: hostIP, NSIP: nsIP}
		hostIf, nsIf := fmt.Sprintf("ep%dh%d", os.Getpid()%10000, n), fmt.Sprintf("ep%dn%d", os.Getpid()%10000, n)
		steps := [][]string{
			{"netns", "add", ns.Name},
			{"link", "add", hostIf, "type", "veth", "peer", "name", nsIf},
			{"link", "set", nsIf, "netns", ns.Name},
			{"addr", "add", hostIP + "/30", "dev", hostIf},
			{"link", "set", hostIf, "up"},
			{"-n", ns.Name, "addr", "add", nsIP + "/30", "dev", nsIf},
			{"-n", ns.Name, "link", "set", nsIf, "up"},
			{"-n", ns.Name, "link", "set", "lo", "up"},
		}
		t.Cleanup(func() {
			_ = exec.Command("ip", "link", "del", hostIf).Run() // gone with the namespace when it got there
			run(t, "ip", "netns", "del", ns.Name)
		})
		for _, s := range steps {
			if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
				t.Fatalf("ip %s: %v: %s", strings.Join(s, " "), err, out)
			}
		}
		return ns
	}
	t.Fatal("no free /30 in 10.231.0.0/16 for a veth pair")
	return nil
}

// inUse reports whether an interface of this host's namespace has address ip.
func inUse(ip string) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.String() == ip {
			return true
		}
	}
	return false
}

// Command is name run inside the namespace (ip netns exec execs it, so the
// process keeps the PID Start gives it, for signals and cgroups).
func (ns *NetNS) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
}
