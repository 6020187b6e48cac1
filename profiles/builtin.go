package profiles

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// ErrUnknown is returned for a profile name that is neither built in nor a file.
var ErrUnknown = errors.New("unknown profile")

// Entry is a profile with its YAML text, as shipped or as read from a file.
type Entry struct {
	Profile *Profile
	YAML    []byte
	// File is the path of a user file; "" for a built-in profile.
	File string
}

// Builtin returns the built-in profiles, sorted by name. They are parsed on every
// call; a broken one is a build defect, caught by the tests.
func Builtin() ([]Entry, error) {
	names, err := fs.Glob(builtinFS, "builtin/*.yaml")
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, n := range names {
		b, err := builtinFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		p, err := Parse(n, b)
		if err != nil {
			return nil, fmt.Errorf("built-in profile: %w", err)
		}
		if want := strings.TrimSuffix(path.Base(n), ".yaml"); p.Name != want {
			return nil, fmt.Errorf("built-in profile %s is named %q", n, p.Name)
		}
		out = append(out, Entry{Profile: p, YAML: b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Profile.Name < out[j].Profile.Name })
	return out, nil
}

// Names lists the built-in profile names.
func Names() []string {
	entries, _ := Builtin()
	var out []string
	for _, e := range entries {
		out = append(out, e.Profile.Name)
	}
	return out
}

// Load returns the built-in profile called nameOrFile or, when it names a file
// (it contains a path separator or ends in .yaml/.yml), the profile in that file.
func Load(nameOrFile string) (Entry, error) {
	if isFile(nameOrFile) {
		b, err := os.ReadFile(nameOrFile)
		if err != nil {
			return Entry{}, fmt.Errorf("profile file: %w", err)
		}
		p, err := Parse(nameOrFile, b)
		if err != nil {
			return Entry{}, err
		}
		return Entry{Profile: p, YAML: b, File: nameOrFile}, nil
	}
	entries, err := Builtin()
	if err != nil {
		return Entry{}, err
	}
	for _, e := range entries {
		if e.Profile.Name == nameOrFile {
			return e, nil
		}
	}
	return Entry{}, fmt.Errorf("%w %q: built-in profiles are %s, or give a YAML file", ErrUnknown, nameOrFile, strings.Join(Names(), ", "))
}

func isFile(s string) bool {
	return strings.ContainsRune(s, os.PathSeparator) || strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".yml")
}
