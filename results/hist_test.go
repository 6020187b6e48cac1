package results

import (
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// TestEncodeHistAsHdr: EncodeHist writes what hdr's own encoder writes, for
// empty, reset, sparse, dense and extreme histograms, and it decodes back.
func TestEncodeHistAsHdr(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := map[string]func(h *hdr.Histogram){
		"empty":  func(*hdr.Histogram) {},
		"zero":   func(h *hdr.Histogram) { _ = h.RecordValue(0) },
		"one":    func(h *hdr.Histogram) { _ = h.RecordValue(1) },
		"max":    func(h *hdr.Histogram) { _ = h.RecordValue(HistMaxUs) },
		"ends":   func(h *hdr.Histogram) { _ = h.RecordValues(1, 3); _ = h.RecordValues(HistMaxUs, 1<<40) },
		"huge":   func(h *hdr.Histogram) { _ = h.RecordValues(700, 1<<62) }, // nine bytes of ZigZag LEB128
		"sparse": func(h *hdr.Histogram) { _ = h.RecordValue(150); _ = h.RecordValue(90_000) },
		"reset": func(h *hdr.Histogram) {
			_ = h.RecordValue(5000)
			h.Reset()
		},
		"latencies": func(h *hdr.Histogram) {
			for range 50_000 {
				_ = h.RecordValue(int64(200 + r.ExpFloat64()*3000))
			}
		},
		"uniform": func(h *hdr.Histogram) {
			for range 50_000 {
				_ = h.RecordValue(r.Int64N(HistMaxUs))
			}
		},
	}
	for name, fill := range cases {
		t.Run(name, func(t *testing.T) {
			h := NewHist()
			fill(h)
			want, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second with a reused zlib writer
				got, err := EncodeHist(h)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Fatalf("EncodeHist = %q, hdr encodes %q", got, want)
				}
			}
			back, err := Hist(want).Decode()
			if err != nil || !back.Equals(h) {
				t.Fatalf("decoded %v (%v), want the histogram", back, err)
			}
		})
	}
}

func BenchmarkEncodeHist(b *testing.B) {
	h := NewHist()
	r := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		_ = h.RecordValue(int64(200 + r.ExpFloat64()*2000))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeHist(h); err != nil {
			b.Fatal(err)
		}
	}
}
