// Package psa checks the manifests `etcdperf k8s job` writes against Kubernetes
// Pod Security Admission's own policy code (k8s.io/pod-security-admission). It is
// a module of its own so that library's dependency graph (a newer otelgrpc and
// grpc middleware than etcd 3.6's) stays out of the etcdperf binary; make test
// runs it.
package psa
