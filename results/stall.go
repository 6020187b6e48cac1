package results

import "time"

// StallSeconds is the shortest span with no reply that counts as a stall: etcd's
// default election timeout (etcd docs, tuning.md: 1000 ms), after which a follower
// that heard nothing from its leader starts an election. analyze fails a run on
// it, and bench charges held-back requests to the server only behind one.
const StallSeconds = 1.0

// Stall is the longest span of a run in which a request was outstanding and no
// reply came: the generator measures it from its requests' send and completion
// times, so it is the clients' view of a member that answered nothing (a stopped
// process, a blocked disk, an election). Replies that are the client's own
// verdict on the wait (DeadlineExceeded, Canceled, Unavailable) do not end it.
type Stall struct {
	// At is the wall-clock time the span began.
	At time.Time `json:"at"`
	// OffsetS is where it began, in seconds from the start of the measured window.
	OffsetS float64 `json:"offset_s"`
	// Seconds is how long no reply came.
	Seconds float64 `json:"seconds"`
}

// End is where the span ended.
func (s *Stall) End() time.Time { return s.At.Add(time.Duration(s.Seconds * float64(time.Second))) }

// Longer is the longer of a and b (either may be nil).
func Longer(a, b *Stall) *Stall {
	if a == nil || (b != nil && b.Seconds > a.Seconds) {
		return b
	}
	return a
}
