package bundle

import (
	"fmt"
	"strings"
)

// readme is README.txt: what the archive is and how to read it, for whoever
// receives it without etcdperf's docs at hand.
func readme(b *Bundle) string {
	var s strings.Builder
	fmt.Fprintf(&s, "etcdperf bundle (schema version %d), %s, collected %s on %s by etcdperf %s.\n\n",
		SchemaVersion, b.Manifest.Kind, b.Manifest.CreatedAt.Format("2006-01-02 15:04:05Z"), b.Manifest.Host, b.Manifest.Tool.Version)
	if b.Run != nil && b.Run.Diagnosis != nil && b.Run.Diagnosis.Verdict != nil {
		fmt.Fprintf(&s, "Verdict: %s\n\n", b.Run.Diagnosis.Verdict.Summary)
	}
	s.WriteString(`Read it with etcdperf:
  etcdperf report BUNDLE.tar.gz                 the verdict, then everything below, as text
  etcdperf report BUNDLE.tar.gz --format html   the same as a page with plots
  etcdperf analyze BUNDLE.tar.gz                grades the scrapes again (the same verdict)

Files:
  manifest.json  what was collected, from where, when, with which flags (never a password)
  bundle.json    each member's status (version, leader, raft term and index, db size and
                 in use, alarms, learner) or why it did not answer; timed linearizable and
                 serializable reads and round trips; the key space by prefix (--keys only);
                 data dirs' WAL and db (offline); what a repair would cost
  run.json       an etcdperf run file: membership, two /metrics scrapes of every member,
                 alarms, host facts of local members, and the verdict over the window
                 between the scrapes (analyze reads it as any run file)
  probe.json     the run file of a short check --load tiny (--probe only)

No value of any key is in this archive, nor any password or token. Key names appear
only with --keys, and hashed (8 hex digits of SHA-256 per segment) unless --keys=plain.
The format is described in etcdperf's docs/bundle.md.
`)
	return s.String()
}
