package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
)

// ErrVersion is returned for a run file written by another format version.
var ErrVersion = errors.New("unsupported run file version")

// WriteFile writes run to path atomically (see WriteAtomic), so a reader never
// sees half a run file.
func WriteFile(path string, run *Run) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write run file: %w", err)
	}
	if err := WriteAtomic(path, 0o600, func(w io.Writer) error { return Encode(w, run) }); err != nil {
		return fmt.Errorf("write run file %s: %w", path, err)
	}
	return nil
}

// WriteAtomic writes path through write: to a temp file in the same folder,
// synced, then renamed over path, so that a reader, a crash or a full disk never
// leaves half a file where a whole one was (the temp file is removed on error).
// The file gets perm.
func WriteAtomic(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Encode writes run as WriteFile does, to w (standard output for --run-file -).
func Encode(w io.Writer, run *Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	if err := enc.Encode(run); err != nil {
		return fmt.Errorf("write run file: %w", err)
	}
	return nil
}

// ReadFile reads and checks a run file.
func ReadFile(path string) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read run file: %w", err)
	}
	defer f.Close()
	run, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("read run file %s: %w", path, err)
	}
	return run, nil
}

// Decode reads one run file from r, of this version or one before (read as
// this one), and checks its histograms.
func Decode(r io.Reader) (*Run, error) {
	dec := json.NewDecoder(r)
	run, err := decodeOne(dec)
	if err != nil {
		return nil, err
	}
	return check(run)
}

// decodeOne reads the next run file of dec, upgrading a version 1 or 2 file.
func decodeOne(dec *json.Decoder) (*Run, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a run file: %w", err)
	}
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("not a run file: %w", err)
	}
	if head.Version == 1 {
		run, err := upgradeV1(raw)
		if err != nil {
			return nil, err
		}
		return run, rewriteSections(run)
	}
	var run Run
	if err := json.Unmarshal(raw, &run); err != nil {
		return nil, fmt.Errorf("not a run file: %w", err)
	}
	if run.Version == 2 {
		run.Version = Version
		for _, s := range run.Steps {
			s.Version = Version
		}
		return &run, rewriteSections(&run)
	}
	return &run, nil
}

// rewriteSections reads every section of an earlier version's run (its steps
// included) as the type registered for its name and stores it again, so that it
// is written as this version writes it (version 2's boolean pass of a criterion
// becomes its status: the types read both forms). A section of no registered
// type is kept as it is.
func rewriteSections(run *Run) error {
	for name, raw := range run.Sections {
		proto, ok := registry[name]
		if !ok {
			continue
		}
		v := reflect.New(reflect.TypeOf(proto))
		if err := json.Unmarshal(raw, v.Interface()); err != nil {
			return fmt.Errorf("run file of an earlier version: section %s: %w", name, err)
		}
		b, err := json.Marshal(v.Interface())
		if err != nil {
			return fmt.Errorf("run file: section %s: %w", name, err)
		}
		run.Sections[name] = b
	}
	for _, s := range run.Steps {
		if err := rewriteSections(s); err != nil {
			return err
		}
	}
	return nil
}

// v1Job is a version 1 job output as the section name holds it: without what
// the command printed from the run file itself (its path, ops, findings), which
// the reader of the section takes from the run.
func v1Job(name string, job json.RawMessage) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(job, &fields); err != nil {
		return nil, fmt.Errorf("run file version 1: the stored %s output: %w", name, err)
	}
	drop := []string{"run_file", "report", "ops"}
	if name == "check" {
		drop = append(drop, "findings", "valid", "invalid_reason", "duration_s", "client", "budget", "notes")
	}
	for _, f := range drop {
		delete(fields, f)
	}
	return json.Marshal(fields)
}

// upgradeV1 reads a version 1 run file as this version: the judging command's
// printed output (job) and a drill's report (drill) become the sections of
// their types, whose fields those outputs already had.
func upgradeV1(raw []byte) (*Run, error) {
	var old struct {
		Run
		Job   json.RawMessage `json:"job"`
		Drill json.RawMessage `json:"drill"`
	}
	if err := json.Unmarshal(raw, &old); err != nil {
		return nil, fmt.Errorf("not a run file: %w", err)
	}
	run := old.Run
	run.Version = Version
	for _, s := range run.Steps {
		s.Version = Version
	}
	add := func(name string, b json.RawMessage) {
		if run.Sections == nil {
			run.Sections = Sections{}
		}
		run.Sections[name] = b
	}
	if len(old.Job) > 0 {
		// The one place that reads a result by the command's name, and only for
		// files of version 1: check, qualify and plan stored a job.
		name := run.Command
		if name != "check" && name != "qualify" && name != "plan" {
			return nil, fmt.Errorf("run file version 1: a stored output of %q is not known", run.Command)
		}
		var kube struct {
			Kubernetes json.RawMessage `json:"kubernetes"`
		}
		if name == "plan" && json.Unmarshal(old.Job, &kube) == nil && len(kube.Kubernetes) > 0 {
			name = "plan_kubernetes"
		}
		job, err := v1Job(name, old.Job)
		if err != nil {
			return nil, err
		}
		add(name, job)
	}
	if len(old.Drill) > 0 {
		var d struct {
			Drill string `json:"drill"`
		}
		if err := json.Unmarshal(old.Drill, &d); err != nil || d.Drill == "" {
			return nil, fmt.Errorf("run file version 1: the drill's report names no drill")
		}
		add("drill_"+strings.ReplaceAll(d.Drill, "-", "_"), old.Drill)
	}
	return &run, nil
}

// Stdin is the run file name that stands for standard input (for --run-file,
// standard output), as in vegeta's pipes.
const Stdin = "-"

// DecodeAll reads every run file in r, one JSON document after the other: several
// concatenated, as kubectl logs prints the logs of several worker pods.
func DecodeAll(r io.Reader) ([]*Run, error) {
	dec := json.NewDecoder(r)
	var runs []*Run
	for dec.More() {
		run, err := decodeOne(dec)
		if err != nil {
			return nil, fmt.Errorf("run file %d: %w", len(runs)+1, err)
		}
		if _, err := check(run); err != nil {
			return nil, fmt.Errorf("run file %d: %w", len(runs)+1, err)
		}
		runs = append(runs, run)
	}
	if len(runs) == 0 {
		return nil, errors.New("no run file on standard input")
	}
	return runs, nil
}

// Open reads the run file at path, or the one on stdin when path is Stdin.
func Open(path string, stdin io.Reader) (*Run, error) {
	if path != Stdin {
		return ReadFile(path)
	}
	runs, err := DecodeAll(stdin)
	if err != nil {
		return nil, fmt.Errorf("read run file from standard input: %w", err)
	}
	if len(runs) != 1 {
		return nil, fmt.Errorf("read run file from standard input: %d run files, want one (etcdperf merge - reads several)", len(runs))
	}
	return runs[0], nil
}

// check checks a decoded run's version and histograms.
func check(run *Run) (*Run, error) {
	if run.Version != Version {
		return nil, fmt.Errorf("%w %d (this build reads versions 1 to %d)", ErrVersion, run.Version, Version)
	}
	for _, op := range run.Ops {
		for _, h := range []Hist{op.ResponseHist, op.ServiceHist} {
			if _, err := h.Decode(); err != nil {
				return nil, fmt.Errorf("op %s: %w", op.Op, err)
			}
		}
	}
	return run, nil
}

// DefaultPath names a new run file in dir from the command and start time,
// e.g. results/bench-put-20261129T150405Z.json.
func DefaultPath(dir, command string, start time.Time) string {
	name := strings.ReplaceAll(command, " ", "-") + "-" + start.UTC().Format("20060102T150405Z") + ".json"
	return filepath.Join(dir, name)
}

// ReadRuns reads the run files to merge: each path once (a file named twice
// would count its requests twice), "-" as several run files one after the other
// on stdin (kubectl logs of a k8s job's workers), and none of them the output
// path out. names say where each run came from (a path, or stdin#N).
func ReadRuns(paths []string, stdin io.Reader, out string) (runs []*Run, names []string, err error) {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return a
	}
	seen := map[string]bool{}
	for _, p := range paths {
		if p == Stdin {
			if seen[Stdin] {
				return nil, nil, errors.New("- is named twice: its requests would count twice")
			}
			seen[Stdin] = true
			rs, err := DecodeAll(stdin)
			if err != nil {
				return nil, nil, fmt.Errorf("merge -: %w", err)
			}
			for j, r := range rs {
				runs, names = append(runs, r), append(names, fmt.Sprintf("stdin#%d", j+1))
			}
			continue
		}
		if out != "" && out != Stdin && abs(p) == abs(out) {
			return nil, nil, fmt.Errorf("-o %s is one of the run files to merge", out)
		}
		if seen[abs(p)] {
			return nil, nil, fmt.Errorf("%s is named twice: its requests would count twice", p)
		}
		seen[abs(p)] = true
		r, err := ReadFile(p)
		if err != nil {
			return nil, nil, err
		}
		runs, names = append(runs, r), append(names, p)
	}
	return runs, names, nil
}

// Save writes run where --run-file says and returns the path: path, or "-" (to
// stdout, the run file alone on it), or "" (a new file in dir, DefaultPath).
// EndedAt, when unset, is now.
func Save(run *Run, path, dir string, stdout io.Writer) (string, error) {
	if run.EndedAt.IsZero() {
		run.EndedAt = time.Now().UTC()
	}
	switch path {
	case Stdin:
		return path, Encode(stdout, run)
	case "":
		path = DefaultPath(dir, run.Command, run.StartedAt)
	}
	if err := WriteFile(path, run); err != nil {
		return "", err
	}
	return path, nil
}
