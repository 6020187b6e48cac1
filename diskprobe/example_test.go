package diskprobe_test

import (
	"context"
	"fmt"
	"os"

	"github.com/etcdperf/etcdperf/diskprobe"
)

// A tool probes the disk under a folder the way fio's etcd job does: 100
// writes of 2300 bytes, each followed by fdatasync, in a temp folder of its
// own that the probe removes. Grade then compares the fdatasync p99
// (res.Fdatasync.P99) with etcd's 10 ms; FioCommand is the fio job to compare with.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "probe")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	cfg := diskprobe.Config{Dir: dir, Pattern: diskprobe.PatternFio, Size: 100 * 2300, BlockSize: 2300,
		AllowTmpfs: true} // a test machine's temp dir may be tmpfs, where fdatasync is a no-op
	res, err := diskprobe.Run(context.Background(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Pattern, res.Writes, "writes,", res.Fdatasyncs, "fdatasyncs")
	fmt.Println(diskprobe.FioCommand(diskprobe.PatternFio, diskprobe.Config{Dir: "/var/lib/etcd", Size: diskprobe.DefaultSize, BlockSize: 2300}))
	// Output:
	// fio 100 writes, 100 fdatasyncs
	// fio --rw=write --ioengine=sync --fdatasync=1 --directory=/var/lib/etcd --size=22m --bs=2300 --name=etcdperf
}
