package faults

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// hogEnv makes this binary a hog (see MaybeRunHog): the CPU it pins itself to
// ("-1": none) and, after a comma, an address to listen on ("" none).
const hogEnv = "ETCDPERF_FAULTS_HOG"

// MaybeRunHog turns this process into a hog when Hogs started it: a busy loop
// pinned to one CPU (sched_setaffinity, what taskset does), listening on an
// address first when asked. Call it first thing in TestMain.
func MaybeRunHog() {
	v, ok := os.LookupEnv(hogEnv)
	if !ok {
		return
	}
	var cpu int
	var addr string
	if _, err := fmt.Sscanf(v, "%d,%s", &cpu, &addr); err != nil {
		cpu, _ = strconv.Atoi(v)
	}
	if cpu >= 0 {
		// Affinity is a thread's: the loop below runs on this thread only.
		runtime.LockOSThread()
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			fmt.Fprintln(os.Stderr, "hog: sched_setaffinity:", err)
			os.Exit(2)
		}
	}
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "hog: listen:", err)
			os.Exit(2)
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	os.Stdout.WriteString("ready\n")
	for n := 0; ; n++ { // the busy loop: runnable all the time, never sleeping
	}
}

// Hogs starts per busy processes on each of cpus, outside any cgroup of the
// test's: other tenants of the host that compete with a member for its cores
// (CPU steal as the member sees it). Each pins itself to its CPU before it
// spins. listen, when not "", is an address the first of them listens on (a
// decoy on a port a member advertises). Cleanup kills them.
func Hogs(t testing.TB, cpus []int, per int, listen string) []int {
	t.Helper()
	var pids []int
	for _, cpu := range cpus {
		for range per {
			env := fmt.Sprint(cpu)
			if listen != "" && len(pids) == 0 {
				env += "," + listen
			}
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), hogEnv+"="+env, "GOMAXPROCS=1")
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			buf := make([]byte, 6)
			if _, err := out.Read(buf); err != nil || string(buf) != "ready\n" {
				t.Fatalf("hog on CPU %d did not start: %v %q", cpu, err, buf)
			}
			pids = append(pids, cmd.Process.Pid)
		}
	}
	return pids
}

// Pin lets every thread of process pid run on cpus only (taskset -a -p).
func Pin(pid int, cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return err
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return fmt.Errorf("pin thread %d of %d to %v: %w", tid, pid, cpus, err)
		}
	}
	return nil
}

// Affinity is the CPUs process pid may run on.
func Affinity(pid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for i := range 1024 {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus, nil
}
