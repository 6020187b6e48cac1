package k8s

import (
	"errors"
	"strings"
	"time"
)

// Schedule fills what the user may leave out: StartAt, delay from now (rounded up
// to a whole second: the time is read by people and shells too), and the Name,
// etcdperf-<start time>.
func (j *Job) Schedule(now time.Time, delay time.Duration) error {
	if j.StartAt.IsZero() {
		if delay <= 0 {
			return errors.New("--start-delay must be positive")
		}
		j.StartAt = now.Add(delay).Truncate(time.Second).Add(time.Second).UTC()
	}
	if j.Name == "" {
		j.Name = "etcdperf-" + j.StartAt.Format("20060102-150405")
	}
	return nil
}

// Object is one object the manifest creates, as k8s job -w table lists it.
type Object struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Pods      int    `json:"pods"`
	Suspended bool   `json:"suspended,omitempty"`
	Image     string `json:"image"`
	// Command is what its pods run, and Volumes the volumes they mount (a Secret
	// or a claim, which must exist: the manifest does not create them).
	Command string   `json:"command"`
	Volumes []string `json:"volumes,omitempty"`
}

// Objects are the objects Manifest writes, read from the same documents.
func (j Job) Objects() []Object {
	var out []Object
	for _, d := range j.docs() {
		o := Object{Kind: d.Kind, Name: d.Metadata.Name, Namespace: d.Metadata.Namespace, Suspended: d.Spec.Suspend != nil && *d.Spec.Suspend}
		if d.Spec.Completions != nil {
			o.Pods = *d.Spec.Completions
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			o.Image = c.Image
			o.Command = strings.Join(append(append([]string{}, c.Command...), c.Args...), " ")
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			switch {
			case v.Secret != nil:
				o.Volumes = append(o.Volumes, "secret/"+v.Secret.SecretName)
			case v.PersistentVolumeClaim != nil:
				o.Volumes = append(o.Volumes, "pvc/"+v.PersistentVolumeClaim.ClaimName)
			}
		}
		out = append(out, o)
	}
	return out
}
