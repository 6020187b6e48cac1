package profiles

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseMix parses bench mixed's --ratios, "put=0.5,txn=0.3,list=0.1,lease=0.1":
// the paced ops of a mix and their ratios, in the order given. Ratios must be
// positive and sum to 1; a watch has no ratio and is not named here.
func ParseMix(s string) ([]Op, error) {
	var ops []Op
	seen := map[string]bool{}
	var sum float64
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("--ratios %q: want OP=RATIO pairs such as put=0.5,txn=0.5", s)
		}
		switch kind := KindOf(k); {
		case kind != nil && inMix(kind):
		case kind != nil && kind.InProfile:
			return nil, fmt.Errorf("--ratios %q: a %s has no ratio; use --watchers", s, k)
		default:
			return nil, fmt.Errorf("--ratios %q: unknown op %q: want %s", s, k, kindNames(inMix, "or"))
		}
		if seen[k] {
			return nil, fmt.Errorf("--ratios %q: %s given twice", s, k)
		}
		seen[k] = true
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r <= 0 || r > 1 || math.IsNaN(r) {
			return nil, fmt.Errorf("--ratios %q: %s=%q: want a ratio in (0, 1]", s, k, v)
		}
		sum += r
		ops = append(ops, Op{Op: k, Ratio: r})
	}
	if math.Abs(sum-1) > 1e-6 {
		return nil, fmt.Errorf("--ratios %q: the ratios sum to %g, want 1", s, sum)
	}
	return ops, nil
}

// Mix is bench mixed's --ratios as a profile, so that Build composes it and its
// checks apply: the ops of ParseMix(ratios), each with the fields of its kind
// (Kind.Fields) taken from opts, then a watch with opts' watch fields when it
// has watchers. p holds the rest (name, rate, clients, keys, values); its Ops
// are replaced.
func Mix(ratios string, opts Op, p Profile) (*Profile, error) {
	ops, err := ParseMix(ratios)
	if err != nil {
		return nil, err
	}
	for i := range ops {
		KindOf(ops[i].Op).copyFields(&ops[i], opts)
	}
	if opts.Watchers > 0 {
		watch := Op{Op: OpWatch}
		KindOf(OpWatch).copyFields(&watch, opts)
		if watch.Prefix {
			watch.WatchedKeys = 0 // a prefix watch watches every key
		}
		ops = append(ops, watch)
	}
	p.Ops = ops
	if err := Validate(&p); err != nil {
		return nil, fmt.Errorf("--ratios: %w", err)
	}
	return &p, nil
}
