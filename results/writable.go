package results

import (
	"fmt"
	"os"
	"path/filepath"
)

// CheckWritable fails when a run file could not be written to runFile or, when
// that is "", to the folder dir, so a command can refuse before it sends any
// load. It creates nothing: a folder that does not exist yet is judged by the
// nearest one that does, where WriteFile would create it.
func CheckWritable(dir, runFile string) error {
	if runFile != "" {
		dir = filepath.Dir(runFile)
	}
	probe := dir
	for {
		fi, err := os.Stat(probe)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("results dir %s: %s is not a folder", dir, probe)
			}
			break
		}
		if !os.IsNotExist(err) || filepath.Dir(probe) == probe {
			return fmt.Errorf("results dir %s: %w", dir, err)
		}
		probe = filepath.Dir(probe)
	}
	f, err := os.CreateTemp(probe, ".write-check-*")
	if err != nil {
		return fmt.Errorf("results dir %s is not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
