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
		status Status
		margin float64 // positive past the threshold; checked only when measured
		known  bool
	}{
		{"higher passes", Higher("cpu", "4", 4, "≥ 2", 2, "s", true), StatusPass, -1, true},
		{"higher fails", Higher("cpu", "1", 1, "≥ 2", 2, "s", true), StatusFail, 0.5, true},
		{"higher unknown", Higher("cpu", "?", 0, "≥ 2", 2, "s", false), StatusInvalid, 0, false},
		{"lower strict at the bound fails", Lower("p99", "10", 10, "< 10", 10, "s", true, true), StatusFail, 0, true},
		{"lower at the bound passes", Lower("p99", "10", 10, "≤ 10", 10, "s", true, false), StatusPass, 0, true},
		{"lower passes", Lower("p99", "5", 5, "≤ 10", 10, "s", true, false), StatusPass, -0.5, true},
		{"lower unknown", Lower("p99", "?", 0, "≤ 10", 10, "s", false, false), StatusInvalid, 0, false},
	} {
		if tc.c.Status != tc.status || tc.c.Passed() != (tc.status == StatusPass) || (tc.c.Margin != nil) != tc.known || (tc.known && *tc.c.Margin != tc.margin) {
			t.Errorf("%s: %+v, want %s", tc.name, tc.c, tc.status)
		}
	}
	if AllPass([]Criterion{{Status: StatusPass}, {Status: StatusFail}}) || AllPass([]Criterion{{Status: StatusInvalid}}) || !AllPass(nil) {
		t.Error("AllPass")
	}
}

// TestCriterionJSON: a criterion is written with its status, and read back
// from either form, a version 2 run file's boolean pass included.
func TestCriterionJSON(t *testing.T) {
	b, err := json.Marshal(Criterion{Name: "errors", Observed: "0", Threshold: "0", Source: "s", Status: StatusPass})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"errors","observed":"0","threshold":"0","source":"s","margin":null,"status":"pass"}`; string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	for in, want := range map[string]Status{
		string(b):                                      StatusPass,
		`{"name":"x","pass":true}`:                     StatusPass,
		`{"name":"x","pass":false}`:                    StatusFail,
		`{"name":"x","status":"invalid","pass":false}`: StatusInvalid,
		`{"name":"x"}`:                                 "",
	} {
		var c Criterion
		if err := json.Unmarshal([]byte(in), &c); err != nil || c.Status != want || c.Name == "" {
			t.Errorf("%s: read %+v (%v), want status %q", in, c, err, want)
		}
	}
}
