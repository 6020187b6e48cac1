package bench

import (
	"context"
	"testing"
	"time"

	"github.com/etcdperf/etcdperf/results"
)

const (
	mGranted = "etcd_debugging_lease_granted_total"
	mRevoked = "etcd_debugging_lease_revoked_total"
	mRenewed = "etcd_debugging_lease_renewed_total"
	mExpired = "etcd_debugging_server_lease_expired_total"
)

// TestLeaseLife grants leases with 2 attached puts and 3 keep-alives each, and
// revokes them; the server's counters agree call for call, and every lease
// granted is revoked, in the run or by Finish when the run stopped mid-life.
func TestLeaseLife(t *testing.T) {
	c, clis := startEtcd(t, 2)
	url := c.Members()[0].ClientURL + "/metrics"
	w, err := NewLease(clis, LeaseConfig{Prefix: DefaultPrefix, ValSize: 100, TTL: 5 * time.Second, KeysPerLease: 2, KeepAlives: 3})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{mGranted, mRevoked, mRenewed, mPuts}
	before := counters(t, url, names...)
	var run results.Run
	cfg := Config{Workers: 3, Total: 200, Prefix: DefaultPrefix, KV: clis[0]}
	if err := Run(context.Background(), cfg, w, &run); err != nil {
		t.Fatal(err)
	}
	after := counters(t, url, names...)
	got := map[string]results.Op{}
	var total int64
	for _, op := range run.Ops {
		got[op.Op] = op
		total += op.Requests
		if op.Errors != 0 {
			t.Errorf("%s: %d errors %v", op.Op, op.Errors, op.ErrorsByCode)
		}
	}
	if len(run.Ops) != 4 || total != 200 {
		t.Fatalf("ops %d, requests %d", len(run.Ops), total)
	}
	grants := got["lease-grant"].Requests
	for _, c := range []struct {
		metric string
		want   int64
	}{
		{mGranted, grants}, {mRevoked, grants},
		{mRenewed, got["lease-keepalive"].Requests}, {mPuts, got["lease-put"].Requests},
	} {
		if d := after[c.metric] - before[c.metric]; d != float64(c.want) {
			t.Errorf("%s grew by %g, want %d", c.metric, d, c.want)
		}
	}
	if r := got["lease-revoke"].Requests; r < grants-3 || r > grants {
		t.Errorf("%d revokes in the run for %d grants by 3 workers", r, grants)
	}
	if got["lease-keepalive"].Latency.P50 <= 0 {
		t.Errorf("keep-alive latency %+v", got["lease-keepalive"].Latency)
	}
}

// TestLeaseExpire leaves 1-second leases to expire: the server expires every
// one and deletes its attached key.
func TestLeaseExpire(t *testing.T) {
	c, clis := startEtcd(t, 1)
	url := c.Members()[0].ClientURL + "/metrics"
	w, err := NewLease(clis, LeaseConfig{Prefix: DefaultPrefix, ValSize: 10, TTL: time.Second, KeysPerLease: 1, Expire: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Ops()) != 2 {
		t.Fatalf("ops %v, want grant and put", w.Ops())
	}
	before := counters(t, url, mGranted, mExpired, mRevoked)
	var run results.Run
	cfg := Config{Workers: 1, Total: 20, Prefix: DefaultPrefix, KV: clis[0]}
	if err := Run(context.Background(), cfg, w, &run); err != nil {
		t.Fatal(err)
	}
	grants := run.Ops[0].Requests
	if grants != 10 {
		t.Fatalf("%d grants, want 10", grants)
	}
	// The leader checks for expired leases every 500 ms; 1 s leases expire in 1.5 s.
	deadline := time.Now().Add(10 * time.Second)
	var after map[string]float64
	for {
		after = counters(t, url, mGranted, mExpired, mRevoked)
		if after[mExpired]-before[mExpired] >= float64(grants) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d := after[mGranted] - before[mGranted]; d != float64(grants) {
		t.Errorf("granted grew by %g, want %d", d, grants)
	}
	if d := after[mExpired] - before[mExpired]; d != float64(grants) {
		t.Errorf("expired grew by %g, want %d", d, grants)
	}
	if d := after[mRevoked] - before[mRevoked]; d != float64(grants) {
		t.Errorf("revoked grew by %g, want %d: expiry revokes", d, grants)
	}
}

// TestLeaseShared: expiring leases without keep-alives are shared by all
// workers, one grant per 1+lease-keys calls over all of them, as kube-apiserver
// attaches the events of all its requests to one lease.
func TestLeaseShared(t *testing.T) {
	c, clis := startEtcd(t, 2)
	url := c.Members()[0].ClientURL + "/metrics"
	w, err := NewLease(clis, LeaseConfig{Prefix: DefaultPrefix, ValSize: 10, TTL: 30 * time.Second, KeysPerLease: 9, Expire: true})
	if err != nil {
		t.Fatal(err)
	}
	before := counters(t, url, mGranted, mRevoked)
	var run results.Run
	cfg := Config{Workers: 8, Total: 200, Prefix: DefaultPrefix, KV: clis[0]}
	if err := Run(context.Background(), cfg, w, &run); err != nil {
		t.Fatal(err)
	}
	after := counters(t, url, mGranted, mRevoked)
	grants, puts := run.Ops[0], run.Ops[1]
	// One grant per 10 calls, plus one per worker at most that came before the
	// first lease was there (it grants rather than put without a lease).
	if grants.Requests < 20 || grants.Requests > 20+7 || grants.Requests+puts.Requests != 200 || grants.Errors+puts.Errors != 0 {
		t.Errorf("%d grants, %d puts, %d errors; want 20 (to 27), 200 calls, 0", grants.Requests, puts.Requests, grants.Errors+puts.Errors)
	}
	// 30 s leases outlive the run's horizon: Finish revokes every one.
	if d := after[mGranted] - before[mGranted]; d != float64(grants.Requests) {
		t.Errorf("granted grew by %g, want %d", d, grants.Requests)
	}
	if d := after[mRevoked] - before[mRevoked]; d != float64(grants.Requests) {
		t.Errorf("revoked grew by %g, want %d", d, grants.Requests)
	}
}
