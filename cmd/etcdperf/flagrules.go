package main

import (
	"errors"
	"net"
	"strings"

	"github.com/etcdperf/etcdperf/internal/conn"
	fc "github.com/etcdperf/etcdperf/internal/flagcheck"
	"github.com/etcdperf/etcdperf/profiles"
)

// flagRules say, per flag name (a name means one thing on every command), which
// values make sense. Every numeric flag of every command has one; Any where 0 or
// a negative value has a meaning the help states. TestFlagRules fails on a
// numeric flag without a rule. Flags that share a rule are listed together;
// the flags a workload op owns have their rules in its kind (profiles.Kind).
var flagRules = fc.Rules(
	profiles.FlagRules(),
	fc.Same(fc.Constraint{Kind: fc.Positive},
		"dial-timeout", "command-timeout", "keepalive-time", "keepalive-timeout", // connection
		"clients", "conns", "key-size", "key-space-size", "keys", "page-size", // load
		"max-rate", "step-duration", "max-nodes", "block-size", "depth", "top", "page-bytes", // planning, disk, inspect
		"restart-timeout", "catch-up-timeout", "fill-value-size", "embedded-snapshot-count", "embedded-snapshot-catchup-entries", "start-delay", // drills, k8s
		"interval", "reads", "max-keys"), // bundle
	fc.Same(fc.Constraint{Kind: fc.NonNegative},
		"warmup", "worker-index", "expected-rps", "bisections", "window", "exact-under", "before", "after", "settle", "fill"),
	fc.Same(fc.Constraint{Kind: fc.Fraction}, "error-budget"),
	fc.Same(fc.Constraint{Kind: fc.NonNegative, Why: "0 is etcdctl's default"}, "max-request-bytes", "max-recv-bytes"),
	fc.Same(fc.Constraint{Kind: fc.NonNegative, Why: "0 is etcd's default"}, "quota-bytes", "snapshot-count", "election-ms", "heartbeat-ms"),
	fc.Same(fc.Constraint{Kind: fc.NonNegative, Why: "0 is the host's"}, "cores", "memory"),
	fc.Same(fc.Constraint{Kind: fc.NonNegative, Why: "0 is measured"}, "disk-mbps", "net-mbps"),
	map[string]fc.Constraint{
		"embedded-members": {Kind: fc.Between, Min: 1, Max: 7},
		"user": {Kind: fc.Valid, Valid: func(s string) error {
			if name, _, _ := strings.Cut(s, ":"); name == "" {
				return errors.New("the user name is empty (username[:password])")
			}
			return nil
		}},
		"profile": {Kind: fc.Valid, Valid: func(s string) error {
			_, err := profiles.Load(s)
			return err
		}},
		"consistency":      {Kind: fc.OneOf, Values: []string{"l", "s"}, Why: "linearizable or serializable"},
		"transport":        {Kind: fc.OneOf, Values: conn.Transports},
		"rate":             {Kind: fc.NonNegative, Why: "0 is closed loop"},
		"total":            {Kind: fc.NonNegative, Why: "0 is bounded by --duration"},
		"duration":         {Kind: fc.NonNegative, Why: "0 is the command's default"},
		"val-size":         {Kind: fc.NonNegative, Why: "0 puts empty values"},
		"compact-interval": {Kind: fc.NonNegative, Why: "0 is never"},
		"workers":          {Kind: fc.NonNegative, Why: "k8s job needs it; bench and check take 1 or more"},
		"p99":              {Kind: fc.NonNegative, Why: "0 is the load's own"},
		"alpha":            {Kind: fc.Between, Min: 1e-9, Max: 0.5, Why: "a significance level"},
		"start-rate":       {Kind: fc.NonNegative, Why: "0 is a tenth of --max-rate"},
		"max-rps":          {Kind: fc.NonNegative, Why: "0 is unthrottled"},
		"ttl":              {Kind: fc.NonNegative, Why: "0 keeps them"},
		"every":            {Kind: fc.Positive},
		"keep":             {Kind: fc.Positive},
		"max-backoff":      {Kind: fc.NonNegative, Why: "0 is 8 × --every"},
		"probes":           {Kind: fc.NonNegative, Why: "0 runs until stopped"},
		"listen": {Kind: fc.Valid, Valid: func(s string) error {
			_, _, err := net.SplitHostPort(s)
			return err
		}},
	},
)
