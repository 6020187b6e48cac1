package main

import (
	fc "github.com/etcdperf/etcdperf/internal/flagcheck"
	"github.com/etcdperf/etcdperf/profiles"
)

// flagRules say, per flag name (a name means one thing on every command), which
// values make sense. Every numeric flag of every command has one; Any where 0 or
// a negative value has a meaning the help states. TestFlagRules fails on a
// numeric flag without a rule.
var flagRules = map[string]fc.Rule{
	// Connection (etcdctl's).
	"dial-timeout":      {Kind: fc.Positive},
	"command-timeout":   {Kind: fc.Positive},
	"keepalive-time":    {Kind: fc.Positive},
	"keepalive-timeout": {Kind: fc.Positive},
	"max-request-bytes": {Kind: fc.NonNegative, Why: "0 is etcdctl's default"},
	"max-recv-bytes":    {Kind: fc.NonNegative, Why: "0 is etcdctl's default"},
	"embedded-members":  {Kind: fc.Between, Min: 1, Max: 7},
	"user":              {Kind: fc.NonEmpty},
	"profile": {Kind: fc.Valid, Valid: func(s string) error {
		_, err := profiles.Load(s)
		return err
	}},
	"consistency": {Kind: fc.OneOf, Values: []string{"l", "s"}, Why: "linearizable or serializable"},

	// Load shape.
	"clients":          {Kind: fc.Positive},
	"conns":            {Kind: fc.Positive},
	"rate":             {Kind: fc.NonNegative, Why: "0 is closed loop"},
	"total":            {Kind: fc.NonNegative, Why: "0 is bounded by --duration"},
	"duration":         {Kind: fc.NonNegative, Why: "0 is the command's default"},
	"warmup":           {Kind: fc.NonNegative},
	"val-size":         {Kind: fc.NonNegative, Why: "0 puts empty values"},
	"key-size":         {Kind: fc.Positive},
	"key-space-size":   {Kind: fc.Positive},
	"keys":             {Kind: fc.Positive},
	"range-width":      {Kind: fc.Positive},
	"limit":            {Kind: fc.NonNegative, Why: "0 is no limit"},
	"page-size":        {Kind: fc.Positive},
	"streams":          {Kind: fc.Positive},
	"watchers":         {Kind: fc.NonNegative, Why: "0 is no watchers"},
	"watched-keys":     {Kind: fc.Positive},
	"txn-ops":          {Kind: fc.Positive},
	"keepalives":       {Kind: fc.NonNegative},
	"lease-keys":       {Kind: fc.NonNegative},
	"lease-ttl":        {Kind: fc.Positive},
	"read-ratio":       {Kind: fc.Fraction},
	"create-ratio":     {Kind: fc.Fraction},
	"delete-ratio":     {Kind: fc.Fraction},
	"compact-interval": {Kind: fc.NonNegative, Why: "0 is never"},
	"workers":          {Kind: fc.NonNegative, Why: "k8s job needs it; bench and check take 1 or more"},
	"worker-index":     {Kind: fc.NonNegative},

	// Grading and planning.
	"p99":           {Kind: fc.NonNegative, Why: "0 is the load's own"},
	"alpha":         {Kind: fc.Between, Min: 1e-9, Max: 0.5, Why: "a significance level"},
	"error-budget":  {Kind: fc.Fraction},
	"expected-rps":  {Kind: fc.NonNegative},
	"start-rate":    {Kind: fc.NonNegative, Why: "0 is a tenth of --max-rate"},
	"max-rate":      {Kind: fc.Positive},
	"step-duration": {Kind: fc.Positive},
	"bisections":    {Kind: fc.NonNegative},
	"max-nodes":     {Kind: fc.Positive},
	"cores":         {Kind: fc.NonNegative, Why: "0 is the host's"},
	"memory":        {Kind: fc.NonNegative, Why: "0 is the host's"},
	"window":        {Kind: fc.NonNegative},

	// Disk and inspect.
	"block-size":     {Kind: fc.Positive},
	"depth":          {Kind: fc.Positive},
	"top":            {Kind: fc.Positive},
	"max-rps":        {Kind: fc.NonNegative, Why: "0 is unthrottled"},
	"page-bytes":     {Kind: fc.Positive},
	"exact-under":    {Kind: fc.NonNegative},
	"quota-bytes":    {Kind: fc.NonNegative, Why: "0 is etcd's default"},
	"snapshot-count": {Kind: fc.NonNegative, Why: "0 is etcd's default"},
	"election-ms":    {Kind: fc.NonNegative, Why: "0 is etcd's default"},
	"heartbeat-ms":   {Kind: fc.NonNegative, Why: "0 is etcd's default"},
	"disk-mbps":      {Kind: fc.NonNegative, Why: "0 is measured"},
	"net-mbps":       {Kind: fc.NonNegative, Why: "0 is measured"},

	// Drills and Kubernetes.
	"before":                            {Kind: fc.NonNegative},
	"after":                             {Kind: fc.NonNegative},
	"settle":                            {Kind: fc.NonNegative},
	"restart-timeout":                   {Kind: fc.Positive},
	"catch-up-timeout":                  {Kind: fc.Positive},
	"fill":                              {Kind: fc.NonNegative},
	"fill-value-size":                   {Kind: fc.Positive},
	"embedded-snapshot-count":           {Kind: fc.Positive},
	"embedded-snapshot-catchup-entries": {Kind: fc.Positive},
	"start-delay":                       {Kind: fc.Positive},
	"ttl":                               {Kind: fc.NonNegative, Why: "0 keeps them"},
}
