package hardware

import "fmt"

// Magic numbers of the in-memory filesystems (statfs f_type, linux/magic.h), on
// which fdatasync returns at once without touching a disk.
const (
	MagicTmpfs = 0x01021994
	MagicRamfs = 0x858458f6
)

// InMemory reports whether a statfs magic is tmpfs or ramfs.
func InMemory(magic int64) bool { return magic == MagicTmpfs || magic == MagicRamfs }

// fsMagic maps statfs f_type magic numbers (linux/magic.h) to filesystem names:
// the one table (the disk probe and the host facts both name filesystems by it).
var fsMagic = map[int64]string{
	0xEF53:     "ext4", // ext2/3/4 share the magic
	0x58465342: "xfs",
	0x9123683E: "btrfs",
	MagicTmpfs: "tmpfs",
	0x794c7630: "overlay",
	0x2fc12fc1: "zfs",
	0xF2F52010: "f2fs",
	0x6969:     "nfs",
	0xFF534D42: "cifs",
	0x65735546: "fuse",
	MagicRamfs: "ramfs",
}

// FSTypeName names a statfs magic number, or gives it in hex when unknown.
func FSTypeName(magic int64) string {
	if n, ok := fsMagic[magic]; ok {
		return n
	}
	return fmt.Sprintf("0x%x", magic)
}

// splitDev splits a Linux dev_t into major and minor numbers (the glibc encoding).
func splitDev(dev uint64) (major, minor uint32) {
	major = uint32((dev>>8)&0xfff | (dev>>32)&^0xfff)
	minor = uint32(dev&0xff | (dev>>12)&^0xff)
	return major, minor
}
