package results

import (
	"reflect"
	"testing"
	"time"
)

// TestMergeKeepsEveryFigure: every numeric figure of an op and of the client
// survives a merge of two workers: summed, the larger kept (merge:"max"), or
// recomputed (merge:"derived"); a field added to Op is covered without a line here.
func TestMergeKeepsEveryFigure(t *testing.T) {
	start := time.Unix(1_800_000_000, 0).UTC()
	worker := func(idx string, k float64) *Run {
		r := &Run{Version: Version, Command: "bench put", StartedAt: start, EndedAt: start.Add(10 * time.Second), DurationS: 10,
			Valid: true, Flags: map[string]string{"worker-index": idx}}
		var op Op
		setFigures(t, &op, k)
		op.Op, op.Requests, op.Errors = "put", int64(100*k), int64(k)
		var iv Interval
		setFigures(t, &iv, k)
		iv.Start, iv.Seconds = start, k/4 // coverage is at most a second
		op.Intervals = []Interval{iv}
		r.Ops = []Op{op}
		setFigures(t, &r.Client, k)
		return r
	}
	a, b := worker("0", 1), worker("1", 2)
	m, err := Merge([]*Run{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, x, y reflect.Value) {
		ty := got.Type()
		for i := range ty.NumField() {
			f := ty.Field(i)
			g, p, q := number(got.Field(i)), number(x.Field(i)), number(y.Field(i))
			if g == nil {
				continue
			}
			want := *p + *q
			switch f.Tag.Get("merge") {
			case "max":
				want = max(*p, *q)
			case "derived":
				if *g == 0 {
					t.Errorf("%s.%s: recomputed to 0", name, f.Name)
				}
				continue
			}
			if *g != want {
				t.Errorf("%s.%s = %g after the merge, want %g", name, f.Name, *g, want)
			}
		}
	}
	check("Op", reflect.ValueOf(m.Ops[0]), reflect.ValueOf(a.Ops[0]), reflect.ValueOf(b.Ops[0]))
	check("Client", reflect.ValueOf(m.Client), reflect.ValueOf(a.Client), reflect.ValueOf(b.Client))
	if len(m.Ops[0].Intervals) != 1 || !m.Ops[0].Intervals[0].Start.Equal(start) {
		t.Fatalf("intervals = %+v", m.Ops[0].Intervals)
	}
	check("Interval", reflect.ValueOf(m.Ops[0].Intervals[0]), reflect.ValueOf(a.Ops[0].Intervals[0]), reflect.ValueOf(b.Ops[0].Intervals[0]))
}

// TestAddFiguresRefuses: a field the sum does not handle (any kind but int,
// int64 and float64, or one of those tagged max) panics unless it is tagged
// merge:"caller" or merge:"derived", so a new field is never dropped silently.
func TestAddFiguresRefuses(t *testing.T) {
	type ok struct {
		N    int64
		F    float64 `merge:"max"`
		Name string  `merge:"caller"`
		Rate float64 `merge:"derived"`
	}
	type str struct{ Name string }
	type small struct{ N int32 }
	type flag struct{ B bool }
	type maxStr struct {
		S string `merge:"max"`
	}
	for _, c := range []struct {
		name  string
		merge func()
		panic bool
	}{
		{"tagged and numeric", func() { addFigures(&ok{}, ok{N: 1, F: 2, Name: "x", Rate: 3}) }, false},
		{"untagged string", func() { addFigures(&str{}, str{"x"}) }, true},
		{"untagged int32", func() { addFigures(&small{}, small{1}) }, true},
		{"untagged bool", func() { addFigures(&flag{}, flag{true}) }, true},
		{"max of a string", func() { addFigures(&maxStr{}, maxStr{"x"}) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if got := recover() != nil; got != c.panic {
					t.Errorf("panicked %v, want %v", got, c.panic)
				}
			}()
			c.merge()
		})
	}
}

// setFigures gives every numeric field of *v a distinct non-zero value, scaled by k.
func setFigures[T any](t *testing.T, v *T, k float64) {
	t.Helper()
	rv := reflect.ValueOf(v).Elem()
	n := 0
	for i := range rv.NumField() {
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			n++
			f.SetInt(int64(float64(n) * k))
		case reflect.Float64:
			n++
			f.SetFloat(float64(n) * k)
		}
	}
	if n == 0 {
		t.Fatalf("%T has no numeric field", *v)
	}
}

// number is a numeric field's value as a float64; nil for other kinds.
func number(v reflect.Value) *float64 {
	var x float64
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		x = float64(v.Int())
	case reflect.Float64:
		x = v.Float()
	default:
		return nil
	}
	return &x
}
