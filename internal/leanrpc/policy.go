package leanrpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// clientv3's retry interceptor (client/v3 v3.6 retry_interceptor.go,
// options.go): a unary call is made at most 100 times; before every attempt
// that starts a new round over a quorum of the endpoints it waits 25 ms ±10%
// (roundRobinQuorumBackoff), before the others not at all.
const (
	maxAttempts     = 100
	retryWait       = 25 * time.Millisecond
	retryWaitJitter = 0.10
	retryDescNoAddr = "there is no address available"
	retryDescNoConn = "there is no connection available"
)

// repeatable are the methods clientv3 calls with its repeatable policy
// (retry.go: its retry*Client wrappers add withRepeatablePolicy): reads, and
// calls that do the same when made twice. Every other call (Put, Txn,
// DeleteRange, Compact, member changes) is nonRepeatable.
var repeatable = map[string]bool{
	"/etcdserverpb.KV/Range":               true,
	"/etcdserverpb.Lease/LeaseGrant":       true,
	"/etcdserverpb.Lease/LeaseRevoke":      true,
	"/etcdserverpb.Lease/LeaseTimeToLive":  true,
	"/etcdserverpb.Lease/LeaseLeases":      true,
	"/etcdserverpb.Cluster/MemberList":     true,
	"/etcdserverpb.Maintenance/Alarm":      true,
	"/etcdserverpb.Maintenance/Status":     true,
	"/etcdserverpb.Maintenance/Hash":       true,
	"/etcdserverpb.Maintenance/HashKV":     true,
	"/etcdserverpb.Maintenance/MoveLeader": true,
	"/etcdserverpb.Auth/UserList":          true,
	"/etcdserverpb.Auth/UserGet":           true,
	"/etcdserverpb.Auth/RoleGet":           true,
	"/etcdserverpb.Auth/RoleList":          true,
}

// retry makes a call that failed with err again while clientv3's
// interceptor would: a deadline or cancel that is not the caller's context's
// (the server's), a learner's refusal when there are other endpoints, and
// for a repeatable method Unavailable (no leader, a leader change, a lost
// connection). A nonRepeatable call is made again by clientv3 only when no
// connection was available, which this Conn waits out instead, as
// WaitForReady does. A call whose auth token (tok) the server refused gets a
// new token and is made again once. Each attempt after the first counts in
// the context's Retries. endpoint is the last attempt's, as InvokeAt's.
func (c *Conn) retry(ctx context.Context, method string, args, reply any, endpoint int, tok string, err error) (int, error) {
	quorum := len(c.eps)/2 + 1
	retries := RetriesFrom(ctx)
	refreshed := false
	for attempt := 1; attempt < maxAttempts; attempt++ {
		if c.opts.token != nil && !refreshed && staleToken(err) {
			// clientv3's shouldRefreshToken, refreshToken: a new token, and
			// the call again (once: a token refused again is the answer).
			refreshed = true
			if aerr := c.authenticate(ctx, tok); aerr != nil {
				return endpoint, aerr
			}
		} else if !c.retryable(ctx, method, err) {
			return endpoint, err
		}
		if attempt%quorum == 0 {
			d := time.Duration(float64(retryWait) * (1 + retryWaitJitter*(2*rand.Float64()-1)))
			timer := time.NewTimer(d)
			select {
			case <-ctx.Done():
				timer.Stop()
				return endpoint, status.FromContextError(ctx.Err()).Err()
			case <-timer.C:
			}
		}
		if retries != nil {
			retries.n.Add(1)
		}
		tok = c.opts.authToken(method)
		if endpoint, err = c.call(ctx, method, args, reply); err == nil {
			return endpoint, nil
		}
	}
	return endpoint, err
}

// retryable says whether clientv3 makes a call of method that failed with err
// again (retry_interceptor.go: unaryClientInterceptor, isSafeRetry).
func (c *Conn) retryable(ctx context.Context, method string, err error) bool {
	if c.ctx.Err() != nil {
		return false // closed: no attempt could succeed
	}
	code := status.Code(err)
	if code == codes.DeadlineExceeded || code == codes.Canceled {
		return ctx.Err() == nil
	}
	if errors.Is(err, rpctypes.ErrGRPCNotSupportedForLearner) && len(c.eps) > 1 {
		return true
	}
	if !repeatable[method] {
		desc := rpctypes.ErrorDesc(err)
		return desc == retryDescNoAddr || desc == retryDescNoConn
	}
	var etcdErr rpctypes.EtcdError
	if errors.As(rpctypes.Error(err), &etcdErr) && etcdErr.Code() != codes.Unavailable {
		return false
	}
	return code == codes.Unavailable
}

// Retries counts the attempts a retry policy made after calls' first: a
// worker puts one in its context (WithRetries) and reads it after each
// request, to count the requests that were retried.
type Retries struct{ n atomic.Int64 }

// Add counts n more attempts (a transport whose retries happen elsewhere).
func (r *Retries) Add(n int64) { r.n.Add(n) }

// Load is the attempts counted so far.
func (r *Retries) Load() int64 { return r.n.Load() }

type retriesKey struct{}

// WithRetries is ctx with r counting the retries of the calls made with it.
func WithRetries(ctx context.Context, r *Retries) context.Context {
	return context.WithValue(ctx, retriesKey{}, r)
}

// RetriesFrom is the Retries of ctx, nil when it has none.
func RetriesFrom(ctx context.Context) *Retries {
	r, _ := ctx.Value(retriesKey{}).(*Retries)
	return r
}

const methodAuthenticate = "/etcdserverpb.Auth/Authenticate"

// staleToken says whether err is the server's refusal of a call's token:
// invalid (expired, or the server restarted), of an older auth revision, or
// missing (clientv3's shouldRefreshToken).
func staleToken(err error) bool {
	e := rpctypes.Error(err)
	return errors.Is(e, rpctypes.ErrInvalidAuthToken) || errors.Is(e, rpctypes.ErrAuthOldRevision) || errors.Is(e, rpctypes.ErrUserEmpty)
}

// authenticate gets a new token for the connection's user (none without a
// user) unless the token is no longer stale (another call got a new one
// meanwhile). A server with auth disabled gives none, as clientv3 takes it.
func (c *Conn) authenticate(ctx context.Context, stale string) error {
	if c.opts.token == nil {
		return nil
	}
	c.authMu.Lock()
	defer c.authMu.Unlock()
	if p := c.opts.token.Load(); p != nil && *p != stale {
		return nil
	}
	var resp pb.AuthenticateResponse
	_, err := c.call(ctx, methodAuthenticate, &pb.AuthenticateRequest{Name: c.opts.Username, Password: c.opts.Password}, &resp)
	switch {
	case errors.Is(rpctypes.Error(err), rpctypes.ErrAuthNotEnabled):
		resp.Token = ""
	case err != nil:
		return fmt.Errorf("authenticate as %s: %w", c.opts.Username, err)
	}
	c.opts.token.Store(&resp.Token)
	return nil
}
