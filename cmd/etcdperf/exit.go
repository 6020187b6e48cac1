package main

import "github.com/etcdperf/etcdperf/internal/cli"

// Exit codes, documented in README.md (package cli says what each means).
const (
	ExitOK          = cli.ExitOK
	ExitFail        = cli.ExitFail
	ExitError       = cli.ExitError
	ExitInvalid     = cli.ExitInvalid
	ExitInterrupted = cli.ExitInterrupted
)

// withCode marks err with an exit code.
func withCode(code int, err error) error { return cli.WithCode(code, err) }

// usageErr marks a bad invocation: exit 2.
func usageErr(err error) error { return cli.WithCode(ExitError, err) }
