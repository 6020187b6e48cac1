package diskprobe

import (
	"testing"

	"github.com/shirou/gopsutil/v4/disk"
)

func TestMountOf(t *testing.T) {
	parts := []disk.PartitionStat{
		{Device: "/dev/vda", Mountpoint: "/", Fstype: "ext4"},
		{Device: "tmpfs", Mountpoint: "/dev/shm", Fstype: "tmpfs"},
		{Device: "/dev/sdb1", Mountpoint: "/var/lib/etcd", Fstype: "xfs"},
		{Device: "/dev/sdc1", Mountpoint: "/var/lib/etcd", Fstype: "ext4"}, // mounted over sdb1
		{Device: "/dev/sdd1", Mountpoint: "/var/lib/etc", Fstype: "btrfs"},
	}
	for path, want := range map[string]string{
		"/":                        "/dev/vda",
		"/home/user":               "/dev/vda",
		"/var/lib/etcd":            "/dev/sdc1",
		"/var/lib/etcd/member/wal": "/dev/sdc1",
		"/var/lib/etcdx":           "/dev/vda",
		"/var/lib/etc/x":           "/dev/sdd1",
		"/dev/shm/probe":           "tmpfs",
	} {
		p, ok := mountOf(path, parts)
		if !ok || p.Device != want {
			t.Errorf("mountOf(%s) = %s, %t; want %s", path, p.Device, ok, want)
		}
	}
}
