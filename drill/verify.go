package drill

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Verification is the cluster after a drill.
type Verification struct {
	Voters   int               `json:"voters"`
	Learners int               `json:"learners"`
	Revision int64             `json:"revision"`
	Hashes   map[string]uint32 `json:"hash_kv"`
	Match    bool              `json:"hashes_match"`
	Error    string            `json:"error,omitempty"`
}

// OK says whether the cluster has voters voting members, no learner, and equal data.
func (v *Verification) OK(voters int) bool {
	return v != nil && v.Match && v.Learners == 0 && v.Voters == voters
}

// verifyCluster checks the membership and that every member holds the same data:
// HashKV at one revision equal across members.
func verifyCluster(ctx context.Context, env *Env) *Verification {
	v := &Verification{Hashes: map[string]uint32{}}
	s, err := survey(ctx, env.Client, env.timeout())
	if err != nil {
		v.Error = err.Error()
		return v
	}
	for _, m := range s.Members {
		if m.IsLearner {
			v.Learners++
		} else {
			v.Voters++
		}
	}
	l, ok := s.LeaderInfo()
	if !ok {
		v.Error = "no leader"
		return v
	}
	cctx, cancel := context.WithTimeout(ctx, env.timeout())
	st, err := env.Client.Status(cctx, l.ClientURL)
	cancel()
	if err != nil {
		v.Error = err.Error()
		return v
	}
	v.Revision = st.Header.Revision
	v.Match = true
	var first *uint32
	var errs []string
	for _, m := range s.Members {
		h, err := hashKV(ctx, env, m.ClientURL, v.Revision)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", m.Name, err))
			v.Match = false
			continue
		}
		v.Hashes[m.Name] = h
		if first == nil {
			first = &h
		} else if h != *first {
			v.Match = false
		}
	}
	v.Error = strings.Join(errs, "; ")
	return v
}

// hashKV retries while the member has not applied rev yet.
func hashKV(ctx context.Context, env *Env, url string, rev int64) (uint32, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, env.timeout())
		resp, err := env.Client.HashKV(cctx, url, rev)
		cancel()
		if err == nil {
			return resp.Hash, nil
		}
		if time.Now().After(deadline) {
			return 0, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
