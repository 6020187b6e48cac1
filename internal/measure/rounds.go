package measure

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/results"
)

// RoundEvery is how often, on average (jittered, as the PINGs), each endpoint
// of a cluster of more than one gets a pair of reads through the measured
// window: a serializable and a linearizable read of one key, sent together on
// one connection. The linearizable one waits for the read index round (the
// leader's heartbeat to a quorum, and from a follower the way to the leader
// and back) besides what the serializable one waits for, so their difference
// is the round between the members, through the whole run: etcd samples its
// peer round trip only every 30 s. Two reads of a missing key ten times a
// second write nothing and cost the members next to nothing.
const RoundEvery = 100 * time.Millisecond

// readRoundKey, under the run's prefix, is the key the rounds read: it need
// not exist, and nothing writes it.
const readRoundKey = "etcdperf-read-round"

// rounds is the pairing of a run's measured window: per endpoint, one
// connection and a histogram of the linearizable reads' time beyond the
// serializable ones'.
type rounds struct {
	stopRounds context.CancelFunc
	wg         sync.WaitGroup
	endpoints  []string
	conns      []*grpc.ClientConn
	hists      []*hdr.Histogram // by endpoint, written by its goroutine only
	answered   []int64
	lost       []int64
}

// startRounds sends pairs of reads of key to every endpoint of t until stop;
// nil for one endpoint, where there is no round between members. An endpoint
// that cannot be dialled is left out.
func startRounds(ctx context.Context, t *ClusterConn, key string) *rounds {
	if t.Client == nil || len(t.Info.Endpoints) < 2 {
		return nil
	}
	r := &rounds{}
	ctx, r.stopRounds = context.WithCancel(ctx)
	for _, ep := range t.Info.Endpoints {
		conn, err := t.Client.Dial(ep)
		if err != nil {
			continue
		}
		r.endpoints = append(r.endpoints, ep)
		r.conns = append(r.conns, conn)
		r.hists = append(r.hists, results.NewHist())
		r.answered = append(r.answered, 0)
		r.lost = append(r.lost, 0)
	}
	for i := range r.conns {
		r.wg.Go(func() { r.pair(ctx, i, []byte(key)) })
	}
	return r
}

// pair sends endpoint i its pairs until ctx ends. A linearizable read still
// waiting then is counted unanswered, and its wait so far recorded: the
// longest rounds are those a window cuts.
func (r *rounds) pair(ctx context.Context, i int, key []byte) {
	kv := pb.NewKVClient(r.conns[i])
	ser := &pb.RangeRequest{Key: key, CountOnly: true, Serializable: true}
	lin := &pb.RangeRequest{Key: key, CountOnly: true}
	for {
		t := time.NewTimer(RoundEvery/2 + rand.N(RoundEvery))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		var serTook time.Duration
		var serErr error
		done := make(chan struct{})
		go func() {
			start := time.Now()
			_, serErr = kv.Range(ctx, ser)
			serTook = time.Since(start)
			close(done)
		}()
		start := time.Now()
		_, linErr := kv.Range(ctx, lin)
		linTook := time.Since(start)
		<-done
		switch {
		case linErr == nil && serErr == nil:
			r.answered[i]++
			r.record(i, linTook-serTook)
		case ctx.Err() != nil && serErr == nil:
			r.lost[i]++
			r.record(i, linTook-serTook)
		default:
			r.lost[i]++
		}
		if ctx.Err() != nil {
			return
		}
	}
}

func (r *rounds) record(i int, d time.Duration) {
	us := min(max(d.Microseconds(), results.HistMinUs), results.HistMaxUs)
	_ = r.hists[i].RecordValue(us)
}

// stop ends the pairs and closes their connections.
func (r *rounds) stop() {
	if r == nil {
		return
	}
	r.stopRounds()
	r.wg.Wait()
	for _, c := range r.conns {
		c.Close()
	}
}

// fill writes the rounds into run's endpoint loads.
func (r *rounds) fill(run *results.Run) error {
	if r == nil {
		return nil
	}
	for i, h := range r.hists {
		e := run.FindEndpoint(r.endpoints[i])
		if e == nil {
			run.EndpointLoads = append(run.EndpointLoads, results.EndpointLoad{Endpoint: r.endpoints[i]})
			e = &run.EndpointLoads[len(run.EndpointLoads)-1]
		}
		e.ReadRounds, e.ReadRoundsUnanswered = r.answered[i], r.lost[i]
		if h.TotalCount() == 0 {
			continue
		}
		s := results.Summarize(h)
		var err error
		if e.ReadRoundHist, err = results.EncodeHist(h); err != nil {
			return err
		}
		e.ReadRoundMs = &s
	}
	return nil
}
