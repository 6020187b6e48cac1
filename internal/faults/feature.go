package faults

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Feature says why the machine cannot make a kind of fault, nil when it can: a
// test that skipped although its feature is there hides a broken fault, so the
// caller treats such a skip as a failure.
type Feature func() error

// CgroupV1 is the feature of a cgroup v1 controller with one of its control
// files, e.g. ("blkio", "blkio.throttle.write_iops_device").
func CgroupV1(controller, file string) Feature {
	return func() error {
		if os.Geteuid() != 0 {
			return errors.New("cgroup limits need root")
		}
		p := filepath.Join(CgroupRoot, controller, file)
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("no cgroup v1 %s controller with %s (cgroup v2 only?): %w", controller, file, err)
		}
		return nil
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
