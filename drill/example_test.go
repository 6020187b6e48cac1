package drill_test

import (
	"fmt"

	"github.com/etcdperf/etcdperf/drill"
)

// A drill first fills the cluster so that a replaced member has a db of a
// realistic size to receive: SizeFill spreads the bytes over keys of one
// prefix (ShapeFill copies the shape of a cluster that inspect read).
func ExampleSizeFill() {
	f, err := drill.SizeFill("/etcdperf/drill/", 64<<20, drill.DefaultFillValueBytes)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range f.Prefixes {
		fmt.Printf("%s%s: %d keys of %d B values, %d revision(s)\n", f.Root, p.Prefix, p.Keys, p.ValueBytes, p.Revisions)
	}
	fmt.Println(f.Bytes()>>20, "MiB")
	// Output:
	// /etcdperf/drill/: 16280 keys of 4096 B values, 1 revision(s)
	// 63 MiB
}
