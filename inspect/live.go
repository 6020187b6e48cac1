package inspect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Value modes of a live inspection.
const (
	ValuesAuto   = "auto"   // exact when the db's in-use size is at most ExactUnder, else sample
	ValuesExact  = "exact"  // read every value, in pages bounded by PageBytes
	ValuesSample = "sample" // keys-only pages for all keys, values for a sample of pages
)

// LiveTarget is the cluster a live inspection reads.
type LiveTarget struct {
	Client    *clientv3.Client
	Endpoints []string
	// HTTP and MetricsURLs reach the members' /metrics (quota, peer RTT, WAL fsync);
	// without them those figures are unknown.
	HTTP        *http.Client
	MetricsURLs []string
}

// LiveOptions configure a live inspection.
type LiveOptions struct {
	Options
	// PageSize caps the keys per range request.
	PageSize int64
	// PageBytes is the byte budget of one range that returns values: the page's
	// key count shrinks to fit the average entry size seen so far.
	PageBytes int64
	// MaxRPS caps requests per second (all of them: ranges, status, compaction probe).
	MaxRPS float64
	// Values is ValuesAuto, ValuesExact or ValuesSample.
	Values string
	// ExactUnder is the db in-use size up to which ValuesAuto reads every value; above
	// it, a fraction ExactUnder/in-use of the pages is read with values.
	ExactUnder int64
}

// liveScan is one live inspection in progress.
type liveScan struct {
	cli     *clientv3.Client
	o       LiveOptions
	pace    pacer
	rev     int64
	compact int64
	stats   ScanStats
	// avgEntry is the running average key+value size of entries read with values; it
	// sizes value pages and estimates the history of keys whose value was not read.
	avgEntry, avgValue float64
	withValues         int64
	// sampled are the prefixes whose values a sample has read.
	sampled map[string]bool
}

// Live inspects a running cluster. Every read is a range at one revision (so the
// figures are one consistent view), count-only or keys-only where the values are not
// needed, paginated, and paced to MaxRPS: safe to run against production.
func Live(ctx context.Context, t LiveTarget, o LiveOptions) (*Result, error) {
	start := time.Now()
	s := &liveScan{cli: t.Client, o: o, pace: newPacer(o.MaxRPS), sampled: map[string]bool{}}
	r := &Result{Source: "live", Endpoints: t.Endpoints, InspectedAt: start.UTC(), KeyPrefix: o.KeyPrefix}
	if err := s.status(ctx, t.Endpoints, r); err != nil {
		return nil, err
	}
	key, end := keyRange(o.KeyPrefix)
	// A count-only range fixes the revision every later read uses and says how many
	// keys the scan will visit.
	cr, err := s.get(ctx, "count keys", key, clientv3.WithRange(end), clientv3.WithCountOnly())
	if err != nil {
		return nil, err
	}
	s.rev = cr.Header.Revision
	if s.compact, err = s.compactRevision(ctx); err != nil {
		return nil, err
	}
	r.Revision = s.rev
	r.History.CurrentRevision, r.History.CompactRevision = s.rev, s.compact
	r.History.RevisionsSinceCompaction = s.rev - s.compact
	r.History.Basis = "live: a key's old revisions come from its version (exact when it was created after the last compaction, " +
		"else an upper bound); their bytes assume old values as large as the latest; deleted keys' history is invisible to ranges"

	mode, every := s.valuesPlan(r.DB.InUseBytes)
	r.Values.Mode = mode
	if cr.Count > 0 && r.DB.InUseBytes > 0 {
		s.avgEntry = float64(r.DB.InUseBytes) / float64(cr.Count)
	}
	agg := NewAggregator(o.Depth, o.Top, o.nearLimit())
	if err := s.scan(ctx, key, end, every, agg); err != nil {
		return nil, err
	}
	agg.Fill(r)
	if mode == ValuesSample {
		r.Assumptions = append(r.Assumptions, fmt.Sprintf("value sizes read for 1 page in %d plus the first keys of every prefix (%d of %d keys); value bytes per prefix are extrapolated, largest keys are among the sampled ones",
			every, r.Values.SampledKeys, r.Total.Keys))
	}
	metrics := scrapeMetrics(ctx, t.HTTP, t.MetricsURLs)
	s.stats.MetricsErr = metrics.err
	s.stats.DurationS = time.Since(start).Seconds()
	s.stats.MaxRPS, s.stats.PageSize, s.stats.PageBytes = o.MaxRPS, o.PageSize, o.PageBytes
	r.Scan = s.stats
	finish(r, o.Options, metrics)
	return r, nil
}

// keyRange is the range of keys under prefix; "" means every key.
func keyRange(prefix string) (key, end string) {
	if prefix == "" {
		return "\x00", "\x00"
	}
	return prefix, clientv3.GetPrefixRangeEnd(prefix)
}

// status asks every endpoint for its db size, in-use size, quota and version.
func (s *liveScan) status(ctx context.Context, endpoints []string, r *Result) error {
	for _, ep := range endpoints {
		if err := s.pace.wait(ctx); err != nil {
			return err
		}
		s.stats.Requests++
		st, err := s.cli.Status(ctx, ep)
		if err != nil {
			return liveErr("status of "+ep, err)
		}
		m := MemberDB{Endpoint: ep, Version: st.Version, SizeBytes: st.DbSize, InUseBytes: st.DbSizeInUse,
			IsLeader: st.Header != nil && st.Leader == st.Header.MemberId, IsLearner: st.IsLearner}
		r.DB.Members = append(r.DB.Members, m)
		r.ServerVersion = st.Version
		// The largest member decides the quota alarm and the snapshot a new member receives.
		if st.DbSize >= r.DB.SizeBytes {
			r.DB.SizeBytes, r.DB.InUseBytes = st.DbSize, st.DbSizeInUse
		}
		if st.DbSizeQuota > 0 && r.DB.QuotaSource == "" {
			r.DB.QuotaBytes, r.DB.QuotaSource = st.DbSizeQuota, "status (dbSizeQuota)"
		}
	}
	return nil
}

// compactRevision finds the last compaction's revision: the smallest revision a
// range may still read (a range below it fails with ErrCompacted). A binary search
// of count-only ranges on one key costs about log2(revision) tiny requests.
func (s *liveScan) compactRevision(ctx context.Context) (int64, error) {
	ok, err := s.readableAt(ctx, 1)
	if err != nil || ok {
		return 0, err
	}
	lo, hi := int64(1), s.rev // lo is compacted, hi is readable
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := s.readableAt(ctx, mid)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

func (s *liveScan) readableAt(ctx context.Context, rev int64) (bool, error) {
	_, err := s.get(ctx, "probe compaction", "\x00", clientv3.WithRev(rev), clientv3.WithCountOnly())
	if errors.Is(err, rpctypes.ErrCompacted) {
		return false, nil
	}
	return err == nil, err
}

// valuesPlan decides how value sizes are read: every page (exact) or one page in
// every (sample), so a sampled scan reads about ExactUnder bytes of values.
func (s *liveScan) valuesPlan(inUse int64) (mode string, every int64) {
	mode = s.o.Values
	if mode == ValuesAuto || mode == "" {
		mode = ValuesExact
		if inUse > s.o.ExactUnder {
			mode = ValuesSample
		}
	}
	if mode == ValuesExact {
		return mode, 1
	}
	// A sample reads at least every other page's values: sampling every page would be
	// an exact scan in two passes.
	every = 2
	if s.o.ExactUnder > 0 && inUse > 2*s.o.ExactUnder {
		every = (inUse + s.o.ExactUnder - 1) / s.o.ExactUnder
	}
	return mode, every
}

// scan walks [key, end) in pages at s.rev.
func (s *liveScan) scan(ctx context.Context, key, end string, every int64, agg *Aggregator) error {
	cursor := key
	for page := int64(0); ; page++ {
		var kvs []*mvccpb.KeyValue
		var more bool
		if every == 1 {
			resp, err := s.valuePage(ctx, cursor, end)
			if err != nil {
				return err
			}
			kvs, more = resp.Kvs, resp.More
			for _, kv := range kvs {
				agg.Add(s.record(kv, int64(len(kv.Value))))
			}
		} else {
			resp, err := s.get(ctx, "scan keys", cursor, clientv3.WithRange(end), clientv3.WithRev(s.rev),
				clientv3.WithLimit(s.o.PageSize), clientv3.WithKeysOnly())
			if err != nil {
				return err
			}
			kvs, more = resp.Kvs, resp.More
			sizes, err := s.samplePage(ctx, kvs, page%every == 0)
			if err != nil {
				return err
			}
			for _, kv := range kvs {
				vs, ok := sizes[string(kv.Key)]
				if !ok {
					vs = -1
				}
				agg.Add(s.record(kv, vs))
			}
		}
		s.stats.Pages++
		if !more || len(kvs) == 0 {
			return nil
		}
		cursor = string(kvs[len(kvs)-1].Key) + "\x00"
	}
}

// samplePage reads the values of a keys-only page: all of them when whole is set,
// else those of each run of keys of a prefix that no earlier page sampled, so that
// every prefix has value sizes to extrapolate from (a stratified sample).
func (s *liveScan) samplePage(ctx context.Context, kvs []*mvccpb.KeyValue, whole bool) (map[string]int64, error) {
	sizes := map[string]int64{}
	read := func(first, last []byte) error {
		got, err := s.valueSizes(ctx, string(first), string(last)+"\x00")
		for k, v := range got {
			sizes[k] = v
		}
		return err
	}
	if whole && len(kvs) > 0 {
		for _, kv := range kvs {
			s.sampled[PrefixOf(kv.Key, s.o.Depth)] = true
		}
		return sizes, read(kvs[0].Key, kvs[len(kvs)-1].Key)
	}
	for i := 0; i < len(kvs); {
		p := PrefixOf(kvs[i].Key, s.o.Depth)
		j := i
		for j+1 < len(kvs) && PrefixOf(kvs[j+1].Key, s.o.Depth) == p {
			j++
		}
		if !s.sampled[p] {
			s.sampled[p] = true
			if err := read(kvs[i].Key, kvs[j].Key); err != nil {
				return nil, err
			}
		}
		i = j + 1
	}
	return sizes, nil
}

// valuePage reads one page with values, sized so it stays near PageBytes.
func (s *liveScan) valuePage(ctx context.Context, cursor, end string) (*clientv3.GetResponse, error) {
	limit := s.o.PageSize
	if s.avgEntry > 0 && s.o.PageBytes > 0 {
		limit = max(1, min(limit, int64(float64(s.o.PageBytes)/s.avgEntry)))
	}
	resp, err := s.get(ctx, "scan values", cursor, clientv3.WithRange(end), clientv3.WithRev(s.rev), clientv3.WithLimit(limit))
	if err != nil {
		return nil, err
	}
	var bytes int64
	for _, kv := range resp.Kvs {
		bytes += int64(len(kv.Key) + len(kv.Value))
		s.avgValue = (s.avgValue*float64(s.withValues) + float64(len(kv.Value))) / float64(s.withValues+1)
		s.withValues++
	}
	if len(resp.Kvs) > 0 {
		s.avgEntry = float64(bytes) / float64(len(resp.Kvs))
	}
	return resp, nil
}

// valueSizes reads the values of [key, end) (a keys-only page) in budgeted pages.
func (s *liveScan) valueSizes(ctx context.Context, key, end string) (map[string]int64, error) {
	sizes := map[string]int64{}
	for cursor := key; ; {
		resp, err := s.valuePage(ctx, cursor, end)
		if err != nil {
			return nil, err
		}
		for _, kv := range resp.Kvs {
			sizes[string(kv.Key)] = int64(len(kv.Value))
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return sizes, nil
		}
		cursor = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// revKeyBytes is the length of a key-bucket key: an 8-byte main revision, '_', an
// 8-byte sub revision (go.etcd.io/etcd/server/v3/storage/mvcc, revision.go).
const revKeyBytes = 17

// record turns a live KeyValue into a Record. A key's revisions since its creation
// number Version; those after the compact revision C are all kept, and so is the
// last one at or before C, which compaction keeps for a live key.
func (s *liveScan) record(kv *mvccpb.KeyValue, valueSize int64) Record {
	r := Record{Key: kv.Key, ValueSize: valueSize, CreateRevision: kv.CreateRevision,
		ModRevision: kv.ModRevision, Version: kv.Version, OldExact: true}
	c := s.compact
	switch {
	case c == 0 || kv.CreateRevision > c:
		r.OldRevisions = kv.Version - 1
	case kv.ModRevision <= c:
		r.OldRevisions = 0
	default:
		// At least the revision kept at C; at most one per revision since C.
		r.OldRevisions = min(kv.Version-1, kv.ModRevision-c)
		r.OldExact = false
	}
	// The key-bucket entry of the latest revision: its revision key plus the
	// KeyValue protobuf, whose value part is added when the range left it out.
	entry := float64(revKeyBytes + kv.Size())
	switch {
	case len(kv.Value) == 0 && valueSize > 0:
		entry += float64(valueSize + 1 + varintLen(valueSize))
	case len(kv.Value) == 0 && valueSize < 0:
		entry += s.avgValue
	}
	r.OldBytes = int64(float64(r.OldRevisions) * entry)
	return r
}

func varintLen(v int64) int64 {
	n := int64(1)
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// get is one paced range.
func (s *liveScan) get(ctx context.Context, what, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if err := s.pace.wait(ctx); err != nil {
		return nil, err
	}
	s.stats.Requests++
	resp, err := s.cli.Get(ctx, key, opts...)
	if err != nil {
		return nil, liveErr(what, err)
	}
	for _, kv := range resp.Kvs {
		s.stats.BytesRead += int64(len(kv.Key) + len(kv.Value))
	}
	return resp, nil
}

// liveErr names what failed and says so plainly when it is a permission problem.
func liveErr(what string, err error) error {
	switch {
	case errors.Is(err, rpctypes.ErrPermissionDenied), errors.Is(err, rpctypes.ErrUserEmpty),
		errors.Is(err, rpctypes.ErrInvalidAuthToken), errors.Is(err, rpctypes.ErrAuthFailed):
		return fmt.Errorf("%s: no permission to range the key space (inspect needs read access to every key, or to --key-prefix; pass --user): %w", what, err)
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%s: the cluster was compacted past the scan's revision while inspecting; run again: %w", what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// pacer spaces requests at most rps per second; rps ≤ 0 means unpaced.
type pacer struct {
	every time.Duration
	next  time.Time
}

func newPacer(rps float64) pacer {
	if rps <= 0 {
		return pacer{}
	}
	return pacer{every: time.Duration(float64(time.Second) / rps)}
}

func (p *pacer) wait(ctx context.Context) error {
	if p.every == 0 {
		return ctx.Err()
	}
	now := time.Now()
	if d := p.next.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		now = p.next
	}
	p.next = now.Add(p.every)
	return nil
}
