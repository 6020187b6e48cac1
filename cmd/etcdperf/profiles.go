package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/profiles"
)

func newProfilesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profiles",
		Short: "List and show the workload profiles check and plan run",
		Long: `Profiles are named, versioned workloads written in YAML: rate, clients, duration,
warm-up, the data set (keys, values) and the mix of ops (put, range, watch, lease) by
ratio. The built-in ones are embedded in the binary; --profile FILE runs your own file
of the same schema (start from "etcdperf profiles show NAME").`,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the built-in profiles",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			entries, err := profiles.Builtin()
			if err != nil {
				return err
			}
			if a.output == "json" {
				out := struct {
					Profiles []*profiles.Profile `json:"profiles"`
				}{}
				for _, e := range entries {
					out.Profiles = append(out.Profiles, e.Profile)
				}
				return a.printJSON(out)
			}
			tw := a.table()
			fmt.Fprintln(tw, "NAME\tVERSION\tRATE\tCLIENTS\tDURATION\tOPS\tDESCRIPTION")
			for _, e := range entries {
				p := e.Profile
				fmt.Fprintf(tw, "%s\t%d\t%g\t%d\t%s\t%s\t%s\n", p.Name, p.Version, p.Rate, p.Clients, p.Duration, opMix(p), p.Description)
			}
			return tw.Flush()
		},
	}, &cobra.Command{
		Use:   "show NAME|FILE",
		Short: "Print a profile's YAML (-w json: the parsed profile)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			e, err := profiles.Load(args[0])
			if err != nil {
				return usageErr(err)
			}
			switch a.output {
			case "json":
				return a.printJSON(e.Profile)
			case "table":
				p := e.Profile
				tw := a.table()
				fmt.Fprintf(tw, "name\t%s\nversion\t%d\ndescription\t%s\nrate\t%g req/s\nclients\t%d\nconnections\t%d\nduration\t%s\nwarmup\t%s\nkeys\t%d of %s\nvalues\t%s\nops\t%s\n",
					p.Name, p.Version, p.Description, p.Rate, p.Clients, max(p.Connections, 1), p.Duration, p.Warmup, p.Keys.Space, p.Keys.Size, valuesText(p.Values), opMix(p))
				return tw.Flush()
			}
			_, err = a.stdout.Write(e.YAML)
			return err
		},
	})
	return cmd
}

// opMix renders the ops of p as "put 87%, range 3%, lease 10%, watch ×400".
func opMix(p *profiles.Profile) string {
	var parts []string
	for _, op := range p.Ops {
		if op.Op == profiles.OpWatch {
			parts = append(parts, fmt.Sprintf("watch ×%d", op.Watchers))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %g%%", op.Op, op.Ratio*100))
	}
	return strings.Join(parts, ", ")
}

func valuesText(v profiles.Values) string {
	if v.Size > 0 {
		return v.Size.String()
	}
	return v.Min.String() + "–" + v.Max.String()
}
