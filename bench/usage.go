package bench

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
