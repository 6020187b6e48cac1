package analyze

// Usage is the help text of 'etcdperf analyze'.
const Usage = `analyze grades a run file again: the members' /metrics scrapes taken before, during
and after the run (as deltas over the run window), the load results and the host
facts. It prints the verdict (pass, fail or invalid, and the bottleneck: disk,
network, memory, cpu, client, value-size, range-size or none), the findings with
their evidence, thresholds and sources, the latency budget and the hardware grade.

With --metrics given twice it grades two saved /metrics dumps of one member instead
(curl -s http://MEMBER:2379/metrics > before.txt; ... load ...; > after.txt). The
dumps carry no host facts: give --cores and --memory for the CPU and memory grades,
and --window when the files' modification times do not say how far apart they are.

A run file of plan, check or qualify also holds what that command printed: analyze
prints it first (the command's verdict and steps), and its exit code follows that
verdict; the diagnosis of the step the command judged follows, labelled as such.

--rules prints every rule the analyzer grades with, its threshold and its source.

Exit 0 pass, 1 fail, 3 invalid, 2 could not read the input (not an etcd /metrics dump,
garbage, a run file of another version).`
