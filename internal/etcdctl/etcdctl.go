// Package etcdctl does what etcdctl does with its connection flags beyond the
// plain values: endpoints from DNS SRV records (--discovery-srv) and flags from
// ETCDCTL_* environment variables, with etcdctl's warnings.
package etcdctl

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/client/pkg/v3/srv"
	"go.etcd.io/etcd/pkg/v3/flags"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// EnvPrefix is the prefix of the environment variables that stand for flags.
const EnvPrefix = "ETCDCTL"

// Lookup resolves the client endpoints of domain as etcdctl's --discovery-srv
// does: the SRV records _etcd-client-ssl._tcp and _etcd-client._tcp (with
// -serviceName appended when given), https and http. Unless insecure, http
// endpoints are dropped with a note on warn, as etcdctl prints it.
func Lookup(domain, serviceName string, insecure bool, warn io.Writer) ([]string, error) {
	s, err := srv.GetClient("etcd-client", domain, serviceName)
	if err != nil {
		return nil, fmt.Errorf("--discovery-srv %s: %w", domain, err)
	}
	if insecure {
		return s.Endpoints, nil
	}
	var eps []string
	for _, ep := range s.Endpoints {
		if strings.HasPrefix(ep, "http://") {
			fmt.Fprintf(warn, "etcdperf: ignoring discovered insecure endpoint %q (--insecure-discovery to use it)\n", ep)
			continue
		}
		eps = append(eps, ep)
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("--discovery-srv %s: no secure endpoint among %v (--insecure-discovery to use http ones)", domain, s.Endpoints)
	}
	return eps, nil
}

// ErrShadowed says an ETCDCTL_ variable and the flag it stands for were both
// given; etcdctl refuses that too.
var ErrShadowed = errors.New("is shadowed by its command-line flag: unset the variable or drop the flag")

// FromEnv sets every flag of fs the command line left unset from its ETCDCTL_
// variable, with etcd's own code (go.etcd.io/etcd/pkg/v3/flags). It writes
// etcdctl's warning for each ETCDCTL_ variable that names no flag to warn, and
// refuses a variable whose flag the command line also sets.
func FromEnv(fs *pflag.FlagSet, warn io.Writer) error {
	rec := &recorder{}
	// etcd's code calls Fatal for a shadowed variable; the hook keeps the process
	// alive so the caller exits with its own code and one line.
	lg := zap.New(rec, zap.WithFatalHook(noExit{}))
	if err := flags.SetPflagsFromEnv(lg, EnvPrefix, fs); err != nil {
		return err
	}
	var shadowed error
	conflict := map[string]bool{}
	for _, e := range rec.entries {
		if strings.HasPrefix(e.msg, "conflicting environment variable") {
			conflict[e.fields["environment-variable"]] = true
		}
	}
	for _, e := range rec.entries {
		v := e.fields["environment-variable"]
		name, _, _ := strings.Cut(v, "=")
		switch {
		case conflict[name] && strings.HasPrefix(e.msg, "unrecognized"):
			// etcd's code warns of it again; it is the conflict, reported below.
		case strings.HasPrefix(v, "ETCDCTL_API="):
			// etcdctl's own choice of API (3 since 3.4), no flag: set in many shells.
		case strings.HasPrefix(e.msg, "unrecognized environment variable"):
			fmt.Fprintf(warn, "etcdperf: warning: unrecognized environment variable %s\n", v)
		case strings.HasPrefix(e.msg, "conflicting environment variable") && shadowed == nil:
			shadowed = fmt.Errorf("%s %w", v, ErrShadowed)
		}
	}
	return shadowed
}

// recorder is a zap core that keeps what etcd's flags code logs.
type recorder struct {
	entries []entry
	fields  []zapcore.Field
}

type entry struct {
	msg    string
	fields map[string]string
}

func (r *recorder) Enabled(zapcore.Level) bool { return true }
func (r *recorder) With(fs []zapcore.Field) zapcore.Core {
	return &recorder{fields: append(append([]zapcore.Field{}, r.fields...), fs...)}
}
func (r *recorder) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(e, r)
}
func (r *recorder) Write(e zapcore.Entry, fs []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range append(append([]zapcore.Field{}, r.fields...), fs...) {
		f.AddTo(enc)
	}
	m := map[string]string{}
	for k, v := range enc.Fields {
		m[k] = fmt.Sprint(v)
	}
	r.entries = append(r.entries, entry{msg: e.Message, fields: m})
	return nil
}
func (r *recorder) Sync() error { return nil }

// noExit is a fatal hook that returns instead of exiting.
type noExit struct{}

func (noExit) OnWrite(*zapcore.CheckedEntry, []zapcore.Field) {}
