package hardware

import (
	"fmt"
	"os"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"

	"github.com/etcdperf/etcdperf/results"
)

// collectCPU counts logical CPUs and reads the model name (gopsutil).
func collectCPU(_ Config, h *results.Host) error {
	n, err := cpu.Counts(true)
	if err != nil {
		return fmt.Errorf("cpu count: %w", err)
	}
	h.CPUs = n
	// The model is nice to have; a VM that hides it is not a failure.
	if info, err := cpu.Info(); err == nil && len(info) > 0 {
		h.CPUModel = info[0].ModelName
	}
	return nil
}

// collectMemory reads RAM and swap (gopsutil). MemoryBytes starts as the host's RAM;
// the cgroup collector narrows it to a limit when one is set.
func collectMemory(_ Config, h *results.Host) error {
	vm, err := mem.VirtualMemory()
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	h.HostMemoryBytes = int64(vm.Total)
	h.MemoryBytes = int64(vm.Total)
	sw, err := mem.SwapMemory()
	if err != nil {
		return fmt.Errorf("swap: %w", err)
	}
	h.SwapBytes = int64(sw.Total)
	return nil
}

// collectHostInfo reads the hostname and kernel. Not gopsutil's host.Info,
// which also works out the platform, virtualization, boot time and process
// count, and runs lsb_release (a shell script of six processes, ~12 ms of CPU
// here) where /etc/lsb-release is absent: none of which a run records.
func collectHostInfo(_ Config, h *results.Host) error {
	name, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("hostname: %w", err)
	}
	kernel, err := host.KernelVersion()
	if err != nil {
		return fmt.Errorf("kernel version: %w", err)
	}
	h.Hostname, h.Kernel = name, kernel
	return nil
}
