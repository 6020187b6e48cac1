package finding

// Criterion is one pass/fail rule of a command's own verdict (check's default
// verdict, qualify's tiers): what was observed against which threshold, and where
// the threshold comes from.
type Criterion struct {
	Name      string `json:"name"`
	Observed  string `json:"observed"`
	Threshold string `json:"threshold"`
	Source    string `json:"source"`
	// Margin is how far the observed value is past the threshold, as a fraction
	// of it: positive is past it (fails, as an Evidence.Margin over 1 is), negative
	// is short of it by that much (passes); null when not measured or when the
	// threshold is zero.
	Margin *float64 `json:"margin"`
	Pass   bool     `json:"pass"`
}

// Higher builds a criterion where more is better: it passes when obs ≥ req.
// measured says whether obs is known; an unknown value never passes.
func Higher(name, obsText string, obs float64, reqText string, req float64, src string, measured bool) Criterion {
	c := Criterion{Name: name, Observed: obsText, Threshold: reqText, Source: src}
	if measured && req > 0 {
		m := 1 - obs/req
		c.Margin, c.Pass = &m, obs >= req
	}
	return c
}

// Lower builds a criterion where less is better: strict requires obs < req,
// else obs ≤ req. measured says whether obs is known; an unknown value never passes.
func Lower(name, obsText string, obs float64, reqText string, req float64, src string, measured, strict bool) Criterion {
	c := Criterion{Name: name, Observed: obsText, Threshold: reqText, Source: src}
	if measured && req > 0 {
		m := obs/req - 1
		c.Margin, c.Pass = &m, obs < req || (!strict && obs == req)
	}
	return c
}

// AllPass reports whether every criterion passed.
func AllPass(cs []Criterion) bool {
	for _, c := range cs {
		if !c.Pass {
			return false
		}
	}
	return true
}
