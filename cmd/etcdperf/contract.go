package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// outputsKey is the annotation naming the -w values a command honours; a command
// without it honours all three. The root refuses any other value in one line.
const outputsKey = "etcdperf.io/outputs"

// allOutputs are the -w values; each command honours them all unless it says.
var allOutputs = []string{"simple", "json", "table"}

// withOutputs declares the -w values cmd honours.
func withOutputs(cmd *cobra.Command, outs ...string) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[outputsKey] = strings.Join(outs, ",")
	return cmd
}

// outputsOf are the -w values cmd honours.
func outputsOf(cmd *cobra.Command) []string {
	if s, ok := cmd.Annotations[outputsKey]; ok {
		return strings.Split(s, ",")
	}
	return allOutputs
}

// checkOutput refuses a -w value the command does not honour.
func checkOutput(cmd *cobra.Command, out string) error {
	if !slices.Contains(allOutputs, out) {
		return usageErr(fmt.Errorf("-w %q: must be simple, json or table", out))
	}
	if outs := outputsOf(cmd); !slices.Contains(outs, out) {
		return usageErr(fmt.Errorf("-w %s: %s writes %s only", out, cmd.CommandPath(), strings.Join(outs, " or ")))
	}
	return nil
}

// declaredOutputs are the commands that honour fewer -w values than all three:
// where a table would print what simple prints, table is refused rather than
// silently equal.
var declaredOutputs = map[string][]string{
	"etcdperf plan":       {"simple", "json"},
	"etcdperf qualify":    {"simple", "json"},
	"etcdperf report":     {"simple", "json"}, // --format picks the rendering; -w json is --format json
	"etcdperf k8s worker": {"simple"},         // prints the child's output; its -w goes after --
}

// declareOutputs applies declaredOutputs to the tree; a path that names no
// command is a bug the tree test catches.
func declareOutputs(root *cobra.Command) {
	walk(root, func(c *cobra.Command) {
		if outs, ok := declaredOutputs[c.CommandPath()]; ok {
			withOutputs(c, outs...)
		}
	})
}

// walk calls f on cmd and every command under it.
func walk(cmd *cobra.Command, f func(*cobra.Command)) {
	f(cmd)
	for _, c := range cmd.Commands() {
		walk(c, f)
	}
}

// guardGroups makes every command that only groups others (bench, drill, k8s,
// profiles) refuse an unknown subcommand with exit 2, where cobra would print the
// help and exit 0; without arguments it still prints the help.
func guardGroups(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		guardGroups(c)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() || !cmd.HasParent() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	withOutputs(cmd, "simple") // it prints its help
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			var names []string
			for _, s := range c.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name())
				}
			}
			return usageErr(fmt.Errorf("unknown command %q for %q: want one of %s", args[0], c.CommandPath(), strings.Join(names, ", ")))
		}
		return c.Help()
	}
}
