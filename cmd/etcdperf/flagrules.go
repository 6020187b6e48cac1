package main

import (
	fc "github.com/etcdperf/etcdperf/internal/flagcheck"
	"github.com/etcdperf/etcdperf/profiles"
)

// flagRules say, per flag name (a name means one thing on every command), which
// values make sense. Every numeric flag of every command has one; Any where 0 or
// a negative value has a meaning the help states. TestFlagRules fails on a
// numeric flag without a rule. Flags that share a rule are listed together.
var flagRules = fc.Rules(
	fc.Same(fc.Rule{Kind: fc.Positive},
		"dial-timeout", "command-timeout", "keepalive-time", "keepalive-timeout", // connection
		"clients", "conns", "key-size", "key-space-size", "keys", "range-width", "page-size", "streams", "watched-keys", "txn-ops", "lease-ttl", // load
		"max-rate", "step-duration", "max-nodes", "block-size", "depth", "top", "page-bytes", // planning, disk, inspect
		"restart-timeout", "catch-up-timeout", "fill-value-size", "embedded-snapshot-count", "embedded-snapshot-catchup-entries", "start-delay"), // drills, k8s
	fc.Same(fc.Rule{Kind: fc.NonNegative},
		"warmup", "keepalives", "lease-keys", "worker-index", "expected-rps", "bisections", "window", "exact-under", "before", "after", "settle", "fill"),
	fc.Same(fc.Rule{Kind: fc.Fraction}, "read-ratio", "create-ratio", "delete-ratio", "error-budget"),
	fc.Same(fc.Rule{Kind: fc.NonNegative, Why: "0 is etcdctl's default"}, "max-request-bytes", "max-recv-bytes"),
	fc.Same(fc.Rule{Kind: fc.NonNegative, Why: "0 is etcd's default"}, "quota-bytes", "snapshot-count", "election-ms", "heartbeat-ms"),
	fc.Same(fc.Rule{Kind: fc.NonNegative, Why: "0 is the host's"}, "cores", "memory"),
	fc.Same(fc.Rule{Kind: fc.NonNegative, Why: "0 is measured"}, "disk-mbps", "net-mbps"),
	map[string]fc.Rule{
		"embedded-members": {Kind: fc.Between, Min: 1, Max: 7},
		"user":             {Kind: fc.NonEmpty},
		"profile": {Kind: fc.Valid, Valid: func(s string) error {
			_, err := profiles.Load(s)
			return err
		}},
		"consistency":      {Kind: fc.OneOf, Values: []string{"l", "s"}, Why: "linearizable or serializable"},
		"rate":             {Kind: fc.NonNegative, Why: "0 is closed loop"},
		"total":            {Kind: fc.NonNegative, Why: "0 is bounded by --duration"},
		"duration":         {Kind: fc.NonNegative, Why: "0 is the command's default"},
		"val-size":         {Kind: fc.NonNegative, Why: "0 puts empty values"},
		"limit":            {Kind: fc.NonNegative, Why: "0 is no limit"},
		"watchers":         {Kind: fc.NonNegative, Why: "0 is no watchers"},
		"compact-interval": {Kind: fc.NonNegative, Why: "0 is never"},
		"workers":          {Kind: fc.NonNegative, Why: "k8s job needs it; bench and check take 1 or more"},
		"p99":              {Kind: fc.NonNegative, Why: "0 is the load's own"},
		"alpha":            {Kind: fc.Between, Min: 1e-9, Max: 0.5, Why: "a significance level"},
		"start-rate":       {Kind: fc.NonNegative, Why: "0 is a tenth of --max-rate"},
		"max-rps":          {Kind: fc.NonNegative, Why: "0 is unthrottled"},
		"ttl":              {Kind: fc.NonNegative, Why: "0 keeps them"},
	},
)
