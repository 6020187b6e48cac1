package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/spf13/pflag"
)

// FlagsOf are the flags the user set, by name, as a run file records them:
// never --password, and --user without its password.
func FlagsOf(fs *pflag.FlagSet) map[string]string {
	m := map[string]string{}
	fs.Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "password":
			return
		case "user":
			name, _, _ := strings.Cut(f.Value.String(), ":")
			m[f.Name] = name
			return
		}
		m[f.Name] = f.Value.String()
	})
	return m
}

// StartCPUProfile starts a Go CPU profile of the process into path (--cpu-profile,
// for developers: measure before optimizing); stop ends it.
func StartCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
