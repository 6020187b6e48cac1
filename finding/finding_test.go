package finding

import (
	"encoding/json"
	"testing"
)

func TestWorst(t *testing.T) {
	for _, tc := range []struct{ a, b, want Severity }{
		{Unknown, OK, OK},
		{OK, Unknown, OK},
		{OK, Warn, Warn},
		{Fail, Warn, Fail},
		{Warn, Fail, Fail},
		{Unknown, Unknown, Unknown},
	} {
		if got := Worst(tc.a, tc.b); got != tc.want {
			t.Errorf("Worst(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestBad(t *testing.T) {
	for s, want := range map[Severity]bool{OK: false, Unknown: false, Warn: true, Fail: true} {
		if s.Bad() != want {
			t.Errorf("%s.Bad() = %v", s, !want)
		}
	}
}

// The JSON names are the output contract (design brief, "Output contract").
func TestFindingJSON(t *testing.T) {
	f := Finding{Class: ClassDisk, Severity: Fail, Summary: "s", Evidence: []Evidence{{Signal: "x", Observed: "1", Threshold: "< 2", Source: "src", Severity: Fail}}}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"class":"disk","severity":"fail","summary":"s","evidence":[{"signal":"x","observed":"1","threshold":"\u003c 2","source":"src","severity":"fail"}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestCriteria(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      Criterion
		pass   bool
		margin float64 // positive past the threshold, as Evidence.Margin over 1; checked only when measured
		known  bool
	}{
		{"higher passes", Higher("cpu", "4", 4, "≥ 2", 2, "s", true), true, -1, true},
		{"higher fails", Higher("cpu", "1", 1, "≥ 2", 2, "s", true), false, 0.5, true},
		{"higher unknown", Higher("cpu", "?", 0, "≥ 2", 2, "s", false), false, 0, false},
		{"lower strict at the bound fails", Lower("p99", "10", 10, "< 10", 10, "s", true, true), false, 0, true},
		{"lower at the bound passes", Lower("p99", "10", 10, "≤ 10", 10, "s", true, false), true, 0, true},
		{"lower passes", Lower("p99", "5", 5, "≤ 10", 10, "s", true, false), true, -0.5, true},
	} {
		if tc.c.Pass != tc.pass || (tc.c.Margin != nil) != tc.known || (tc.known && *tc.c.Margin != tc.margin) {
			t.Errorf("%s: %+v", tc.name, tc.c)
		}
	}
	if AllPass([]Criterion{{Pass: true}, {Pass: false}}) || !AllPass(nil) {
		t.Error("AllPass")
	}
}
