package finding

import "encoding/json"

// Criterion is one pass/fail rule of a command's own verdict (check's default
// verdict, qualify's tiers): what was observed against which threshold, and where
// the threshold comes from.
type Criterion struct {
	Name      string `json:"name"`
	Observed  string `json:"observed"`
	Threshold string `json:"threshold"`
	Source    string `json:"source"`
	// Margin is how far the observed value is past the threshold, as a fraction
	// of it: positive is past it (fails), negative is short of it by that much
	// (passes); null when not measured or when the threshold is zero. Tables
	// print it with the same sign (report's qualify table: +50% is past).
	Margin *float64 `json:"margin"`
	// Status is pass or fail; invalid where the value was not measured, which
	// never passes.
	Status Status `json:"status"`
}

// Passed reports whether the criterion passed.
func (c Criterion) Passed() bool { return c.Status == StatusPass }

// PassIf is pass where ok, else fail.
func PassIf(ok bool) Status {
	if ok {
		return StatusPass
	}
	return StatusFail
}

// UnmarshalJSON reads a criterion, also as run files of version 2 wrote it:
// a boolean pass, false for a value not measured as for one that failed.
func (c *Criterion) UnmarshalJSON(b []byte) error {
	type plain Criterion
	var v struct {
		plain
		Pass *bool `json:"pass"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Criterion(v.plain)
	if c.Status == "" && v.Pass != nil {
		c.Status = PassIf(*v.Pass)
	}
	return nil
}

// Higher builds a criterion where more is better: it passes when obs ≥ req.
// measured says whether obs is known; an unknown value never passes.
func Higher(name, obsText string, obs float64, reqText string, req float64, src string, measured bool) Criterion {
	c := Criterion{Name: name, Observed: obsText, Threshold: reqText, Source: src, Status: StatusInvalid}
	if measured && req > 0 {
		m := 1 - obs/req
		c.Margin, c.Status = &m, PassIf(obs >= req)
	}
	return c
}

// Lower builds a criterion where less is better: strict requires obs < req,
// else obs ≤ req. measured says whether obs is known; an unknown value never passes.
func Lower(name, obsText string, obs float64, reqText string, req float64, src string, measured, strict bool) Criterion {
	c := Criterion{Name: name, Observed: obsText, Threshold: reqText, Source: src, Status: StatusInvalid}
	if measured && req > 0 {
		m := obs/req - 1
		c.Margin, c.Status = &m, PassIf(obs < req || (!strict && obs == req))
	}
	return c
}

// AllPass reports whether every criterion passed.
func AllPass(cs []Criterion) bool {
	for _, c := range cs {
		if !c.Passed() {
			return false
		}
	}
	return true
}
