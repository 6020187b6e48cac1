package main

import (
	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/profiles"
	"github.com/etcdperf/etcdperf/report"
)

func newProfilesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profiles",
		Short: "List and show the workload profiles check and plan run",
		Long:  profiles.Usage,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the built-in profiles (-w table: every figure of their shape)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			entries, err := profiles.Builtin()
			if err != nil {
				return err
			}
			return report.Print(a.stdout, a.output, report.NewProfileList(entries))
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
			return report.Print(a.stdout, a.output, report.ProfileShow{Profile: e.Profile, YAML: e.YAML})
		},
	})
	return cmd
}
