package version

// Usage is 'version' help text: what it prints and where run files record the same.
const Usage = `version prints the module version, the VCS commit and whether the tree was dirty
(as the Go toolchain stamped them at build time; "unknown" from go run), the Go
version and the embedded etcd release. -w json prints them as one object, -w table
as a table. Run files record the same (tool).`
