package profiles

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/etcdperf/etcdperf/bench"
	fc "github.com/etcdperf/etcdperf/internal/flagcheck"
)

// Kind declares one workload op once, as node_exporter declares a collector:
// the bench subcommand that drives it alone (its name, help and flags), its key
// in profiles and in bench mixed --ratios, the profile fields that apply to it
// and their checks, the flags bench mixed takes for it, and how a profile's op
// of the kind becomes part of a workload. The bench command, the profile
// parser, Mix and Build all read it; the figures an op reports are merged
// field by field from results.Op, so they need no declaration.
//
// Adding an op is its workload in package bench and its Kind in a file of
// this package that registers it (see register and docs/extending.md).
type Kind struct {
	// Name is the bench subcommand, the profile's op key and the --ratios key.
	Name string
	// Short, Long and Example are the help of 'bench NAME'.
	Short, Long, Example string
	// Command registers the flags of 'bench NAME' on f and returns what runs it
	// once they are parsed; nil for a kind with no command of its own (txn-create).
	Command func(f *pflag.FlagSet) Command
	// Rules are the flagcheck rules of the flags the kind owns (see cmd's flagRules).
	Rules map[string]fc.Constraint

	// InProfile: a profile (and --ratios, when Paced) may name the kind.
	InProfile bool
	// Paced: the op has a ratio of the paced requests; a watch has none, its
	// events follow the puts.
	Paced bool
	// Fields are the profile fields (YAML names) that apply to an op of the
	// kind; any other set field is refused.
	Fields []string
	// Check validates a profile's op of the kind beyond Fields; at names one of
	// its fields for the message.
	Check func(c *checker, p *Profile, op Op, at func(string) string)
	// MixFlags registers the flags bench mixed takes for the kind into opts;
	// Mix copies the kind's Fields from opts into each op of the kind.
	MixFlags func(f *pflag.FlagSet, opts *Op)
	// Part builds the workload of a profile's op of the kind that runs beside
	// the others; nil for the kinds Build composes itself (put, range, watch
	// and the txns share one key space).
	Part func(e PartEnv, op Op) (bench.Workload, error)
}

// Command is a bench subcommand's run: Check refuses bad flags before any
// connection (optional), New builds the workload over the load's clients.
type Command struct {
	Check func(b Base) error
	New   func(clients []*clientv3.Client, b Base) (bench.Workload, error)
}

// Base holds the flags every bench command shares that a workload reads.
type Base struct {
	Prefix           string
	KeySize, ValSize int
	Rate             float64
	Clients          int
}

// PartEnv is what a Part builds on: the profile, the load's clients, the
// part's own key prefix (the run's prefix + the kind's name + "/"), and the
// prefix of the txns' objects when the profile has txns ("" otherwise), for a
// part that reads them.
type PartEnv struct {
	Clients []*clientv3.Client
	Profile *Profile
	Prefix  string
	Objects string
}

// registered are the kinds each kind file declares with register, by rank.
var registered []ranked

type ranked struct {
	rank int
	kind *Kind
}

// register declares kinds from their own file, as node_exporter's
// registerCollector does: rank places them in Kinds (profiles list put at 10,
// range 20, ... mixed last), so an op is added by its file alone. It returns
// nothing useful; it is called as var _ = register(...).
func register(rank int, kinds ...*Kind) struct{} {
	for _, k := range kinds {
		registered = append(registered, ranked{rank, k})
	}
	slices.SortStableFunc(registered, func(a, b ranked) int { return cmp.Compare(a.rank, b.rank) })
	return struct{}{}
}

// Kinds are the workload ops, in the order profiles list them, Build composes
// their parts and messages name them.
func Kinds() []*Kind {
	out := make([]*Kind, len(registered))
	for i, r := range registered {
		out[i] = r.kind
	}
	return out
}

// KindOf is the kind called name; nil when there is none.
func KindOf(name string) *Kind {
	for _, k := range Kinds() {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// FlagRules are the flag rules every kind declares, for cmd's flagRules.
func FlagRules() map[string]fc.Constraint {
	var tables []map[string]fc.Constraint
	for _, k := range Kinds() {
		tables = append(tables, k.Rules)
	}
	return fc.Rules(tables...)
}

// kindNames lists the names of the kinds keep selects, joined as "a, b or c"
// (last is "or" or "and"; "," keeps commas throughout).
func kindNames(keep func(*Kind) bool, last string) string {
	var names []string
	for _, k := range Kinds() {
		if keep(k) {
			names = append(names, k.Name)
		}
	}
	if last == "," || len(names) < 2 {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + last + " " + names[len(names)-1]
}

func inProfile(k *Kind) bool { return k.InProfile }

func inMix(k *Kind) bool { return k.InProfile && k.Paced }

// MixNames lists the ops bench mixed --ratios can mix, "put, range, ...".
func MixNames() string { return kindNames(inMix, ",") }

// CommandNames lists the ops that have a bench subcommand, "put, range, ... or mixed".
func CommandNames() string { return kindNames(func(k *Kind) bool { return k.Command != nil }, "or") }

// opFields maps a profile op's YAML field names to their index in Op.
var opFields = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[Op]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		m[name] = i
	}
	return m
}()

// field is op's field of that YAML name.
func field(op *Op, name string) reflect.Value {
	i, ok := opFields[name]
	if !ok {
		panic(fmt.Sprintf("profiles: no op field %q", name)) // a Kind's Fields are checked by a test
	}
	return reflect.ValueOf(op).Elem().Field(i)
}

// copyFields copies the fields of k from src into dst.
func (k *Kind) copyFields(dst *Op, src Op) {
	for _, f := range k.Fields {
		field(dst, f).Set(field(&src, f))
	}
}
