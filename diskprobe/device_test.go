package diskprobe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shirou/gopsutil/v4/disk"
)

// fakeSysfs lays out the parts of /sys that blockDevice reads: an NVMe-like disk with a
// partition, and a loop device.
func fakeSysfs(t *testing.T) string {
	t.Helper()
	sys := t.TempDir()
	files := map[string]string{
		"devices/pci0000:00/nvme/block/sda/queue/rotational":  "0\n",
		"devices/pci0000:00/nvme/block/sda/queue/write_cache": "write through\n",
		"devices/pci0000:00/nvme/block/sda/device/model":      "Samsung SSD 980 PRO 1TB                 \n",
		"devices/pci0000:00/nvme/block/sda/sda1/partition":    "1\n",
		"devices/virtual/block/loop3/queue/rotational":        "1\n",
		"devices/virtual/block/loop3/queue/write_cache":       "write back\n",
		"devices/virtual/block/loop3/loop/backing_file":       "/tmp/disk.img\n",
	}
	for name, content := range files {
		p := filepath.Join(sys, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"8:1": "../../devices/pci0000:00/nvme/block/sda/sda1",
		"8:0": "../../devices/pci0000:00/nvme/block/sda",
		"7:3": "../../devices/virtual/block/loop3",
	}
	if err := os.MkdirAll(filepath.Join(sys, "dev/block"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(sys, "dev/block", name)); err != nil {
			t.Fatal(err)
		}
	}
	return sys
}

func TestBlockDevice(t *testing.T) {
	sys := fakeSysfs(t)
	for _, tc := range []struct {
		name         string
		major, minor uint32
		device       string
		rotational   *bool
		cache, model string
		backing      string
	}{
		{"partition reads its disk", 8, 1, "sda", new(false), "write through", "Samsung SSD 980 PRO 1TB", ""},
		{"whole disk", 8, 0, "sda", new(false), "write through", "Samsung SSD 980 PRO 1TB", ""},
		{"loop device", 7, 3, "loop3", new(true), "write back", "", "/tmp/disk.img"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := blockDevice(sys, tc.major, tc.minor)
			if d == nil {
				t.Fatal("no device")
			}
			if d.Device != tc.device || d.WriteCache != tc.cache || d.Model != tc.model || d.BackingFile != tc.backing ||
				d.Rotational == nil || *d.Rotational != *tc.rotational {
				t.Errorf("blockDevice = %+v (rotational %v)", d, d.Rotational)
			}
		})
	}
	if d := blockDevice(sys, 0, 42); d != nil {
		t.Errorf("an anonymous device (overlay, tmpfs) gave %+v, want nil", d)
	}
}

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
