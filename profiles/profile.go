// Package profiles holds etcdperf's named workload profiles: versioned YAML
// documents, embedded in the binary, that describe an offered load (rate, clients,
// duration, the data set and the mix of operations), and user files of the same
// schema. Profiles are data; Build turns one into a bench workload.
//
// Parsing is strict: unknown fields are rejected and every validation error names
// the line of the offending field, so a typo in a profile is a one-line fix.
package profiles

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/internal/units"
)

// SchemaVersion is the profile format this build reads; a profile's own
// version (its revision) is independent of it.
const SchemaVersion = 1

// Op kinds a profile can mix.
const (
	OpPut   = "put"
	OpRange = "range"
	OpWatch = "watch"
	OpLease = "lease"
	// kube-apiserver's request shapes (bench txn and bench list).
	OpTxn       = "txn"
	OpTxnCreate = "txn-create"
	OpTxnDelete = "txn-delete"
	OpList      = "list"
)

// DefaultP99 is the p99 response-time threshold of a profile that states none:
// etcd's slow-request bound (bench.SlowRequest), which a healthy member answers
// 99% of requests well under.
const DefaultP99 = bench.SlowRequest

// DefaultP99Source says where DefaultP99 comes from.
const DefaultP99Source = "etcd server warning 'apply request took too long' (expected duration 100 ms)"

// Profile is one workload: how much load (rate, clients, duration), on what data
// (keys, values) and of which operations (ops, by ratio).
type Profile struct {
	Name        string `yaml:"name" json:"name"`
	Version     int    `yaml:"version" json:"version"`
	Description string `yaml:"description" json:"description"`
	// Source says where the numbers come from (a tool's source, a documented assumption).
	Source string `yaml:"source" json:"source,omitempty"`
	// Rate is the offered load in requests per second over all clients (open loop).
	Rate    float64 `yaml:"rate" json:"rate"`
	Clients int     `yaml:"clients" json:"clients"`
	// Connections is the number of gRPC connections the clients spread over; 0 means one.
	Connections int      `yaml:"connections" json:"connections,omitempty"`
	Duration    Duration `yaml:"duration" json:"duration"`
	Warmup      Duration `yaml:"warmup" json:"warmup,omitempty"`
	SLO         SLO      `yaml:"slo" json:"slo"`
	Keys        Keys     `yaml:"keys" json:"keys"`
	Values      Values   `yaml:"values" json:"values"`
	Ops         []Op     `yaml:"ops" json:"ops"`
	// CompactInterval, when set, compacts the history every interval during the
	// load, as kube-apiserver does (--etcd-compaction-interval).
	CompactInterval Duration `yaml:"compact_interval" json:"compact_interval,omitempty"`
}

// RecordIn writes the profile's identity and the load figures a run file's
// flags carry for it (the name, its version, clients and rate) into flags, so
// that a run made from a profile says which one, even when no flag was typed.
func (p *Profile) RecordIn(flags map[string]string) {
	flags["profile"] = p.Name
	flags["profile_version"] = strconv.Itoa(p.Version)
	flags["clients"] = strconv.Itoa(p.Clients)
	flags["rate"] = strconv.FormatFloat(p.Rate, 'g', -1, 64)
}

// Summary is what a command's output and run file say about the profile it ran.
type Summary struct {
	Name        string  `json:"name"`
	Version     int     `json:"version"`
	Description string  `json:"description"`
	Rate        float64 `json:"rate"`
	Clients     int     `json:"clients"`
	Connections int     `json:"connections"`
	DurationS   float64 `json:"duration_s"`
}

// Summary summarizes p; a profile without connections uses one.
func (p *Profile) Summary() Summary {
	return Summary{Name: p.Name, Version: p.Version, Description: p.Description, Rate: p.Rate,
		Clients: p.Clients, Connections: max(p.Connections, 1), DurationS: time.Duration(p.Duration).Seconds()}
}

// SLO is the latency objective check grades a run of the profile against.
type SLO struct {
	// P99 bounds the p99 response time of every paced op; 0 means DefaultP99.
	P99 Duration `yaml:"p99" json:"p99,omitempty"`
}

// Keys is the data set every op works on: one key space, so that lists, watches
// and updates touch the same objects, as they do in a real cluster.
type Keys struct {
	// Size is the key length in bytes after the prefix (a zero-padded index).
	Size Size `yaml:"size" json:"size"`
	// Space is the number of distinct keys; puts pick one uniformly at random.
	Space uint64 `yaml:"space" json:"space"`
}

// Values are the sizes puts write (and the fill before ranges and watches):
// either one Size, or a range from Min to Max.
type Values struct {
	Size Size `yaml:"size" json:"size,omitempty"`
	Min  Size `yaml:"min" json:"min,omitempty"`
	Max  Size `yaml:"max" json:"max,omitempty"`
}

// Op is one operation of the mix with its parameters; which ones apply depends on Op.
type Op struct {
	Op string `yaml:"op" json:"op"`
	// Ratio is the op's share of the paced requests; paced ratios sum to 1. A
	// watch has none: its events follow the puts.
	Ratio float64 `yaml:"ratio" json:"ratio,omitempty"`

	// range: [start, start+Width) from a random start; Limit caps the keys returned (a page).
	Width       uint64 `yaml:"width" json:"width,omitempty"`
	Limit       int64  `yaml:"limit" json:"limit,omitempty"`
	Consistency string `yaml:"consistency" json:"consistency,omitempty"`
	KeysOnly    bool   `yaml:"keys_only" json:"keys_only,omitempty"`
	CountOnly   bool   `yaml:"count_only" json:"count_only,omitempty"`

	// watch: Watchers over Streams gRPC streams on the first WatchedKeys keys.
	Watchers    int    `yaml:"watchers" json:"watchers,omitempty"`
	Streams     int    `yaml:"streams" json:"streams,omitempty"`
	WatchedKeys uint64 `yaml:"watched_keys" json:"watched_keys,omitempty"`

	// watch: Prefix makes every watcher watch the whole prefix of the objects
	// (the txn op's when there is one, else the puts'), as kube-apiserver's watch
	// cache watches a resource type; WatchedKeys then does not apply.
	Prefix bool `yaml:"prefix" json:"prefix,omitempty"`

	// lease: keep-alives of Leases leases granted with TTL; or, without Leases,
	// the life of leases as bench lease runs it: grant (TTL), LeaseKeys attached
	// puts, KeepAlives renewals, then a revoke, or expiry with Expire.
	Leases     int      `yaml:"leases" json:"leases,omitempty"`
	TTL        Duration `yaml:"ttl" json:"ttl,omitempty"`
	LeaseKeys  int      `yaml:"lease_keys" json:"lease_keys,omitempty"`
	KeepAlives int      `yaml:"keepalives" json:"keepalives,omitempty"`
	Expire     bool     `yaml:"expire" json:"expire,omitempty"`

	// txn: TxnOps keys per txn (default 1; at most etcd's --max-txn-ops, 128).
	TxnOps int `yaml:"txn_ops" json:"txn_ops,omitempty"`
	// list: PageSize keys per page (default 500, client-go's pager); Exact lists
	// at the revision of the start of the load; Consistency as for range.
	PageSize int64 `yaml:"page_size" json:"page_size,omitempty"`
	Exact    bool  `yaml:"exact" json:"exact,omitempty"`

	// ValueSize is the object size of a txn, list or lease op (default: the
	// mean of the profile's values).
	ValueSize Size `yaml:"value_size" json:"value_size,omitempty"`
}

// Duration is a time.Duration written as "60s" in YAML and JSON.
type Duration time.Duration

// UnmarshalYAML reads a Go duration string; a bare number is refused, since its
// unit would be a guess.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return nodeError(n, "want a duration such as 60s, got a %s", kindName(n.Kind))
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return nodeError(n, "want a duration such as 60s or 500ms, got %q", n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string ("1m0s").
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(time.Duration(d).String())), nil
}

// String renders the duration as Go does.
func (d Duration) String() string { return time.Duration(d).String() }

// Size is a byte count written as 1024, "1KiB" or "1.5MiB" in YAML (units.SizeSyntax).
type Size int64

// ParseSize parses a byte count in the one size syntax (units.SizeSyntax), at
// most math.MaxInt32 (a profile's sizes are keys, values and pages).
func ParseSize(s string) (Size, error) {
	v, err := units.ParseSize(s)
	if err != nil {
		return 0, err
	}
	if v > math.MaxInt32 {
		return 0, fmt.Errorf("%q is too large for a profile size (at most %d bytes)", s, math.MaxInt32)
	}
	return Size(v), nil
}

// UnmarshalYAML reads a number of bytes or a string with a unit.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return nodeError(n, "want a size such as 1024 or 1KiB, got a %s", kindName(n.Kind))
	}
	v, err := ParseSize(n.Value)
	if err != nil {
		return nodeError(n, "%v", err)
	}
	*s = v
	return nil
}

// String renders the size with the largest binary unit that divides it.
func (s Size) String() string {
	switch {
	case s >= 1<<20 && s%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", s>>20)
	case s >= 1<<10 && s%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", s>>10)
	}
	return fmt.Sprintf("%dB", int64(s))
}

// nodeError is a decode error at n's line, in the form yaml.v3 gives its own type
// errors, so that decoding goes on and every bad field is reported.
func nodeError(n *yaml.Node, format string, a ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, fmt.Sprintf(format, a...))}}
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}

// FieldError is one problem in a profile, at a line of its file.
type FieldError struct {
	File  string
	Line  int
	Field string // dotted path, e.g. ops[1].ratio; "" for the document
	Msg   string
}

// Error renders file:line: field: message.
func (e FieldError) Error() string {
	where := e.File
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	if e.Field == "" {
		return where + ": " + e.Msg
	}
	return where + ": " + e.Field + ": " + e.Msg
}

// ValidationError lists every problem found in a profile, in line order. Its
// message is the first one (one line for the CLI) and how many more there are.
type ValidationError struct {
	Errs []FieldError
}

// Error is the first problem and how many more there are, on one line.
func (v *ValidationError) Error() string {
	s := v.Errs[0].Error()
	if n := len(v.Errs) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more problem(s))", n)
	}
	return s
}

// ErrInvalid is wrapped by every error Parse returns for a bad document.
var ErrInvalid = errors.New("invalid profile")

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (v *ValidationError) Unwrap() error { return ErrInvalid }

// Limits of what a profile may ask for: beyond them a run is no longer practical
// (the fill alone would take minutes) or etcd refuses the request.
const (
	maxFillKeys  = 1_000_000
	maxFillBytes = 1 << 30
	maxValue     = 1 << 20 // a value over 1 MiB is close to etcd's 1.5 MiB request limit
	maxClients   = 10_000
	maxRate      = 1_000_000
)

// Parse reads a profile from YAML; file names it in errors. It rejects unknown
// fields, wrong types and invalid values, each with its line.
func Parse(file string, data []byte) (*Profile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &ValidationError{Errs: []FieldError{{File: file, Line: yamlErrLine(err), Msg: yamlErrMsg(err)}}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &ValidationError{Errs: []FieldError{{File: file, Line: 1, Msg: "empty document: a profile is a YAML mapping"}}}
	}
	root := doc.Content[0]
	c := &checker{file: file, lines: map[string]int{"": root.Line}}
	c.walk(root, reflect.TypeOf(Profile{}), "")
	if len(c.errs) > 0 {
		return nil, c.result()
	}
	var p Profile
	if err := root.Decode(&p); err != nil {
		c.typeErrors(err)
		return nil, c.result()
	}
	c.validate(&p)
	if len(c.errs) > 0 {
		return nil, c.result()
	}
	return &p, nil
}

// checker collects the problems of one document and the line of every field.
type checker struct {
	file  string
	lines map[string]int // field path -> line of its key
	errs  []FieldError
}

func (c *checker) add(path, format string, a ...any) {
	c.errs = append(c.errs, FieldError{File: c.file, Line: c.line(path), Field: path, Msg: fmt.Sprintf(format, a...)})
}

// line is the line of path, or of its nearest parent that is in the file (a
// missing field is reported where its parent starts).
func (c *checker) line(path string) int {
	for {
		if l, ok := c.lines[path]; ok {
			return l
		}
		if path == "" {
			return 0
		}
		if i := strings.LastIndexAny(path, ".["); i >= 0 {
			path = path[:i]
		} else {
			path = ""
		}
	}
}

func (c *checker) result() error {
	sort.SliceStable(c.errs, func(i, j int) bool { return c.errs[i].Line < c.errs[j].Line })
	return &ValidationError{Errs: c.errs}
}

// walk records the line of every field and rejects keys the schema lacks, by
// the yaml tags of t. Decoding with yaml.v3's KnownFields would reject them too,
// but only as free text; walking the node gives the path and line of each.
func (c *checker) walk(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		c.add(path, "YAML aliases are not supported in profiles")
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if t == reflect.TypeOf(time.Time{}) {
			return
		}
		if n.Kind != yaml.MappingNode {
			if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
				return
			}
			c.add(path, "want a mapping, got a %s", kindName(n.Kind))
			return
		}
		fields := map[string]reflect.Type{}
		var names []string
		for i := range t.NumField() {
			tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			fields[tag] = t.Field(i).Type
			names = append(names, tag)
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			c.lines[p] = k.Line
			ft, ok := fields[k.Value]
			if !ok {
				c.add(p, "unknown field %q (known: %s)", k.Value, strings.Join(names, ", "))
				continue
			}
			if seen[k.Value] {
				c.add(p, "field %q given twice", k.Value)
			}
			seen[k.Value] = true
			c.walk(v, ft, p)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
				return
			}
			c.add(path, "want a list, got a %s", kindName(n.Kind))
			return
		}
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			c.lines[p] = item.Line
			c.walk(item, t.Elem(), p)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// typeErrors turns yaml.v3's decode errors ("line 7: cannot unmarshal ...") into
// field errors at their lines.
func (c *checker) typeErrors(err error) {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		c.errs = append(c.errs, FieldError{File: c.file, Line: yamlErrLine(err), Msg: yamlErrMsg(err)})
		return
	}
	for _, e := range te.Errors {
		line := 0
		msg := e
		if rest, ok := strings.CutPrefix(e, "line "); ok {
			if num, m, ok := strings.Cut(rest, ": "); ok {
				line, _ = strconv.Atoi(num)
				msg = m
			}
		}
		c.errs = append(c.errs, FieldError{File: c.file, Line: line, Field: c.fieldAt(line), Msg: msg})
	}
}

// fieldAt names the field whose key is on line, for type errors; "" when none is.
func (c *checker) fieldAt(line int) string {
	best := ""
	for p, l := range c.lines {
		if l == line && len(p) > len(best) {
			best = p
		}
	}
	return best
}

// yamlErrLine digs "line N" out of a yaml syntax error.
func yamlErrLine(err error) int {
	s := err.Error()
	i := strings.Index(s, "line ")
	if i < 0 {
		return 0
	}
	j := i + len("line ")
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	n, _ := strconv.Atoi(s[j:k])
	return n
}

// yamlErrMsg drops yaml's "yaml: line N: " prefix, which FieldError puts back in file:line form.
func yamlErrMsg(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(s, "line "); ok {
		if _, m, ok := strings.Cut(rest, ": "); ok {
			return m
		}
	}
	return s
}

// Validate checks a profile built in code (not parsed from YAML) by the rules
// Parse applies; errors name fields but no lines.
func Validate(p *Profile) error {
	c := &checker{file: "profile " + p.Name, lines: map[string]int{}}
	c.validate(p)
	if len(c.errs) > 0 {
		return c.result()
	}
	return nil
}
