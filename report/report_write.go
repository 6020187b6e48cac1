package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/etcdperf/etcdperf/finding"
	"github.com/etcdperf/etcdperf/results"
)

// Names of the files WriteReport writes into its folder.
const (
	ReportTextFile = "report.txt"
	ReportHTMLFile = "report.html"
	ReportPlotsDir = "plots"
)

// WriteReport writes the report of run (and diag, which may be nil) into dir, for
// the --report flag of bench, check, qualify and plan: report.txt, report.html
// (self-contained) and the plots as PNG and SVG under plots/. It returns the first
// error, naming the file; what was written before it stays.
func WriteReport(dir string, run *results.Run, diag *finding.Diagnosis) error {
	r, err := NewDocument(run, diag)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report folder: %w", err)
	}
	if err := r.WritePlots(filepath.Join(dir, ReportPlotsDir)); err != nil {
		return err
	}
	// report.txt lists the plots relative to itself, so the folder can be moved as a whole.
	for i, p := range r.Plots {
		if rel, err := filepath.Rel(dir, p); err == nil {
			r.Plots[i] = rel
		}
	}
	for _, f := range []struct{ name, format string }{{ReportTextFile, "text"}, {ReportHTMLFile, "html"}} {
		if err := writeReportFile(filepath.Join(dir, f.name), r, f.format); err != nil {
			return err
		}
	}
	return nil
}

func writeReportFile(path string, r *Document, format string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write report %s: %w", path, cerr)
		}
	}()
	if err := r.Write(f, format); err != nil {
		return fmt.Errorf("write report %s: %w", path, err)
	}
	return nil
}

// Render renders run in format (one of ReportFormats) to w, as etcdperf report
// does: with the diagnosis the run file stores, or the one of the analysis file
// (the -w json output of analyze, check, qualify or plan) when named, and the plots
// written into plotsDir when named. name says where the run came from, for errors.
func Render(w io.Writer, run *results.Run, name, format, analysis, plotsDir string) error {
	diag := run.Diagnosis
	if analysis != "" {
		var err error
		if diag, err = ReadDiagnosis(analysis); err != nil {
			return err
		}
	}
	r, err := NewDocument(run, diag)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if plotsDir != "" {
		if err := r.WritePlots(plotsDir); err != nil {
			return err
		}
	}
	return r.Write(w, format)
}
