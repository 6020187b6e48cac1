package profiles

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseMix(t *testing.T) {
	ops, err := ParseMix("put=0.5, txn=0.3,list=0.1,lease=0.1")
	if err != nil || len(ops) != 4 || ops[1].Op != OpTxn || ops[1].Ratio != 0.3 {
		t.Fatalf("%+v, %v", ops, err)
	}
	for _, bad := range []string{"", "put", "put=0.5", "put=0.5,put=0.5", "watch=1", "nope=1", "put=2", "put=-1,txn=2", "put=x"} {
		if _, err := ParseMix(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseMix(f *testing.F) {
	f.Add("put=0.5,txn=0.5")
	f.Fuzz(func(t *testing.T, s string) {
		ops, err := ParseMix(s)
		if err != nil {
			return
		}
		var sum float64
		for _, op := range ops {
			sum += op.Ratio
		}
		if sum < 0.999 || sum > 1.001 {
			t.Errorf("%q: ratios sum to %g", s, sum)
		}
	})
}

// TestMix: each op gets the options of its kind only, a watch is added when it
// has watchers, and the result is checked as a profile.
func TestMix(t *testing.T) {
	opts := Op{Width: 10, Limit: 5, Consistency: "s", KeysOnly: true, TxnOps: 4, PageSize: 100, Exact: true,
		TTL: Duration(30e9), LeaseKeys: 2, KeepAlives: 3, Expire: true, Watchers: 3, Streams: 1, WatchedKeys: 10}
	base := Profile{Name: "mixed", Version: 1, Description: "a mix", Rate: 100, Clients: 4, Duration: Duration(1e9), Keys: Keys{Size: 8, Space: 100}, Values: Values{Size: 64}}
	p, err := Mix("put=0.4,range=0.2,txn=0.2,list=0.1,lease=0.1", opts, base)
	if err != nil {
		t.Fatal(err)
	}
	want := []Op{
		{Op: OpPut, Ratio: 0.4},
		{Op: OpRange, Ratio: 0.2, Width: 10, Limit: 5, Consistency: "s", KeysOnly: true},
		{Op: OpTxn, Ratio: 0.2, TxnOps: 4},
		{Op: OpList, Ratio: 0.1, PageSize: 100, Exact: true, Consistency: "s"},
		{Op: OpLease, Ratio: 0.1, TTL: Duration(30e9), LeaseKeys: 2, KeepAlives: 3, Expire: true},
		{Op: OpWatch, Watchers: 3, Streams: 1, WatchedKeys: 10},
	}
	if len(p.Ops) != len(want) {
		t.Fatalf("ops %+v", p.Ops)
	}
	for i := range want {
		if !reflect.DeepEqual(p.Ops[i], want[i]) {
			t.Errorf("op %d: %+v, want %+v", i, p.Ops[i], want[i])
		}
	}
	if p.Name != "mixed" || p.Rate != 100 {
		t.Errorf("profile %+v lost its base", p)
	}
	opts.Watchers = 0
	if p, err := Mix("put=1", opts, base); err != nil || len(p.Ops) != 1 {
		t.Errorf("no watchers: %+v, %v", p, err)
	}
	if _, err := Mix("put=2", opts, base); err == nil {
		t.Error("bad ratios accepted")
	}
	bad := base
	bad.Clients = 0
	if _, err := Mix("put=1", opts, bad); err == nil || !strings.HasPrefix(err.Error(), "--ratios: ") {
		t.Errorf("an invalid profile: %v", err)
	}
}
