// Package plan answers capacity questions with measurements: how much load of
// a shape a cluster takes at a latency SLO, and what runs out first.
//
// Search finds the knee of a step function (the largest scale whose step
// holds) by doubling, then bisecting; a rate plan steps a bench workload up
// until the SLO (ParseSLO) or the diagnosis breaks, judging each step with
// Judge. Kube models the traffic a Kubernetes control plane of a given size
// sends to its etcd, from a table of assumptions that each cite a source.
// Datascale measures what filling keys costs (db size, memory) and projects it
// to the db quota and the suggested maximum db size.
package plan
