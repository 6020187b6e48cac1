package results

// Scrape phases: when, relative to the measured run, a scrape was taken.
const (
	PhaseBefore = "before"
	PhaseDuring = "during"
	PhaseAfter  = "after"
)

// Scrape is one /metrics scrape of one member, kept as the exposition text
// (filtered to the metric families the analyzer reads; see package analyze).
type Scrape struct {
	Member string `json:"member"` // member name or URL
	URL    string `json:"url"`
	Phase  string `json:"phase"` // before | during | after
	Time   string `json:"time"`  // RFC 3339 with nanoseconds: the request's midpoint
	// Seconds is how long the scrape took: a member that stalled answers its
	// /metrics late too. 0 in run files from before it was kept.
	Seconds float64 `json:"seconds,omitempty"`
	Text    string  `json:"text,omitempty"`
	Error   string  `json:"error,omitempty"`
}
