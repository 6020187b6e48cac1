package plan

import (
	"strings"
	"testing"
)

func TestDatascaleProject(t *testing.T) {
	// Recorded from plan --datascale --keys 2000 --val-size 1KiB on the embedded etcd.
	before := Sizes{DB: 20480, DBInUse: 16384, RSS: 60 << 20, Quota: 2 << 30}
	after := Sizes{DB: 20480 + 2000*1500, DBInUse: 16384 + 2000*1400, RSS: 60<<20 + 2000*4096, Quota: 2 << 30}
	d := Datascale{Keys: 2000, KeySize: 64, ValueSize: 1024}
	d.Project(before, after, 8<<30, "")
	if d.DBPerKey != 1500 || d.RSSPerKey == nil || *d.RSSPerKey != 4096 {
		t.Fatalf("per key: db %v rss %v", d.DBPerKey, d.RSSPerKey)
	}
	if want := float64(2<<30-after.DB) / 1500; d.KeysInQuota == nil || *d.KeysInQuota != want {
		t.Errorf("keys in quota %v, want %v", d.KeysInQuota, want)
	}
	if want := float64(8<<30-after.RSS) / 4096; d.KeysInMemory == nil || *d.KeysInMemory != want {
		t.Errorf("keys in memory %v, want %v", d.KeysInMemory, want)
	}
	if want := float64(8<<30-after.DB) / 1500; d.KeysIn8GiB == nil || *d.KeysIn8GiB != want {
		t.Errorf("keys in 8 GiB %v, want %v", d.KeysIn8GiB, want)
	}
	if s := d.Summary(); !strings.Contains(s, "1500 db bytes per key") || !strings.Contains(s, "4096 RSS bytes per key") || !strings.Contains(s, "in the 2 GiB quota") {
		t.Errorf("summary %q", s)
	}
	if len(d.Notes) != 0 {
		t.Errorf("notes %v", d.Notes)
	}
}

func TestDatascaleProjectUnmeasurable(t *testing.T) {
	// The db file reused free pages and the RSS did not move; the member is remote.
	before := Sizes{DB: 1 << 20, DBInUse: 1 << 19, RSS: 100 << 20}
	after := Sizes{DB: 1 << 20, DBInUse: 1<<19 + 100*800, RSS: 100 << 20}
	d := Datascale{Keys: 100}
	d.Project(before, after, 0, "remote member")
	if d.DBPerKey != 800 || d.RSSPerKey != nil || d.KeysInMemory != nil || d.KeysInQuota != nil || d.KeysIn8GiB == nil {
		t.Errorf("projection %+v", d)
	}
	if len(d.Notes) != 3 || d.Notes[2] != "remote member" {
		t.Errorf("notes %q", d.Notes)
	}
}

func TestMemberMemory(t *testing.T) {
	host := func() int64 { return 8 << 30 }
	for _, tc := range []struct {
		embedded  bool
		endpoints []string
		mem       int64
		note      string
	}{
		{true, []string{"http://127.0.0.1:2379"}, 8 << 30, "embedded etcd: its RSS includes this process's client"},
		{false, []string{"127.0.0.1:2379", "localhost:22379"}, 8 << 30, ""},
		{false, []string{"10.0.0.1:2379"}, 0, "remote member: its memory is unknown here, so keys in memory are not projected"},
	} {
		mem, note := MemberMemory(tc.embedded, tc.endpoints, host)
		if mem != tc.mem || note != tc.note {
			t.Errorf("%v %v: %d %q, want %d %q", tc.embedded, tc.endpoints, mem, note, tc.mem, tc.note)
		}
	}
	r := Datascale{Keys: 10, KeySize: 64, ValueSize: 1024, DBPerKey: 1200}.Result()
	if r.Verdict.Status != "pass" || r.Verdict.Summary != "10 keys of 64+1024 bytes: 1200 db bytes per key" || r.Findings == nil {
		t.Errorf("result %+v", r)
	}
}
