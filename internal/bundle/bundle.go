// Package bundle gathers the evidence an operator attaches to an etcd incident
// into one archive, and judges it: membership and each member's status, read
// latencies and round trips, two /metrics scrapes of every member and the
// analyzer's verdict over the window between them, host facts of local members,
// and (offline) what stopped members' data dirs hold. Nothing it collects is a
// value, a password or a token; key names only when asked (hashed by default).
//
// The archive (docs/bundle.md) holds manifest.json, README.txt, bundle.json (this
// package's Data) and run.json (a run file of command "bundle" whose scrapes the
// analyzer grades), so that `analyze BUNDLE` and `report BUNDLE` read it as they
// read a run file.
package bundle

import (
	"time"

	"github.com/etcdperf/etcdperf/results"
)

// SchemaVersion is the version of the archive's layout and of bundle.json;
// docs/bundle.md describes it. A reader refuses another version.
const SchemaVersion = 1

// Bundle is one archive's content.
type Bundle struct {
	Manifest Manifest
	Data     Data
	// Run holds the scrapes, membership, round trips, alarms and host facts the
	// analyzer grades, and the verdict (its Diagnosis).
	Run *results.Run
	// Probe is the run file of --probe's short check; nil without --probe.
	Probe *results.Run
}

// Manifest says what the archive holds, where and when it was collected, and
// with which flags (secrets never among them).
type Manifest struct {
	SchemaVersion int          `json:"schema_version"`
	Kind          string       `json:"kind"` // live | offline
	Tool          results.Tool `json:"tool"`
	CreatedAt     time.Time    `json:"created_at"`
	// Host is the name of the machine that collected the bundle.
	Host      string            `json:"host,omitempty"`
	Endpoints []string          `json:"endpoints,omitempty"`
	DataDirs  []string          `json:"data_dirs,omitempty"`
	Flags     map[string]string `json:"flags,omitempty"`
	Files     []File            `json:"files"`
	// Notes are what could not be collected (a --probe that failed).
	Notes []string `json:"notes,omitempty"`
}

// File is one file of the archive and what it holds.
type File struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	What  string `json:"what"`
}

// Kinds of bundle.
const (
	KindLive    = "live"
	KindOffline = "offline"
)

// Data is bundle.json: what the bundle found beyond the run file.
type Data struct {
	SchemaVersion int `json:"schema_version"`
	// MembershipError is why the member list could not be read; the members are
	// then the endpoints given.
	MembershipError string `json:"membership_error,omitempty"`
	// MembershipSerializable says the member list was read from one member's own
	// view (the linearizable read failed: no quorum, no leader).
	MembershipSerializable bool           `json:"membership_serializable,omitempty"`
	Members                []MemberStatus `json:"members,omitempty"`
	// WindowS is the time between the two scrapes (--interval).
	WindowS float64 `json:"window_s,omitempty"`
	// Keys is the key space by prefix, with --keys only.
	Keys *Keys `json:"keys,omitempty"`
	// Repair is what repairing each member would cost.
	Repair *Repair `json:"repair,omitempty"`
	// Offline is what the data dirs hold (--data-dir).
	Offline *Offline `json:"offline,omitempty"`
}

// MemberStatus is one member as the bundle found it, asked on its own.
type MemberStatus struct {
	ID         string   `json:"id,omitempty"`
	Name       string   `json:"name,omitempty"`
	Endpoint   string   `json:"endpoint"`
	ClientURLs []string `json:"client_urls,omitempty"`
	PeerURLs   []string `json:"peer_urls,omitempty"`
	IsLearner  bool     `json:"is_learner,omitempty"`
	// Error is why the member did not answer its Status call; empty when it did.
	Error string `json:"error,omitempty"`

	Version          string   `json:"version,omitempty"`
	Leader           string   `json:"leader,omitempty"`
	IsLeader         bool     `json:"is_leader,omitempty"`
	RaftTerm         uint64   `json:"raft_term,omitempty"`
	RaftIndex        uint64   `json:"raft_index,omitempty"`
	RaftAppliedIndex uint64   `json:"raft_applied_index,omitempty"`
	DBSize           int64    `json:"db_size,omitempty"`
	DBSizeInUse      int64    `json:"db_size_in_use,omitempty"`
	Errors           []string `json:"errors,omitempty"`
	Alarms           []string `json:"alarms,omitempty"`

	// Linearizable and Serializable are the timed reads of one absent key.
	Linearizable *Latency `json:"linearizable,omitempty"`
	Serializable *Latency `json:"serializable,omitempty"`
	// StatusRTTMs and PingRTTMs are the fastest Status call and HTTP/2 PING.
	StatusRTTMs float64 `json:"status_rtt_ms,omitempty"`
	PingRTTMs   float64 `json:"ping_rtt_ms,omitempty"`
	// Local says the member runs on this host (a loopback client URL).
	Local   bool   `json:"local,omitempty"`
	DataDir string `json:"data_dir,omitempty"`
}

// Up says whether the member answered its Status call.
func (m MemberStatus) Up() bool { return m.Error == "" }

// Latency summarises a few timed calls.
type Latency struct {
	N      int     `json:"n"`
	Errors int     `json:"errors,omitempty"`
	Error  string  `json:"error,omitempty"` // the first error
	MinMs  float64 `json:"min_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	MaxMs  float64 `json:"max_ms"`
}
