package profiles

import "testing"

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
