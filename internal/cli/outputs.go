package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// outputsKey is the annotation naming the -w values a command honours; a command
// without it honours all three.
const outputsKey = "etcdperf.io/outputs"

// Outputs are the -w values; each command honours them all unless it says.
var Outputs = []string{"simple", "json", "table"}

// WithOutputs declares the -w values cmd honours.
func WithOutputs(cmd *cobra.Command, outs ...string) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[outputsKey] = strings.Join(outs, ",")
	return cmd
}

// OutputsOf are the -w values cmd honours.
func OutputsOf(cmd *cobra.Command) []string {
	if s, ok := cmd.Annotations[outputsKey]; ok {
		return strings.Split(s, ",")
	}
	return Outputs
}

// CheckOutput refuses a -w value the command does not honour, in one line.
func CheckOutput(cmd *cobra.Command, out string) error {
	if !slices.Contains(Outputs, out) {
		return fmt.Errorf("-w %q: must be simple, json or table", out)
	}
	if outs := OutputsOf(cmd); !slices.Contains(outs, out) {
		return fmt.Errorf("-w %s: %s writes %s only", out, cmd.CommandPath(), strings.Join(outs, " or "))
	}
	return nil
}

// DeclareOutputs applies declared (command path → the -w values it honours) to
// the tree under root, and declares the commands cobra adds (help, completion)
// and those that only group others simple only: they print text.
func DeclareOutputs(root *cobra.Command, declared map[string][]string) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	Walk(root, func(c *cobra.Command) {
		if outs, ok := declared[c.CommandPath()]; ok {
			WithOutputs(c, outs...)
		}
		for p := c; p.HasParent(); p = p.Parent() {
			if p.Name() == "help" || p.Name() == "completion" {
				WithOutputs(c, "simple")
			}
		}
	})
}

// Walk calls f on cmd and every command under it.
func Walk(cmd *cobra.Command, f func(*cobra.Command)) {
	f(cmd)
	for _, c := range cmd.Commands() {
		Walk(c, f)
	}
}

// GuardGroups makes every command that only groups others (bench, drill, k8s,
// profiles) refuse an unknown subcommand with usage(err), where cobra would print
// the help and exit 0; without arguments it still prints the help.
func GuardGroups(cmd *cobra.Command, usage func(error) error) {
	for _, c := range cmd.Commands() {
		GuardGroups(c, usage)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() || !cmd.HasParent() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	WithOutputs(cmd, "simple") // it prints its help
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			var names []string
			for _, s := range c.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name())
				}
			}
			return usage(fmt.Errorf("unknown command %q for %q: want one of %s", args[0], c.CommandPath(), strings.Join(names, ", ")))
		}
		return c.Help()
	}
}
