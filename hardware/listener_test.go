package hardware

import (
	"errors"
	"net"
	"os"
	"testing"
	"testing/fstest"
)

// Tables as Linux writes them: a header, a listener, an established connection.
const (
	procNetTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:094B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1517 1 00000000699d18fd 100 0 0 10 0
   1: 0100007F:094B 0100007F:9BA3 01 00000000:00000000 00:00000000 00000000     0        0 1600 1 00000000e0ab6885 20 4 30 10 -1
   2: 0100007F:AC80 0100007F:094B 01 00000000:00000000 00:00000000 00000000     0        0 1601 1 00000000e0ab6886 20 4 30 10 -1
`
	procNetTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:094C 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2222 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3333 1 0000000000000000 100 0 0 10 0
`
)

func TestListenerPid(t *testing.T) {
	proc := fstest.MapFS{
		"proc/net/tcp":      file(procNetTCP),
		"proc/net/tcp6":     file(procNetTCP6),
		"proc/self":         link("300"),
		"proc/100/fd/0":     link("/dev/null"),
		"proc/100/fd/7":     link("socket:[1600]"), // the client side of 2379: not the listener
		"proc/200/fd/3":     link("pipe:[15]"),
		"proc/200/fd/9":     link("socket:[1517]"),
		"proc/300/fd/4":     link("socket:[2222]"),
		"proc/300/cmdline":  file("etcd"),
		"proc/sys/kernel/x": file("1"),
	}
	root := tree(t, proc)
	for _, tc := range []struct {
		name   string
		port   int
		want   int
		noData bool
	}{
		{"tcp listener", 2379, 200, false},
		{"tcp6 listener", 2380, 300, false},
		{"listening, but no process here holds it", 8080, 0, true},
		{"nothing listens", 2381, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ListenerPid(root, tc.port)
			if tc.noData {
				if !errors.Is(err, ErrNoData) {
					t.Fatalf("ListenerPid(%d) = %d, %v; want ErrNoData", tc.port, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ListenerPid(%d) = %d, %v; want %d", tc.port, got, err, tc.want)
			}
		})
	}
}

func TestListenInodes(t *testing.T) {
	if got := listenInodes(procNetTCP, 0x094B); len(got) != 1 || got[0] != "1517" {
		t.Errorf("listenInodes(2379) = %v, want [1517]", got)
	}
	if got := listenInodes("garbage\n0: x y 0A\n   0: 0100007F 00000000:0000 0A 0 0 0 0 0 9 0\n", 2379); len(got) != 0 {
		t.Errorf("listenInodes(garbage) = %v, want none", got)
	}
}

func FuzzListenInodes(f *testing.F) {
	f.Add(procNetTCP, 2379)
	f.Fuzz(func(t *testing.T, table string, port int) {
		for _, ino := range listenInodes(table, port) {
			if ino == "" || ino == "0" {
				t.Errorf("inode %q", ino)
			}
		}
	})
}

// TestListenerPidLive finds this test process by a listener it opens.
func TestListenerPidLive(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skipf("no /proc/net/tcp: %v", err)
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("listen %s: %v (skipped)", addr, err)
			continue
		}
		port := ln.Addr().(*net.TCPAddr).Port
		got, err := ListenerPid("", port)
		ln.Close()
		if err != nil || got != os.Getpid() {
			t.Errorf("ListenerPid(%d) for %s = %d, %v; want this process, %d", port, addr, got, err, os.Getpid())
		}
	}
}

func TestAllLoopback(t *testing.T) {
	for _, tc := range []struct {
		eps  []string
		want bool
	}{
		{nil, false},
		{[]string{"http://127.0.0.1:2379", "localhost:2379", "https://[::1]:2379", "127.0.0.5:1"}, true},
		{[]string{"http://127.0.0.1:2379", "http://10.0.0.1:2379"}, false},
		{[]string{"etcd.example:2379"}, false},
	} {
		if got := AllLoopback(tc.eps); got != tc.want {
			t.Errorf("AllLoopback(%v) = %v, want %v", tc.eps, got, tc.want)
		}
	}
}
