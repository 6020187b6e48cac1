package hardware

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"
)

func link(target string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
}

func TestReadDisk(t *testing.T) {
	sys := fstest.MapFS{
		// A partition of an SSD with its queue settings on the disk.
		"sys/dev/block/8:1": link("../../devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1"),
		"sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1/partition":    file("1\n"),
		"sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/queue/rotational":  file("0\n"),
		"sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/queue/write_cache": file("write back\n"),
		"sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda/device/model":      file("Samsung SSD 860 \n"),
		// A whole virtio disk that spins (as virtio reports).
		"sys/dev/block/254:0": link("../../devices/pci0000:00/0000:00:02.0/virtio1/block/vda"),
		"sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda/queue/rotational": file("1\n"),
		// A loop device (the slow-disk test rig).
		"sys/dev/block/7:3": link("../../devices/virtual/block/loop3"),
		"sys/devices/virtual/block/loop3/queue/rotational":  file("0\n"),
		"sys/devices/virtual/block/loop3/loop/backing_file": file("/var/tmp/slow.img\n"),
	}
	yes, no := true, false
	for _, tc := range []struct {
		name         string
		major, minor uint32
		device       string
		rotational   *bool
		model, cache string
		backing      string
	}{
		{"partition resolves to its disk", 8, 1, "sda", &no, "Samsung SSD 860", "write back", ""},
		{"virtio disk", 254, 0, "vda", &yes, "", "", ""},
		{"loop device", 7, 3, "loop3", &no, "", "", "/var/tmp/slow.img"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadDisk(sys, tc.major, tc.minor)
			if err != nil {
				t.Fatal(err)
			}
			if d.Device != tc.device || d.Model != tc.model || d.WriteCache != tc.cache || d.BackingFile != tc.backing ||
				(d.Rotational == nil) != (tc.rotational == nil) || (d.Rotational != nil && *d.Rotational != *tc.rotational) {
				t.Errorf("ReadDisk = %+v (rotational %v), want device %s model %q cache %q", d, d.Rotational, tc.device, tc.model, tc.cache)
			}
		})
	}
	// An overlay or tmpfs has an anonymous device (major 0): no data, not a failure.
	if _, err := ReadDisk(sys, 0, 52); !errors.Is(err, ErrNoData) {
		t.Errorf("ReadDisk(0:52) err = %v, want ErrNoData", err)
	}
}

func TestSplitDev(t *testing.T) {
	for _, tc := range []struct {
		dev          uint64
		major, minor uint32
	}{
		{0xfe00, 254, 0},
		{0x0801, 8, 1},
		{0x10300, 259, 0},  // nvme0n1
		{0x10082c, 8, 300}, // a minor above 255 (sdr12)
	} {
		ma, mi := splitDev(tc.dev)
		if ma != tc.major || mi != tc.minor {
			t.Errorf("splitDev(%#x) = %d:%d, want %d:%d", tc.dev, ma, mi, tc.major, tc.minor)
		}
	}
	if FSTypeName(0xEF53) != "ext4" || FSTypeName(0x01021994) != "tmpfs" || FSTypeName(0x1234) != "0x1234" {
		t.Error("FSTypeName mismatch")
	}
}
