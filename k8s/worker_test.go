package k8s

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestWorker runs a stand-in for etcdperf (sh, whose $0 is the --run-file arg)
// and checks what the pod reports: a written run file is success, alone on
// stdout with stdout results; without one, the child's output and its exit code.
func TestWorker(t *testing.T) {
	for _, c := range []struct {
		name, script, results string
		code                  int
		stdout, stderr        string
	}{
		{"verdict fail, run file written", `echo summary; echo note >&2; printf '{"run":1}' > "$f"; exit 1`, ResultsStdout, 0, `{"run":1}`, ""},
		{"invalid run, run file written", `printf '{"run":1}' > "$f"; exit 3`, ResultsStdout, 0, `{"run":1}`, ""},
		{"could not run", `echo "cannot reach etcd" >&2; exit 2`, ResultsStdout, 2, "", "cannot reach etcd\n"},
		{"exit 0 without a run file", `echo odd`, ResultsStdout, 2, "", "odd\n"},
		{"pvc: output passes through", `echo summary; printf '{}' > "$f"; exit 1`, ResultsPVC, 0, "summary\n", ""},
		{"pvc: no run file", `echo boom >&2; exit 2`, ResultsPVC, 2, "", "boom\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "run.json")
			w := Worker{Exe: "/bin/sh", Args: []string{"-c", `f="${0#--run-file=}"; ` + c.script, "--run-file=" + file}, Results: c.results}
			var stdout, stderr bytes.Buffer
			code, err := w.Run(context.Background(), &stdout, &stderr)
			if err != nil {
				t.Fatal(err)
			}
			if code != c.code || stdout.String() != c.stdout || stderr.String() != c.stderr {
				t.Errorf("exit %d stdout %q stderr %q; want %d %q %q", code, stdout.String(), stderr.String(), c.code, c.stdout, c.stderr)
			}
		})
	}
	for _, w := range []Worker{
		{Exe: "/bin/true", Args: []string{"bench"}, Results: ResultsStdout},
		{Exe: "/bin/true", Args: []string{"--run-file", "x"}, Results: "s3"},
		{Exe: filepath.Join(os.TempDir(), "no-such-etcdperf"), Args: []string{"--run-file=x"}, Results: ResultsStdout},
	} {
		if code, err := w.Run(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}); code != 2 || err == nil {
			t.Errorf("%+v: exit %d, %v; want 2 and an error", w, code, err)
		}
	}
}
