package bundle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etcdperf/etcdperf/cluster"
	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/internal/clustertest"
	"github.com/etcdperf/etcdperf/results"
)

// TestOfflineRestoreChoice stops the members of one 3-member cluster at
// different points (m2 first, then 40 more puts, then m1, then m0): the bundle
// of the three data dirs counts the puts in the WALs, finds the histories
// agreeing, and names one of the two members that saw every put, never m2.
func TestOfflineRestoreChoice(t *testing.T) {
	dir := t.TempDir()
	c := clustertest.Start(t, cluster.Config{Dir: dir, Members: 3, TickMs: 20, ElectionMs: 200})
	cli := clustertest.Client(t, c)
	ctx := context.Background()
	put := func(n int, tag string) {
		for i := range n {
			if _, err := cli.Put(ctx, fmt.Sprintf("/offline/%s/%d", tag, i), "value-not-in-bundle"); err != nil {
				t.Fatal(err)
			}
		}
	}
	ms := c.Members()
	put(20, "all")
	if err := ms[2].StopGracefully(); err != nil {
		t.Fatal(err)
	}
	put(40, "two")
	for _, m := range ms[:2] {
		if err := m.StopGracefully(); err != nil {
			t.Fatal(err)
		}
	}
	dirs := []string{ms[0].DataDir, ms[1].DataDir, ms[2].DataDir}
	before := snapshotTree(t, dir)
	b, err := OfflineBundle(dirs, Rates{}, toolForTest, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshotTree(t, dir); after != before {
		t.Errorf("reading the data dirs changed them:\nbefore %s\nafter  %s", before, after)
	}
	off := b.Data.Offline
	for i, d := range off.Dirs {
		if len(d.Errors) > 0 || d.WAL == nil || d.DB == nil {
			t.Fatalf("%s: %v", d.Path, d.Errors)
		}
		puts := d.WAL.Entries["IRRPut"]
		want := int64(60)
		if i == 2 {
			want = 20
		}
		if puts < want || (i == 2 && puts >= 60) {
			t.Errorf("%s: %d IRRPut entries, want %d (entries %v)", d.Path, puts, want, d.WAL.Entries)
		}
		if d.WAL.Entries["ConfigChange"] != 3 || d.WAL.Commit == 0 || d.DB.ConsistentIndex == 0 || d.DB.CurrentRevision < 21 {
			t.Errorf("%s: wal %+v db %+v", d.Path, d.WAL, d.DB)
		}
	}
	for _, g := range off.Agree {
		if !g.Agree {
			t.Errorf("%v disagree: %s", g.Dirs, g.Note)
		}
	}
	r := off.Restore
	if r == nil || (r.Path != dirs[0] && r.Path != dirs[1]) {
		t.Fatalf("restore from %+v; want %s or %s", r, dirs[0], dirs[1])
	}
	if !strings.Contains(strings.Join(r.Reason, "\n"), dirs[2]+": commit index") {
		t.Errorf("the reasons do not say m2 is behind:\n%s", strings.Join(r.Reason, "\n"))
	}
	if r := b.Data.Repair; r == nil || len(r.Members) != 3 || r.Members[0].CatchUpS <= 0 || r.Members[0].QuotaS != nil {
		t.Errorf("repair cost %+v", r)
	}
	if v := b.Run.Diagnosis.Verdict; v.Status != finding.StatusPass {
		t.Errorf("verdict %s: %s", v.Status, v.Summary)
	}
	path := filepath.Join(t.TempDir(), "off.tar.gz")
	if err := Write(path, b); err != nil {
		t.Fatal(err)
	}
	if all := extract(t, path); strings.Contains(string(all), "value-not-in-bundle") || strings.Contains(string(all), "/offline/") {
		t.Error("the offline archive holds a value or a key name")
	}
}

// snapshotTree is every file under dir with its size and modification time.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var s strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() && !strings.HasSuffix(p, ".log") {
			fmt.Fprintf(&s, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s.String()
}

var toolForTest = results.Tool{Name: "etcdperf", Version: "test"}
