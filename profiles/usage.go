package profiles

// Usage is 'profiles' help text: what a profile is and where the built-in ones live.
const Usage = `Profiles are named, versioned workloads written in YAML: rate, clients, duration,
warm-up, the data set (keys, values) and the mix of ops (put, range, watch, lease) by
ratio. The built-in ones are embedded in the binary; --profile FILE runs your own file
of the same schema (start from "etcdperf profiles show NAME").`
