package diskprobe

// Usage is disk's help text: how the fdatasync probe runs and is graded.
const Usage = `disk writes in a temp folder inside --dir and grades the p99 of fdatasync.

Patterns:
  fio      the I/O of fio --rw=write --ioengine=sync --fdatasync=1 --size=22m --bs=2300
  wal      etcd's WAL: 64 MB preallocated segments, 8-byte framed records, one fdatasync per batch, segment cuts
  backend  etcd's bbolt commits: random 4 KiB pages, fdatasync, meta page, fdatasync, every 100 ms
  etcd     wal and backend at once, as in a member

Grades: p99 fdatasync < 10 ms (etcd FAQ); with --block-size 8000, OpenShift's variant, < 20 ms;
backend commits p99 < 25 ms (etcd FAQ). Exit 0 pass or warn, 1 fail, 2 could not run.`
