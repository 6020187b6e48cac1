package drill

// RestartUsage is 'drill rolling-restart' help text.
const RestartUsage = `rolling-restart restarts each member in turn (followers first, the leader last, unless --members
orders them) under the background load, waiting until the member answers again and the cluster
is healthy before the next one. Per restart: how long the member did not answer, leader changes,
client p99 and errors.

On the embedded cluster a member is stopped with SIGTERM and started again from its data dir. On
your cluster (--endpoints, --yes-change-membership) --restart-cmd restarts it, %s being the
member's name, e.g. --restart-cmd 'systemctl restart etcd@%s'.`

// ReplaceUsage is 'drill replace-member' help text.
const ReplaceUsage = `replace-member fills the cluster (--fill SIZE, or --shape with the JSON of 'inspect -w json'),
starts the background load, removes a follower, adds a fresh member as a learner, waits while the
leader sends it a snapshot of the db and then the log, promotes it once it has caught up (etcd
refuses before), and keeps the load running --after. Phases: before, remove, snapshot, catch-up,
after. The measured catch-up (start of the new member to its applied index reaching the leader's
commit index) is compared with inspect's recovery estimate for the leader's db size.

--as-voter adds the member straight as a voter (the old way), for comparison.

On your cluster (--endpoints, --yes-change-membership) the fresh member is started by --start-cmd
with ETCD_NAME, ETCD_INITIAL_CLUSTER, ETCD_INITIAL_CLUSTER_STATE=existing and
ETCD_INITIAL_ADVERTISE_PEER_URLS set (etcd reads them), named by --new-member; the removed member
stops itself, and --retire-cmd (with %s for its name) may then discard it.`

// Usage is drill's help text: what a drill measures and the guards on a real cluster.
const Usage = `drill runs a membership drill under a steady background load and measures what it costs,
phase by phase: client p50/p99 and errors (per-second histograms of the load), leader changes
and heartbeat send failures (the members' /metrics at each phase boundary), the leader's peer
traffic.

With no --endpoints it runs on an embedded 3-member cluster (separate etcd processes in a temp
dir). On your cluster it runs only with --endpoints and --yes-change-membership, after checking
that the cluster is healthy, has at least 3 voting members, no learner, and keeps its quorum at
every step; it never removes the leader. Ctrl-C at any step leaves the original number of voting
members and says what it did to get there (a second Ctrl-C aborts at once).`
