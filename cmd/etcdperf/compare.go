package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/units"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

func newCompareCmd(a *app) *cobra.Command {
	var threshold string
	var alpha float64
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare run B against baseline run A, op by op, and flag regressions beyond the noise",
		Long:  report.CompareUsage,
		Example: `  etcdperf compare baseline.json candidate.json
  etcdperf compare baseline.json candidate.json --threshold 5% -w json`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			pct, err := units.ParsePercent(threshold)
			if err != nil {
				return usageErr(fmt.Errorf("--threshold: %w", err))
			}
			if args[0] == results.Stdin && args[1] == results.Stdin {
				return usageErr(errors.New("compare - -: standard input holds one run file; name the other"))
			}
			ra, err := results.Open(args[0], a.stdin)
			if err != nil {
				return err
			}
			rb, err := results.Open(args[1], a.stdin)
			if err != nil {
				return err
			}
			c, err := report.Compare(ra, rb, report.CompareOptions{ThresholdPct: pct, Alpha: alpha})
			if err != nil {
				return err
			}
			if err := report.Print(a.stdout, a.output, c); err != nil {
				return err
			}
			if c.Regressions > 0 {
				return withCode(ExitFail, nil)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&threshold, "threshold", "10%", "smallest change, in percent of A, that can count as a regression")
	f.Float64Var(&alpha, "alpha", 0.01, "significance level of the noise test")
	return cmd
}
