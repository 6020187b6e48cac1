// Package nullkv is a gRPC etcd KV server that answers every request at once,
// without storing anything: against it, a load generator measures its own cost
// per request and its highest rate per core, with no server in the way. It
// serves what etcdperf and etcd's benchmark call around the load (member list,
// status, /health and /metrics over HTTP/1 on the same port, as etcd does), so
// both run against it unchanged. It is a measuring instrument, not an etcd:
// ranges find nothing, deletes delete nothing, and it never fails a request.
package nullkv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/soheilhy/cmux"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
)

// Version is the server version Status reports: "null" names the instrument,
// the release the etcd API it speaks.
const Version = "3.6.16-null"

// IDs of the one member; any non-zero values do.
const (
	clusterID = 0x6e756c6c // "null"
	memberID  = 0x6b76     // "kv"
)

// Server is a running null KV server.
type Server struct {
	url    string
	grpc   *grpc.Server
	http   *http.Server
	mux    cmux.CMux
	served sync.WaitGroup
	// rev counts the puts, deletes and txns: the revision every header carries.
	rev atomic.Int64
}

// Listen starts a server on addr, which must be a loopback address such as
// 127.0.0.1:0 (this instrument has no authentication and no TLS).
func Listen(addr string) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("listen address %q: the null server listens on a loopback IP only, such as 127.0.0.1", addr)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{url: "http://" + lis.Addr().String(), grpc: grpc.NewServer()}
	s.rev.Store(1)
	pb.RegisterKVServer(s.grpc, kv{s})
	pb.RegisterClusterServer(s.grpc, &cluster{s: s})
	pb.RegisterMaintenanceServer(s.grpc, &maintenance{s: s})
	h := http.NewServeMux()
	h.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"health":"true","reason":""}`))
	})
	h.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		// No server-side metrics: the analyzer grades them unknown, never ok.
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	})
	s.http = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	// As etcd's client port: HTTP/1 to the HTTP handlers, everything else (HTTP/2) to gRPC.
	s.mux = cmux.New(lis)
	httpL := s.mux.Match(cmux.HTTP1Fast())
	grpcL := s.mux.Match(cmux.Any())
	s.served.Add(3)
	go func() { defer s.served.Done(); _ = s.grpc.Serve(grpcL) }()
	go func() { defer s.served.Done(); _ = s.http.Serve(httpL) }()
	go func() { defer s.served.Done(); _ = s.mux.Serve() }()
	return s, nil
}

// URL is the client URL, http://host:port.
func (s *Server) URL() string { return s.url }

// Close stops the server and waits for its goroutines.
func (s *Server) Close() {
	s.mux.Close()
	s.grpc.Stop()
	_ = s.http.Close()
	s.served.Wait()
}

func (s *Server) header() *pb.ResponseHeader {
	return &pb.ResponseHeader{ClusterId: clusterID, MemberId: memberID, Revision: s.rev.Load(), RaftTerm: 1}
}

type kv struct{ s *Server }

func (k kv) Range(context.Context, *pb.RangeRequest) (*pb.RangeResponse, error) {
	return &pb.RangeResponse{Header: k.s.header()}, nil
}

func (k kv) Put(context.Context, *pb.PutRequest) (*pb.PutResponse, error) {
	k.s.rev.Add(1)
	return &pb.PutResponse{Header: k.s.header()}, nil
}

func (k kv) DeleteRange(context.Context, *pb.DeleteRangeRequest) (*pb.DeleteRangeResponse, error) {
	return &pb.DeleteRangeResponse{Header: k.s.header()}, nil
}

func (k kv) Txn(_ context.Context, r *pb.TxnRequest) (*pb.TxnResponse, error) {
	k.s.rev.Add(1)
	// Compares see no keys, so a create-if-absent (create_revision == 0) succeeds;
	// one empty response per operation of the branch taken keeps clients' indexing valid.
	ops := r.Success
	for _, c := range r.Compare {
		if !nullCompare(c) {
			ops = r.Failure
			break
		}
	}
	resp := &pb.TxnResponse{Header: k.s.header(), Succeeded: len(ops) == len(r.Success), Responses: make([]*pb.ResponseOp, len(ops))}
	for i, op := range ops {
		resp.Responses[i] = nullResponse(k.s, op)
	}
	return resp, nil
}

func (k kv) Compact(context.Context, *pb.CompactionRequest) (*pb.CompactionResponse, error) {
	return &pb.CompactionResponse{Header: k.s.header()}, nil
}

// nullCompare is a compare against a key that does not exist: every target is 0 or empty.
func nullCompare(c *pb.Compare) bool {
	var v int64
	switch t := c.TargetUnion.(type) {
	case *pb.Compare_Version:
		v = t.Version
	case *pb.Compare_CreateRevision:
		v = t.CreateRevision
	case *pb.Compare_ModRevision:
		v = t.ModRevision
	case *pb.Compare_Lease:
		v = t.Lease
	case *pb.Compare_Value:
		if len(t.Value) > 0 {
			v = 1
		}
	}
	switch c.Result {
	case pb.Compare_EQUAL:
		return v == 0
	case pb.Compare_NOT_EQUAL:
		return v != 0
	case pb.Compare_GREATER:
		return 0 > v
	case pb.Compare_LESS:
		return 0 < v
	}
	return false
}

func nullResponse(s *Server, op *pb.RequestOp) *pb.ResponseOp {
	switch op.Request.(type) {
	case *pb.RequestOp_RequestRange:
		return &pb.ResponseOp{Response: &pb.ResponseOp_ResponseRange{ResponseRange: &pb.RangeResponse{Header: s.header()}}}
	case *pb.RequestOp_RequestPut:
		return &pb.ResponseOp{Response: &pb.ResponseOp_ResponsePut{ResponsePut: &pb.PutResponse{Header: s.header()}}}
	case *pb.RequestOp_RequestDeleteRange:
		return &pb.ResponseOp{Response: &pb.ResponseOp_ResponseDeleteRange{ResponseDeleteRange: &pb.DeleteRangeResponse{Header: s.header()}}}
	case *pb.RequestOp_RequestTxn:
		return &pb.ResponseOp{Response: &pb.ResponseOp_ResponseTxn{ResponseTxn: &pb.TxnResponse{Header: s.header(), Succeeded: true}}}
	}
	return &pb.ResponseOp{}
}

type cluster struct {
	pb.UnimplementedClusterServer
	s *Server
}

func (c *cluster) MemberList(context.Context, *pb.MemberListRequest) (*pb.MemberListResponse, error) {
	return &pb.MemberListResponse{Header: c.s.header(), Members: []*pb.Member{{
		ID: memberID, Name: "null", ClientURLs: []string{c.s.url}, PeerURLs: []string{c.s.url},
	}}}, nil
}

type maintenance struct {
	pb.UnimplementedMaintenanceServer
	s *Server
}

func (m *maintenance) Status(context.Context, *pb.StatusRequest) (*pb.StatusResponse, error) {
	return &pb.StatusResponse{Header: m.s.header(), Version: Version, Leader: memberID, RaftTerm: 1, RaftIndex: uint64(m.s.rev.Load())}, nil
}
