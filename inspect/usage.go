package inspect

// Usage is inspect's help text: what it reads, how (live: paced, paginated,
// --values; a snapshot: read-only with bbolt), the assumptions it makes and the
// exit codes. It lives beside the method it describes so that the two change
// together.
const Usage = `inspect describes what etcd stores and how it is tuned, and says what of it makes etcd slow:
key count and bytes per prefix (keys grouped by their first --depth '/'-separated segments),
value sizes (HdrHistogram, overall and per prefix), the largest keys, keys near the request
size limit, prefixes too large to list in one range, history waiting for compaction and what
compacting would free, db size against its in-use part and the quota, the time a new member
needs to receive the data, growth since an earlier inspection (--previous), and tuning advice
(https://etcd.io/docs/v3.6/tuning/).

Live mode (default; --endpoints, or an embedded etcd when none is given) only reads: count-only
and keys-only ranges, all at one revision, paginated (--page-size) and paced (--max-rps), so it
is safe on production. Keys-only ranges carry no value size, so values are read one of two ways
(--values):
  exact   every value is read, in pages cut to about --page-bytes each: exact figures, and
          about as many bytes read as the data holds;
  sample  every key is read keys-only (exact counts and key bytes) and the values of one page
          in N, so that about --exact-under bytes of values are read: value bytes per prefix
          are extrapolated and the largest keys are the largest sampled ones;
  auto    exact when the db's in-use size is at most --exact-under (default 512MiB), else sample.
History comes from each key's version and create/mod revisions and the compaction revision
(found with count-only ranges): exact when the key was created after the last compaction, else
an upper bound; deleted keys' history is invisible live.

Snapshot mode (--snapshot FILE, from 'etcdctl snapshot save' or a member's member/snap/db) opens
the file read-only with bbolt and never writes it; a snapshot's sha256 trailer is verified. Every
revision and tombstone is counted exactly.

Heartbeat, election timeout and snapshot count are not exposed by etcd's API: pass the members'
values (--heartbeat-ms, --election-ms, --snapshot-count) or etcd's defaults are assumed and listed
as assumptions. Peer RTT and WAL fsync p99 come from the members' /metrics when reachable.

Exit status: 0 when no finding fails, 1 when one does (e.g. the db at ≥ 95% of its quota),
2 when inspect could not run (bad flags, not a snapshot, no permission to range).`
