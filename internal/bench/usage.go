package bench

// MixedUsage is 'bench mixed' help text.
const MixedUsage = `mixed fills --key-space-size keys, then ranges over them (--read-ratio) and puts to
them (the rest), optionally watched (--watchers). --ratios mixes any of bench's ops by
ratio instead, as a profile does: put, range, txn, txn-create, txn-delete, list and
lease, e.g. --ratios txn=0.8,list=0.05,lease=0.15; each op keeps its own flags here
(--range-width, --txn-ops, --page-size, --lease-ttl, ...), and watchers then watch the
txns' objects when there are txns.`

// WatchUsage is 'bench watch' help text.
const WatchUsage = `watch opens --watchers watchers over --streams gRPC streams on --watched-keys keys, then
puts to those keys in turn (at --rate, or as fast as --clients go). Each value carries its
send time, so the latency of the "watch" op is from the put's send to the event's arrival at
each watcher. Missed events (acknowledged puts a watcher never saw) and out-of-order events
(revisions going backwards) are counted. The puts are reported as the "put" op.`

// Usage is bench's help text: the loads it drives and the run file it writes.
const Usage = `bench drives load against etcd and writes a run file with its latency histograms.

With --rate the load is an open loop: request i is due at start + i/rate, and its
latency (response time) counts from then, so a stalled server shows as the wait every
request behind the stall saw. Service time counts from the actual send. Requests that
start more than max(2 ms, 10% of the interval) late are counted as late starts, and a
run that achieves less than 95% of the rate is invalid (exit 3). Without --rate,
--clients clients send as fast as they can (closed loop).

Keys live under --prefix. bench refuses to start when the prefix holds keys (unless
--force, which hands the prefix to bench) and deletes the prefix afterwards, also on
errors and Ctrl-C.`

// ListUsage is 'bench list' help text.
const ListUsage = `list fills --keys objects of --val-size bytes, then LISTs them the way client-go's
pager does through kube-apiserver: a range of --page-size keys (500, client-go's
default), then ranges from just after the last key at the first page's revision until
the server says there are no more. The first page is linearizable (--consistency l, a
LIST without resourceVersion) or serializable (s); --exact lists at the revision the data
had when the load started (resourceVersionMatch=Exact), which fails once compacted.
Each whole LIST is the "list" op (with the keys and bytes read), each page "list-page".`

// LeaseUsage is 'bench lease' help text.
const LeaseUsage = `lease runs the life of leases, one call per request: grant (--lease-ttl), --lease-keys
puts attached to the lease (kube-apiserver attaches the events it writes to a lease for
their TTL), --keepalives renewals on the worker's LeaseKeepAlive stream, and a revoke.
Each call kind is its own op: lease-grant, lease-put, lease-keepalive, lease-revoke.
--expire leaves the leases to expire instead, as events' leases do; the server then
deletes their keys. With --expire and --keepalives 0 the workers share their leases,
as an apiserver attaches the events of all its requests to one lease: one grant per
1+--lease-keys calls over all workers. Leases still alive after the run are revoked
(expiring ones that end within 10 s are left to expire).`

// TxnUsage is 'bench txn' help text.
const TxnUsage = `txn fills --key-space-size objects of --val-size bytes, then updates them the way
kube-apiserver's GuaranteedUpdate does: If mod_revision(key) == seen Then Put(key, object)
Else Get(key). A failed compare (another client updated the object first) is retried
with the revision the Else branch returned; each retry counts as a conflict ("conflicts"
in the op's JSON), and the op's latency covers every attempt, as the API caller waits
for all of them. --txn-ops N puts N keys per txn (checked against etcd's --max-txn-ops,
128 by default). --create-ratio of the txns create new objects (If create_revision == 0
Then Put), reported as "txn-create"; --delete-ratio delete objects created earlier
(If mod_revision == seen Then Delete Else Get), reported as "txn-delete".`
