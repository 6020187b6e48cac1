package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestCodeAndPrintError(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
		line string
	}{
		{nil, ExitOK, ""},
		{errors.New("no\n  such   file"), ExitError, "etcdperf: no such file\n"},
		{WithCode(ExitFail, nil), ExitFail, ""}, // the verdict was printed
		{WithCode(ExitInvalid, errors.New("invalid run")), ExitInvalid, "etcdperf: invalid run\n"},
		{fmt.Errorf("bench: %w", context.Canceled), ExitInterrupted, "etcdperf: bench: context canceled\n"},
		{context.Canceled, ExitInterrupted, "etcdperf: interrupted\n"},
	} {
		if got := Code(c.err); got != c.code {
			t.Errorf("Code(%v) = %d, want %d", c.err, got, c.code)
		}
		var b bytes.Buffer
		PrintError(&b, c.err, false)
		if b.String() != c.line {
			t.Errorf("PrintError(%v) = %q, want %q", c.err, b.String(), c.line)
		}
	}
	var b bytes.Buffer
	PrintError(&b, fmt.Errorf("outer: %w", errors.New("inner")), true)
	if !strings.Contains(b.String(), "*fmt.wrapError: outer: inner\n  *errors.errorString: inner\n") {
		t.Errorf("--debug chain: %q", b.String())
	}
}

func tree() *cobra.Command {
	root := &cobra.Command{Use: "etcdperf"}
	group := &cobra.Command{Use: "drill"}
	group.AddCommand(&cobra.Command{Use: "replace-member", RunE: func(*cobra.Command, []string) error { return nil }})
	root.AddCommand(group, &cobra.Command{Use: "plan", RunE: func(*cobra.Command, []string) error { return nil }})
	return root
}

func TestOutputs(t *testing.T) {
	root := tree()
	usage := func(err error) error { return WithCode(ExitError, err) }
	GuardGroups(root, usage)
	DeclareOutputs(root, map[string][]string{"etcdperf plan": {"simple", "json"}})
	got := map[string]string{}
	Walk(root, func(c *cobra.Command) { got[c.CommandPath()] = strings.Join(OutputsOf(c), ",") })
	for path, want := range map[string]string{
		"etcdperf plan": "simple,json", "etcdperf drill": "simple", "etcdperf drill replace-member": "simple,json,table",
		"etcdperf help": "simple", "etcdperf completion": "simple", "etcdperf completion bash": "simple",
	} {
		if got[path] != want {
			t.Errorf("%s honours %q, want %q", path, got[path], want)
		}
	}
	plan, _, _ := root.Find([]string{"plan"})
	if err := CheckOutput(plan, "table"); err == nil || err.Error() != "-w table: etcdperf plan writes simple or json only" {
		t.Errorf("CheckOutput(plan, table) = %v", err)
	}
	if err := CheckOutput(plan, "xml"); err == nil {
		t.Error("-w xml accepted")
	}
	root.SetArgs([]string{"drill", "fire"})
	root.SetOut(&bytes.Buffer{})
	if err := root.Execute(); Code(err) != ExitError || !strings.Contains(err.Error(), `want one of replace-member`) {
		t.Errorf("an unknown subcommand: %v", err)
	}
}

func TestFlagsOf(t *testing.T) {
	cmd := &cobra.Command{Use: "x"}
	f := cmd.Flags()
	f.String("user", "", "")
	f.String("password", "", "")
	f.Int("rate", 0, "")
	f.Int("clients", 1, "")
	if err := f.Parse([]string{"--user", "root:secret", "--password", "pw", "--rate", "100"}); err != nil {
		t.Fatal(err)
	}
	got := FlagsOf(f)
	if len(got) != 2 || got["user"] != "root" || got["rate"] != "100" {
		t.Errorf("FlagsOf = %v, want user root and rate 100 only", got)
	}
}

func TestStartCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := StartCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Errorf("profile %s: %v", path, err)
	}
	if _, err := StartCPUProfile(filepath.Join(t.TempDir(), "no", "such", "dir")); err == nil {
		t.Error("a profile in a missing folder started")
	}
}
