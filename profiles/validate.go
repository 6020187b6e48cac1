package profiles

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/etcdperf/etcdperf/bench"
)

// valueBuckets is how many value sizes a values range is spread over (see Build).
const valueBuckets = 4

// stampBytes is the head of a watched value that carries its send time (bench's
// watch latency): values under a watch must hold it.
const stampBytes = 8

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// validate checks the values of a decoded profile, each error at its field's line.
func (c *checker) validate(p *Profile) {
	switch {
	case p.Name == "":
		c.add("name", "required")
	case !nameRE.MatchString(p.Name):
		c.add("name", "%q: use lower-case letters, digits and dashes", p.Name)
	}
	if p.Version < 1 {
		c.add("version", "must be at least 1, got %d", p.Version)
	}
	if p.Description == "" {
		c.add("description", "required: say what traffic the profile stands for")
	}
	if p.Rate <= 0 || p.Rate > maxRate || math.IsNaN(p.Rate) {
		c.add("rate", "must be between 1 and %d requests/s, got %g", maxRate, p.Rate)
	}
	if p.Clients < 1 || p.Clients > maxClients {
		c.add("clients", "must be between 1 and %d, got %d", maxClients, p.Clients)
	}
	if p.Connections < 0 || p.Connections > max(p.Clients, 1) {
		c.add("connections", "must be between 1 and the %d clients, got %d", p.Clients, p.Connections)
	}
	if p.Duration <= 0 {
		c.add("duration", "must be positive, got %s", p.Duration)
	}
	if p.Warmup < 0 {
		c.add("warmup", "must not be negative, got %s", p.Warmup)
	}
	if p.SLO.P99 < 0 {
		c.add("slo.p99", "must not be negative, got %s", p.SLO.P99)
	}
	if p.CompactInterval < 0 {
		c.add("compact_interval", "must not be negative, got %s", p.CompactInterval)
	}
	dataOK := c.validateData(p)
	c.validateOps(p, dataOK)
}

// validateData checks keys and values; it reports whether they are valid, as
// the checks of the ops build on them.
func (c *checker) validateData(p *Profile) bool {
	n := len(c.errs)
	k, v := p.Keys, p.Values
	switch {
	case k.Size < 1 || k.Size > 64<<10:
		c.add("keys.size", "must be between 1 byte and 64KiB, got %d", k.Size)
	case k.Space < 1:
		c.add("keys.space", "must be at least 1")
	case len(strconv.FormatUint(k.Space, 10)) > int(k.Size):
		c.add("keys.space", "%d keys need %d-byte keys, keys.size is %d", k.Space, len(strconv.FormatUint(k.Space, 10)), k.Size)
	}
	switch {
	case v.Size > 0 && (v.Min > 0 || v.Max > 0):
		c.add("values", "give either size or min and max, not both")
	case v.Size == 0 && v.Min == 0 && v.Max == 0:
		c.add("values", "give size, or min and max")
	case v.Size == 0 && (v.Min < 1 || v.Max < v.Min):
		c.add("values.max", "want 1 ≤ min ≤ max, got min %d and max %d", v.Min, v.Max)
	case v.largest() > maxValue:
		c.add(v.field(), "%s is over 1MiB, too close to etcd's 1.5 MiB request limit (--max-request-bytes)", v.largest())
	case int(k.Size)+int(v.largest())+512 > bench.MaxRequestBytes:
		c.add(v.field(), "a %d-byte key and a %s value exceed etcd's request limit", k.Size, v.largest())
	case v.Size == 0 && k.Space < valueBuckets:
		c.add("keys.space", "a values range is spread over %d sizes, each on its share of the keys: want at least %d keys", valueBuckets, valueBuckets)
	}
	return len(c.errs) == n
}

func (v Values) largest() Size { return max(v.Size, v.Max) }

func (v Values) smallest() Size {
	if v.Size > 0 {
		return v.Size
	}
	return v.Min
}

func (v Values) mean() Size {
	if v.Size > 0 {
		return v.Size
	}
	return (v.Min + v.Max) / 2
}

func (v Values) field() string {
	if v.Size > 0 {
		return "values.size"
	}
	return "values.max"
}

// keysPerBucket is the key space each value size gets.
func (p *Profile) keysPerBucket() uint64 {
	if p.Values.Size > 0 {
		return p.Keys.Space
	}
	return p.Keys.Space / valueBuckets
}

func (c *checker) validateOps(p *Profile, dataOK bool) {
	if len(p.Ops) == 0 {
		c.add("ops", "list at least one op (%s)", opNames())
		return
	}
	seen := map[string]bool{}
	var sum float64
	var paced int
	known := true
	for i, op := range p.Ops {
		at := func(f string) string { return fmt.Sprintf("ops[%d].%s", i, f) }
		kind := KindOf(op.Op)
		switch {
		case op.Op == "":
			c.add(fmt.Sprintf("ops[%d]", i), "op is required: %s", opNames())
			known = false
			continue
		case kind == nil || !kind.InProfile:
			c.add(at("op"), "unknown op %q: want %s", op.Op, opNames())
			known = false
			continue
		}
		if seen[op.Op] {
			c.add(at("op"), "%s is listed twice; give each op once", op.Op)
		}
		seen[op.Op] = true
		if !kind.Paced {
			if op.Ratio != 0 {
				c.add(at("ratio"), "a %s has no ratio: its events follow the puts", op.Op)
			}
		} else {
			paced++
			sum += op.Ratio
			if op.Ratio <= 0 || op.Ratio > 1 || math.IsNaN(op.Ratio) {
				c.add(at("ratio"), "must be in (0, 1], got %g", op.Ratio)
			}
		}
		c.notFor(kind, op, i)
		if kind.Check != nil {
			kind.Check(c, p, op, at)
		}
		if op.ValueSize > maxValue || (op.ValueSize > 0 && op.ValueSize < stampBytes) {
			c.add(at("value_size"), "must be between %d bytes and 1MiB, got %s", stampBytes, op.ValueSize)
		}
	}
	if !known || !dataOK {
		return // the mix as a whole cannot be judged
	}
	if paced == 0 {
		c.add("ops", "a profile needs a paced op; a watch alone sends nothing")
	} else if math.Abs(sum-1) > 1e-6 {
		c.add("ops", "the ratios of the paced ops must sum to 1, got %g", sum)
	}
	txn := seen[OpTxn] || seen[OpTxnCreate] || seen[OpTxnDelete]
	if seen[OpWatch] && !seen[OpPut] && !txn {
		c.add("ops", "a watch needs a put or txn op: its events follow the writes")
	}
	filled := seen[OpRange] || seen[OpWatch] || txn || seen[OpList]
	if filled && p.Keys.Space > maxFillKeys {
		c.add("keys.space", "ranges, watches, txns and lists need the keys filled first; %d keys is over the %d a run can fill", p.Keys.Space, maxFillKeys)
	} else if filled && float64(p.Keys.Space)*float64(p.Values.mean()) > maxFillBytes {
		c.add("keys.space", "filling %d keys of %s is over 1GiB", p.Keys.Space, p.Values.mean())
	}
}

// opNames lists the ops a profile can mix, for messages.
func opNames() string { return kindNames(inProfile, "or") }

// notFor rejects parameters that do not apply to the op's kind, so a misplaced
// field is not silently ignored.
func (c *checker) notFor(k *Kind, op Op, i int) {
	applies := map[string]bool{}
	for _, f := range k.Fields {
		applies[f] = true
	}
	t := reflect.TypeFor[Op]()
	v := reflect.ValueOf(op)
	for j := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(j).Tag.Get("yaml"), ",")
		if name == "op" || name == "ratio" || applies[name] || v.Field(j).IsZero() {
			continue
		}
		c.add(fmt.Sprintf("ops[%d].%s", i, name), "does not apply to a %s op", op.Op)
	}
}

// minTTL is the shortest lease TTL a profile may ask for: etcd raises shorter
// ones to its own minimum (1.5 election timeouts, 1.5 s by default) anyway.
const minTTL = 2 * time.Second

// defaultTTL is the TTL of a lease op that states none.
const defaultTTL = 60 * time.Second
