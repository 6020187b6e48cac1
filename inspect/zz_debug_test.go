package inspect

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestZZHang(t *testing.T) {
	good := tinyDB(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		data := append([]byte{}, good...)
		for j := 0; j < 1+rng.Intn(4); j++ {
			data[rng.Intn(len(data))] = byte(rng.Intn(256))
		}
		path := filepath.Join(dir, "in.db")
		os.WriteFile(path, data, 0o600)
		start := time.Now()
		ReadSnapshot(path, testOptions())
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Logf("iteration %d took %s", i, d)
			os.WriteFile("/tmp/inspdemo/slow.db", data, 0o600)
			return
		}
	}
}
