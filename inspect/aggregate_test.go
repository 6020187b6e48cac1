package inspect

import (
	"reflect"
	"strings"
	"testing"
)

func TestPrefixOf(t *testing.T) {
	for _, tc := range []struct {
		key   string
		depth int
		want  string
	}{
		{"/registry/pods/ns/name", 1, "/registry/"},
		{"/registry/pods/ns/name", 2, "/registry/pods/"},
		{"/registry/pods/ns/name", 3, "/registry/pods/ns/"},
		{"/registry/pods/ns/name", 9, "/registry/pods/ns/"}, // deeper than the key: its parent folder
		{"/registry/", 1, "/registry/"},
		{"/registry", 2, "/"},
		{"plain", 1, ""},
		{"a/b/c", 1, "a/"},
		{"a/b/c", 2, "a/b/"},
		{"//x/y", 1, "//x/"}, // leading slashes belong to the first segment
		{"a//b", 2, "a//"},   // an empty segment is a segment
		{"", 1, ""},
		{"/", 1, "/"},
	} {
		if got := PrefixOf([]byte(tc.key), tc.depth); got != tc.want {
			t.Errorf("PrefixOf(%q, %d) = %q, want %q", tc.key, tc.depth, got, tc.want)
		}
	}
}

func TestAggregatorPrefixes(t *testing.T) {
	rec := func(key string, value int64, old int64) Record {
		return Record{Key: []byte(key), ValueSize: value, Version: old + 1, OldRevisions: old, OldBytes: old * 10, OldExact: true}
	}
	for _, tc := range []struct {
		name     string
		depth    int
		records  []Record
		want     []Prefix // value size summaries are checked separately
		total    Totals
		exact    bool
		oldTotal int64
	}{
		{
			name:  "two levels",
			depth: 2,
			records: []Record{
				rec("/a/x/1", 100, 0), rec("/a/x/2", 100, 2), rec("/a/y/1", 10, 0), rec("/b", 5, 1),
			},
			want: []Prefix{
				{Prefix: "/a/x/", Keys: 2, KeyBytes: 12, ValueBytes: 200, OldRevisions: 2},
				{Prefix: "/a/y/", Keys: 1, KeyBytes: 6, ValueBytes: 10},
				{Prefix: "/", Keys: 1, KeyBytes: 2, ValueBytes: 5, OldRevisions: 1},
			},
			total: Totals{Keys: 4, KeyBytes: 20, ValueBytes: 215}, exact: true, oldTotal: 3,
		},
		{
			name:    "depth one merges",
			depth:   1,
			records: []Record{rec("/a/x/1", 100, 0), rec("/a/y/1", 10, 0), rec("k", 1, 0)},
			want: []Prefix{
				{Prefix: "/a/", Keys: 2, KeyBytes: 12, ValueBytes: 110},
				{Prefix: "", Keys: 1, KeyBytes: 1, ValueBytes: 1},
			},
			total: Totals{Keys: 3, KeyBytes: 13, ValueBytes: 111}, exact: true,
		},
		{
			name:  "sampled values are extrapolated per prefix",
			depth: 1,
			records: []Record{
				rec("/s/1", 100, 0), rec("/s/2", -1, 0), rec("/s/3", -1, 0), rec("/s/4", 300, 0), rec("/t/1", -1, 0),
			},
			want: []Prefix{
				// 2 of 4 sampled, 400 bytes: 800 for the prefix; /t/ has no sample.
				{Prefix: "/s/", Keys: 4, KeyBytes: 16, ValueBytes: 800},
				{Prefix: "/t/", Keys: 1, KeyBytes: 4},
			},
			total: Totals{Keys: 5, KeyBytes: 20, ValueBytes: 800}, exact: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAggregator(tc.depth, 2, 150)
			for _, r := range tc.records {
				a.Add(r)
			}
			var r Result
			a.Fill(&r)
			got := append([]Prefix{}, r.Prefixes...)
			for i := range got {
				got[i].ValueSize = SizeSummary{}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("prefixes:\n got %+v\nwant %+v", got, tc.want)
			}
			if r.Total != tc.total {
				t.Errorf("total %+v, want %+v", r.Total, tc.total)
			}
			if r.Values.Exact != tc.exact {
				t.Errorf("exact %v, want %v", r.Values.Exact, tc.exact)
			}
			if r.History.OldRevisions != tc.oldTotal || r.History.CompactionFreesBytes != 10*tc.oldTotal {
				t.Errorf("history %+v, want %d old revisions", r.History, tc.oldTotal)
			}
		})
	}
}

func TestAggregatorLargestAndNear(t *testing.T) {
	a := NewAggregator(1, 2, 1000)
	for _, r := range []Record{
		{Key: []byte("/a"), ValueSize: 10},
		{Key: []byte("/b"), ValueSize: 2000},
		{Key: []byte("/c"), ValueSize: 500},
		{Key: []byte("/d"), ValueSize: 998}, // 2+998 = 1000: at the threshold counts as near
		{Key: []byte("/e"), ValueSize: -1},  // not sampled: never among the largest
	} {
		a.Add(r)
	}
	var r Result
	a.Fill(&r)
	var largest, near []string
	for _, k := range r.Largest {
		largest = append(largest, k.Key)
	}
	for _, k := range r.NearLimit {
		near = append(near, k.Key)
	}
	if strings.Join(largest, ",") != "/b,/d" || strings.Join(near, ",") != "/b,/d" {
		t.Errorf("largest %v, near %v; want /b,/d for both", largest, near)
	}
	if r.ValueSize.Max != 2000 || r.ValueSize.P50 > 2000 || r.ValueSize.P50 < 500 {
		t.Errorf("value sizes %+v", r.ValueSize)
	}
}

func TestVersionTable(t *testing.T) {
	for _, tc := range []struct {
		version string
		issues  int
		ok      bool
	}{
		// 3.2–3.5 also keep --snapshot-count 100,000 (one more problem each).
		{"3.5.7", 2, true}, {"3.5.8", 1, true}, {"3.5.17", 2, true}, {"3.5.19", 1, true},
		{"3.6.16", 0, true}, {"3.4.30", 1, true}, {"3.3.27", 2, true}, {"v3.5.16-rc.0", 2, true}, {"nonsense", 0, false},
	} {
		got, ok := issuesOf(tc.version)
		if len(got) != tc.issues || ok != tc.ok {
			t.Errorf("issuesOf(%q) = %d issues, ok %v; want %d, %v", tc.version, len(got), ok, tc.issues, tc.ok)
		}
	}
}
