package faults

import (
	"errors"
	"fmt"
	"os"
)

// Feature says why the machine cannot make a kind of fault, nil when it can: a
// test that skipped although its feature is there hides a broken fault, so the
// caller treats such a skip as a failure.
type Feature func() error

// CgroupController is the feature of limits of a cgroup controller named as in
// v1, with one of its v1 control files, e.g. ("blkio",
// "blkio.throttle.write_iops_device"): a v1 mount of it with that file, or a
// cgroup v2 hierarchy with its v2 equivalent, as NewCgroup takes.
func CgroupController(controller, file string) Feature {
	return func() error {
		if os.Geteuid() != 0 {
			return errors.New("cgroup limits need root")
		}
		_, _, err := findCgroup(controller, file)
		return err
	}
}

// LoopDevices is the feature of attaching loop devices (for an ext4 of the test's own).
func LoopDevices() error {
	if os.Geteuid() != 0 {
		return errors.New("loop devices need root")
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		return fmt.Errorf("no loop devices (no /dev/loop-control): %w", err)
	}
	return nil
}

// NetNamespaces is the feature of network namespaces joined by veth pairs.
func NetNamespaces() error { return HaveNetNS() }

// Features is all of fs at once: the first missing one.
func Features(fs ...Feature) Feature {
	return func() error {
		for _, f := range fs {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
}
