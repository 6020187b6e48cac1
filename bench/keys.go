package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
)

// DefaultPrefix is where etcdperf writes unless told otherwise.
const DefaultPrefix = "/etcdperf/"

// MaxRequestBytes is etcd's default request size limit (--max-request-bytes, 1.5 MiB).
// A put of a larger key and value fails on the server with "request is too large".
const MaxRequestBytes = 1536 * 1024

// requestEnvelope is what etcd adds around a put's key and value before it checks
// the limit (the raft request header and the protobuf framing), with margin.
const requestEnvelope = 256

// CheckRequestSize rejects a key and value etcd would refuse, and a negative
// value size, before any load is sent.
func CheckRequestSize(keyBytes, valBytes int) error {
	if valBytes < 0 {
		return fmt.Errorf("value size must not be negative, got %d", valBytes)
	}
	if keyBytes+valBytes+requestEnvelope > MaxRequestBytes {
		return fmt.Errorf("a %d-byte value with a %d-byte key exceeds etcd's request limit of 1.5 MiB (--max-request-bytes)", valBytes, keyBytes)
	}
	return nil
}

// keySpace makes the fixed-width keys of a workload: prefix + a decimal index
// left-padded with zeros to size bytes. Fixed width keeps every key the same
// size and makes key order index order, so a range [i, i+n) holds n keys.
type keySpace struct {
	prefix string
	size   int    // bytes after the prefix
	n      uint64 // keys: indexes 0 .. n-1
}

func newKeySpace(prefix string, size int, n uint64) (keySpace, error) {
	if size <= 0 {
		return keySpace{}, fmt.Errorf("key size must be at least 1, got %d", size)
	}
	if n == 0 {
		return keySpace{}, fmt.Errorf("key space must hold at least 1 key")
	}
	// The index one past the last key must fit too: it ends ranges.
	if digits := len(strconv.FormatUint(n, 10)); digits > size {
		return keySpace{}, fmt.Errorf("key size %d is too small for %d keys: needs %d bytes", size, n, digits)
	}
	return keySpace{prefix: prefix, size: size, n: n}, nil
}

// buf returns a buffer for key; each worker keeps its own.
func (k keySpace) buf() []byte {
	b := make([]byte, len(k.prefix)+k.size)
	copy(b, k.prefix)
	return b
}

// key writes the key of index i into b (from buf) and returns it.
func (k keySpace) key(b []byte, i uint64) string { return string(k.fill(b, i)) }

// fill writes the key of index i into b (from buf) in place and returns b: the
// request loops reuse one buffer per worker instead of allocating a key each time.
func (k keySpace) fill(b []byte, i uint64) []byte {
	for j := len(b) - 1; j >= len(k.prefix); j-- {
		b[j] = byte('0' + i%10)
		i /= 10
	}
	return b
}

// len is the full length of a key, prefix included.
func (k keySpace) len() int { return len(k.prefix) + k.size }

// newValue returns n bytes of printable filler, generated once per workload.
func newValue(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// workerRand is a worker's own random source, so workers share no lock.
func workerRand(id int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(id)))
}

// CheckPrefix refuses a prefix that already holds keys, unless force: the run
// deletes the prefix afterwards, which must not take someone else's data. The
// check waits at most timeout (zero: DefaultCommandTimeout).
func CheckPrefix(ctx context.Context, kv clientv3.KV, prefix string, force bool, timeout time.Duration) error {
	if force {
		return nil
	}
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := kv.Get(cctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		if ctx.Err() == nil && cctx.Err() != nil {
			return fmt.Errorf("check prefix %q: no answer within the command timeout (%s): %w", prefix, timeout, err)
		}
		return fmt.Errorf("check prefix %q: %w", prefix, err)
	}
	if resp.Count > 0 {
		return fmt.Errorf("%w: %q holds %d keys; choose another --prefix or pass --force to use it (its keys are deleted after the run)", ErrPrefixInUse, prefix, resp.Count)
	}
	return nil
}

// cleanupQuiet is the pause between deletes after a stopped run; cleanupDeletes
// bounds the deletes, should something else keep writing under the prefix.
const (
	cleanupQuiet   = 200 * time.Millisecond
	cleanupDeletes = 5
)

// Cleanup deletes the prefix with a context of its own, so it also runs after
// the run's context was cancelled. It deletes until a delete finds nothing: a
// put the stop cancelled may already be with the server, which then applies it
// after the first delete. After a stopped run it pauses between deletes to let
// such puts land.
func Cleanup(kv clientv3.KV, prefix string, stopped bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), CleanupTimeout)
	defer cancel()
	for range cleanupDeletes {
		resp, err := kv.Delete(ctx, prefix, clientv3.WithPrefix())
		if err != nil {
			return fmt.Errorf("clean up prefix %q: %w", prefix, err)
		}
		if resp.Deleted == 0 {
			return nil
		}
		if stopped {
			time.Sleep(cleanupQuiet)
		}
	}
	return fmt.Errorf("clean up prefix %q: keys still appear there after %d deletes: is another client writing there?", prefix, cleanupDeletes)
}

// client returns the connection worker id uses: workers spread over the connections.
func client(clients []*clientv3.Client, id int) *clientv3.Client { return clients[id%len(clients)] }

// loadConn is the connection worker id sends its requests over: one of direct
// when there are any (see DialDirect), else its client's. The request loops call
// gRPC on it with one request and one response struct per worker: clientv3's KV
// builds an Op, a new request and string copies per call, which costs the
// generator CPU that the server should get. A client's connection keeps
// clientv3's interceptors (auth tokens, its retry of requests that never
// reached a server).
func loadConn(clients []*clientv3.Client, direct []grpc.ClientConnInterface, id int) grpc.ClientConnInterface {
	if len(direct) > 0 {
		return direct[id%len(direct)]
	}
	return client(clients, id).ActiveConnection()
}

// invoker makes a unary call and names the endpoint whose connection carried
// it: 1 + its index, 0 when the connection does not say.
type invoker func(ctx context.Context, method string, args, reply any) (ep int, err error)

// invokerOf is the invoker of cc: leanrpc's connection says which endpoint
// carried a call (Conn.InvokeAt); gRPC-go's does not, cheaply (a grpc.Peer
// option allocates per call, and its address is to be matched to an endpoint),
// so its calls are the cluster's only.
func invokerOf(cc grpc.ClientConnInterface) invoker {
	if at, ok := cc.(interface {
		InvokeAt(ctx context.Context, method string, args, reply any) (int, error)
	}); ok {
		return func(ctx context.Context, method string, args, reply any) (int, error) {
			i, err := at.InvokeAt(ctx, method, args, reply)
			return i + 1, err
		}
	}
	return func(ctx context.Context, method string, args, reply any) (int, error) {
		return 0, cc.Invoke(ctx, method, args, reply)
	}
}

// Full method names of the calls the request loops make.
const (
	methodPut         = "/etcdserverpb.KV/Put"
	methodRange       = "/etcdserverpb.KV/Range"
	methodTxn         = "/etcdserverpb.KV/Txn"
	methodLeaseGrant  = "/etcdserverpb.Lease/LeaseGrant"
	methodLeaseRevoke = "/etcdserverpb.Lease/LeaseRevoke"
	// LeaseKeepAlive is a stream in etcd's API; one renewal on a stream of its
	// own, as clientv3's KeepAliveOnce sends it, is a unary call on the wire:
	// HEADERS, one request, one response, the status.
	methodLeaseKeepAlive = "/etcdserverpb.Lease/LeaseKeepAlive"
)

// stub makes the unary calls of etcd's API that the request loops send on any
// connection (etcd's generated stubs take a *grpc.ClientConn only, not the lean
// transport's), with a new response per call as those stubs have it.
type stub struct{ cc grpc.ClientConnInterface }

// stubFor is the stub on the connection worker id sends over (see loadConn).
func stubFor(clients []*clientv3.Client, direct []grpc.ClientConnInterface, id int) stub {
	return stub{loadConn(clients, direct, id)}
}

func call[Resp any](ctx context.Context, cc grpc.ClientConnInterface, method string, req any) (*Resp, error) {
	resp := new(Resp)
	if err := cc.Invoke(ctx, method, req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

func (s stub) Put(ctx context.Context, req *pb.PutRequest) (*pb.PutResponse, error) {
	return call[pb.PutResponse](ctx, s.cc, methodPut, req)
}

func (s stub) Range(ctx context.Context, req *pb.RangeRequest) (*pb.RangeResponse, error) {
	return call[pb.RangeResponse](ctx, s.cc, methodRange, req)
}

func (s stub) Txn(ctx context.Context, req *pb.TxnRequest) (*pb.TxnResponse, error) {
	return call[pb.TxnResponse](ctx, s.cc, methodTxn, req)
}

func (s stub) LeaseGrant(ctx context.Context, req *pb.LeaseGrantRequest) (*pb.LeaseGrantResponse, error) {
	return call[pb.LeaseGrantResponse](ctx, s.cc, methodLeaseGrant, req)
}

func (s stub) LeaseRevoke(ctx context.Context, req *pb.LeaseRevokeRequest) (*pb.LeaseRevokeResponse, error) {
	return call[pb.LeaseRevokeResponse](ctx, s.cc, methodLeaseRevoke, req)
}

// LeaseKeepAliveOnce renews a lease with one request on a stream of its own
// (see methodLeaseKeepAlive); a TTL of 0 or less means the lease is gone.
func (s stub) LeaseKeepAliveOnce(ctx context.Context, req *pb.LeaseKeepAliveRequest) (*pb.LeaseKeepAliveResponse, error) {
	return call[pb.LeaseKeepAliveResponse](ctx, s.cc, methodLeaseKeepAlive, req)
}

// Directed is a workload whose request loops can use direct load connections.
type Directed interface {
	// SetDirect makes the workers spread over conns; call it before Run.
	SetDirect(conns []grpc.ClientConnInterface)
}

// UseDirect gives w the direct load connections (DialDirect's or DialTuned's)
// when it takes them.
func UseDirect[C grpc.ClientConnInterface](w Workload, conns []C) {
	d, ok := w.(Directed)
	if !ok || len(conns) == 0 {
		return
	}
	ccs := make([]grpc.ClientConnInterface, len(conns))
	for i, c := range conns {
		ccs[i] = c
	}
	d.SetDirect(ccs)
}
