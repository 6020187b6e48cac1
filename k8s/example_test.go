package k8s_test

import (
	"fmt"
	"time"

	"github.com/etcdperf/etcdperf/k8s"
)

// A tool writes the Indexed Job that runs a bench from several pods at once
// (Manifest gives its YAML to kubectl apply); Objects lists what it creates.
func ExampleManifest() {
	j := k8s.Job{Name: "put-load", Image: k8s.Repository + ":v1", Workers: 3, Results: k8s.ResultsStdout, CPU: "2", Memory: "1Gi",
		Args: []string{"bench", "put", "--endpoints", "https://etcd-0.etcd:2379", "--rate", "3000", "--duration", "60s"}}
	// The workers start their load together, at a time far enough ahead for
	// every pod to be scheduled and pull the image (j.Schedule sets it from now).
	j.StartAt = time.Date(2026, 12, 6, 18, 0, 0, 0, time.UTC)
	if err := j.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := k8s.Manifest(j); err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range j.Objects() {
		fmt.Println(o.Kind, o.Name, o.Pods, "pods:", o.Command)
	}
	// Output:
	// Job put-load 3 pods: etcdperf k8s worker --results=stdout -- bench put --endpoints https://etcd-0.etcd:2379 --rate 3000 --duration 60s --workers=3 --worker-index=$(JOB_COMPLETION_INDEX) --start-at=2026-12-06T18:00:00Z --run-file=/tmp/etcdperf-run.json
}
