// Package chromiumtest runs headless Chromium for the tests of the HTML pages
// (the report, serve's status page): a screenshot, the laid-out DOM, and the
// colours a screenshot holds, which say whether CSS and plots were applied.
package chromiumtest

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Browser is a headless Chromium at one window size, with a profile of its own.
type Browser struct {
	bin, dir      string
	width, height int
}

// New finds chromium and skips t when it is not installed or under -short.
func New(t testing.TB, width, height int) *Browser {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian: apt-get install -y chromium; .ci/run installs it)")
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	return &Browser{bin: bin, dir: t.TempDir(), width: width, height: height}
}

// run runs chromium headless with args and returns what it printed on stdout.
func (b *Browser) run(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(b.dir, "profile"), "--window-size=" + strconv.Itoa(b.width) + "," + strconv.Itoa(b.height)}
	cmd := exec.CommandContext(ctx, b.bin, append(base, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

// DOM writes html to a page, lets chromium lay it out and run its scripts, and
// returns the DOM it ends with (--dump-dom).
func (b *Browser) DOM(t testing.TB, html string) string {
	t.Helper()
	page := filepath.Join(b.dir, "page.html")
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	return b.run(t, "--dump-dom", "file://"+page)
}

// Screenshot writes html to a page, screenshots it and decodes the PNG.
func (b *Browser) Screenshot(t testing.TB, html string) image.Image {
	t.Helper()
	page, shot := filepath.Join(b.dir, "page.html"), filepath.Join(b.dir, "out.png")
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	b.run(t, "--screenshot="+shot, "file://"+page)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Colours is the set of distinct RGB colours of img.
func Colours(img image.Image) map[[3]uint8]bool {
	seen := map[[3]uint8]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			seen[[3]uint8{uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8)}] = true
		}
	}
	return seen
}
