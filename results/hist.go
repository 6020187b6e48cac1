package results

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds shared by every recorder, so histograms from any run merge exactly:
// 1 µs .. 60 s at 3 significant digits.
const (
	HistMinUs  = 1
	HistMaxUs  = 60_000_000
	HistDigits = 3
)

// Hist is an HdrHistogram (microseconds) in V2 compressed, base64 form.
type Hist string

// NewHist returns an empty histogram with the shared bounds.
func NewHist() *hdr.Histogram { return hdr.New(HistMinUs, HistMaxUs, HistDigits) }

// EncodeHist encodes h for the run file.
func EncodeHist(h *hdr.Histogram) (Hist, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return Hist(b), nil
}

// Decode returns the histogram; an empty Hist decodes to an empty histogram.
func (x Hist) Decode() (*hdr.Histogram, error) {
	if x == "" {
		return NewHist(), nil
	}
	h, err := hdr.Decode([]byte(x))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// Summarize digests a microsecond histogram into milliseconds.
func Summarize(h *hdr.Histogram) Summary {
	if h.TotalCount() == 0 {
		return Summary{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Summary{
		Mean:   h.Mean() / 1000,
		Stddev: h.StdDev() / 1000,
		P50:    ms(h.ValueAtQuantile(50)),
		P90:    ms(h.ValueAtQuantile(90)),
		P99:    ms(h.ValueAtQuantile(99)),
		P999:   ms(h.ValueAtQuantile(99.9)),
		Max:    ms(h.Max()),
	}
}
