package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/etcdperf/etcdperf/internal/bundle"
	"github.com/etcdperf/etcdperf/report"
	"github.com/etcdperf/etcdperf/results"
)

func newReportCmd(a *app) *cobra.Command {
	var format, plotsDir, analysis string
	cmd := &cobra.Command{
		Use:   "report RUNFILE | BUNDLE",
		Short: "Render a run file as text, Markdown, HTML or JSON, with latency and disk plots",
		Long:  report.Usage,
		Example: `  etcdperf report results/bench-put-20260102T030405Z.json
  etcdperf report run.json --format html > report.html
  etcdperf report run.json --format openmetrics | curl --data-binary @- http://pushgateway:9091/metrics/job/etcdperf
  etcdperf analyze run.json -w json > analysis.json && etcdperf report run.json --analysis analysis.json --plots plots/`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("format") && a.output == "json" {
				format = "json"
			}
			if !slices.Contains(report.ReportFormats, format) {
				return usageErr(fmt.Errorf("--format %q: must be one of %s", format, strings.Join(report.ReportFormats, ", ")))
			}
			if bundle.Is(args[0]) {
				if analysis != "" {
					return usageErr(fmt.Errorf("--analysis is for a run file; a bundle carries its verdict"))
				}
				b, err := bundle.Open(args[0])
				if err != nil {
					return err
				}
				return report.RenderBundle(a.stdout, b, args[0], format, plotsDir)
			}
			run, err := results.Open(args[0], a.stdin)
			if err != nil {
				return err
			}
			return report.Render(a.stdout, run, args[0], format, analysis, plotsDir)
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "text", "output format: "+strings.Join(report.ReportFormats, ", "))
	f.StringVar(&plotsDir, "plots", "", "folder to write PNG and SVG plots into (created if needed)")
	f.StringVar(&analysis, "analysis", "", "JSON output of analyze, check, qualify or plan (-w json) to show its verdict, findings, budget and grade")
	return cmd
}
