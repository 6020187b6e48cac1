package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/etcdperf/etcdperf/profiles"
)

// ProfileList is `profiles list`: the built-in profiles, by name.
type ProfileList struct {
	Profiles []*profiles.Profile `json:"profiles"`
}

// NewProfileList lists the entries' profiles.
func NewProfileList(entries []profiles.Entry) ProfileList {
	var l ProfileList
	for _, e := range entries {
		l.Profiles = append(l.Profiles, e.Profile)
	}
	return l
}

// Simple writes one line per profile: its load, its ops and what it is for.
func (l ProfileList) Simple(w io.Writer) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "NAME\tVERSION\tRATE\tCLIENTS\tDURATION\tOPS\tDESCRIPTION")
	for _, p := range l.Profiles {
		fmt.Fprintf(tw, "%s\t%d\t%g\t%d\t%s\t%s\t%s\n", p.Name, p.Version, p.Rate, p.Clients, p.Duration, opMix(p), p.Description)
	}
	return tw.Flush()
}

// Table writes one row per profile with every figure of its shape (connections,
// warm-up, the data set) and no prose.
func (l ProfileList) Table(w io.Writer) error {
	tw := NewTable(w)
	fmt.Fprintln(tw, "NAME\tVERSION\tRATE\tCLIENTS\tCONNECTIONS\tDURATION\tWARMUP\tKEYS\tKEY SIZE\tVALUES\tOPS")
	for _, p := range l.Profiles {
		fmt.Fprintf(tw, "%s\t%d\t%g\t%d\t%d\t%s\t%s\t%d\t%s\t%s\t%s\n", p.Name, p.Version, p.Rate, p.Clients, max(p.Connections, 1),
			p.Duration, p.Warmup, p.Keys.Space, p.Keys.Size, valuesText(p.Values), opMix(p))
	}
	return tw.Flush()
}

// ProfileShow is `profiles show`: the profile (its JSON) and the YAML it was read from.
type ProfileShow struct {
	*profiles.Profile
	YAML []byte `json:"-"`
}

// Simple writes the profile's YAML as it was read.
func (s ProfileShow) Simple(w io.Writer) error {
	_, err := w.Write(s.YAML)
	return err
}

// Table writes the profile's fields, one per row.
func (s ProfileShow) Table(w io.Writer) error {
	p := s.Profile
	tw := NewTable(w)
	fmt.Fprintf(tw, "name\t%s\nversion\t%d\ndescription\t%s\nrate\t%g req/s\nclients\t%d\nconnections\t%d\nduration\t%s\nwarmup\t%s\nkeys\t%d of %s\nvalues\t%s\nops\t%s\n",
		p.Name, p.Version, p.Description, p.Rate, p.Clients, max(p.Connections, 1), p.Duration, p.Warmup, p.Keys.Space, p.Keys.Size, valuesText(p.Values), opMix(p))
	return tw.Flush()
}

// opMix renders the ops of p as "put 87%, range 3%, lease 10%, watch ×400".
func opMix(p *profiles.Profile) string {
	var parts []string
	for _, op := range p.Ops {
		if op.Op == profiles.OpWatch {
			parts = append(parts, fmt.Sprintf("watch ×%d", op.Watchers))
			continue
		}
		// Four significant figures: the ratios are YAML decimals, and
		// ratio*100 in binary floating point prints noise (2.5839999999999996).
		parts = append(parts, fmt.Sprintf("%s %.4g%%", op.Op, op.Ratio*100))
	}
	return strings.Join(parts, ", ")
}

func valuesText(v profiles.Values) string {
	if v.Size > 0 {
		return v.Size.String()
	}
	return v.Min.String() + "–" + v.Max.String()
}
