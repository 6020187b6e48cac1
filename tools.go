//go:build tools

// Package tools records build-only dependencies: the etcd server main package, so
// `go build go.etcd.io/etcd/server/v3` yields a real etcd binary of the embedded release
// for tests that need a separate server process.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
