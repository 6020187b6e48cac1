package bundle

// Usage is bundle's help text. It lives beside the code it describes so that
// the two change together.
const Usage = `bundle gathers what etcd maintainers ask for when a cluster is slow or broken into one
archive (a gzipped tar, written atomically), and judges it with the analyzer's rules.

Live (--endpoints, etcdctl's connection flags), read-only and bounded: the member list; each
member's status (version, leader, raft term and index, db size and in use, alarms, learner)
asked of that member alone, so a member that does not answer is a finding, not an error;
--reads linearizable and serializable count-only reads of one absent key and the round trips
(Status call, HTTP/2 PING) per member; two /metrics scrapes of every member --interval apart
and the verdict over that window, with the classes, evidence and sources of analyze; host
facts when a member is local (a loopback client URL). Nothing is written to the cluster, unless
--probe: then a short check with serve's tiny load (10 req/s for 5 s on keys of its own, deleted
after) runs after the second scrape, and its run file is kept as probe.json.
Without --endpoints it refuses: an embedded etcd started for a bundle would hold nothing.

Offline (--data-dir DIR, once per stopped member; never with --endpoints), read-only: each WAL's
segments, entries by kind as etcd-dump-logs counts them (ConfigChange, IRRPut, IRRTxn, ...) with
their bytes, first and last index and term, the hard state (term, commit); the snapshots in
member/snap; the db's buckets, consistent index and term, revisions, compacted revision and
fragmentation. With several dirs: whether their WALs agree where they overlap, and which dir to
restore from (the highest commit index, then the most applied), with the reasoning.

Never in the archive: values (reads are count-only), passwords, tokens. Key names only with
--keys: grouped by their first two '/'-separated segments, each segment hashed (8 hex digits
of SHA-256) unless --keys=plain; at most --max-keys names are read (keys-only pages).

Read a bundle with 'etcdperf report BUNDLE' (the verdict first; --format html) or
'etcdperf analyze BUNDLE' (grades it again). docs/bundle.md describes the archive.

Exit codes: 0 written and the verdict passes; 1 written and the verdict fails (a member
down fails it); 2 bad flags, no --endpoints (nor --data-dir), no endpoint answered, a data dir without member/, the file not writable;
130 interrupted (nothing written).`
