# etcdperf: build, test, lint, bench, e2e. `make help` lists the targets.
GO ?= go
PKGS := ./...
STATICCHECK_VERSION ?= v0.8.2
# One build configuration for the binary, the image, vet and the tests (static and
# with trimmed paths, as the image ships and as etcd's own releases build): a cold
# cache then compiles the dependency graph once, not once per configuration.
# Only -race, which needs cgo, compiles it again.
export CGO_ENABLED ?= 0
export GOFLAGS ?= -trimpath

.PHONY: help build image test truth lint bench compare compare-before compare-checkperf compare-fio fuzz soak etcd nullkv clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' Makefile | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/etcdperf
	$(GO) build -buildvcs=auto -o bin/etcdperf ./cmd/etcdperf

IMAGE ?= bin/etcdperf-image.tar

image: ## bin/etcdperf-image.tar: reproducible OCI archive of the static binary (non-root, on an empty base; no Docker daemon)
	@mkdir -p bin
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -trimpath -ldflags='-s -w -buildid=' -o bin/etcdperf-static ./cmd/etcdperf
	$(GO) run ./cmd/mkimage --binary bin/etcdperf-static --out $(IMAGE)

etcd: ## build bin/etcd, the etcd server release etcdperf embeds, as a separate binary
	$(GO) build -o bin/etcd go.etcd.io/etcd/server/v3

test: image ## the whole suite (what CI runs): unit, live against real etcd, e2e of the binary and of the image, race on the generator; packages one at a time, so live tests do not load each other's disk and CPU
	$(GO) vet $(PKGS)
	@# Build every test binary in parallel first (a cold cache compiles etcd), then run them one at a time.
	$(GO) test -count=1 -run '^$$' $(PKGS) >/dev/null
	ETCDPERF_IMAGE=$(CURDIR)/$(IMAGE) $(GO) test -count=1 -p 1 -timeout 14m $(PKGS)
	@# Pod Security Admission's policy code, in a module of its own (k8s/psa/doc.go says why).
	cd k8s/psa && $(GO) vet ./... && $(GO) test -count=1 ./...
	@# The race detector on the concurrent parts' own tests; their live tests against etcd ran above.
	CGO_ENABLED=1 $(GO) test -race -short -count=1 -timeout 10m ./bench/ ./results/ ./internal/leanrpc/ ./internal/conn/

truth: build ## the scenario matrix: live faults of known cause at 3+ intensities and healthy baselines; prints the confusion table, fails on any miss, wrong status, disagreeing re-analysis or avoidable skip (root; < 20 min; TRUTH_ARGS="-only disk/3m" runs some rows, "-list" names them)
	$(GO) test -count=1 -timeout 60m -run '^TestMatrix$$' ./internal/truth/ -v -args -truth -etcdperf=$(CURDIR)/bin/etcdperf $(TRUTH_ARGS)

lint: ## gofmt, go vet, staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt: $$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

bench: ## Go benchmarks of the hot paths (recorder, pacer, parsers)
	$(GO) test -run '^$$' -bench . -benchmem ./bench/ ./results/ ./analyze/

nullkv: ## build bin/nullkv, the null KV server (answers at once) that make compare measures the generators' ceiling against
	$(GO) build -o bin/nullkv ./cmd/nullkv

compare: build nullkv ## three generators side by side (lean, grpc-tuned, etcd's benchmark) on one etcd and on the null KV server, alternating, then a fidelity table (lean against grpc: p50 and p99 by a Mann-Whitney test, the gap with its confidence interval) and a restart scenario (3 members, a follower killed and restarted: per-member puts and errors, lean against grpc); prints the ratios against issues 17 and 22
	scripts/compare-benchmark.sh

compare-before: ## the lean transport's CPU per request against BEFORE=<commit>'s, interleaved on one etcd
	scripts/compare-before.sh

compare-checkperf: build ## side by side with etcdctl check perf --load s and l (minutes)
	scripts/compare-checkperf.sh

compare-fio: build ## etcdperf disk --pattern fio against fio on the same folder
	ETCDPERF=bin/etcdperf scripts/compare-fio.sh

fuzz: ## run every fuzz target for 30 s; fails on a crasher
	@for spec in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs grep -H -o '^func Fuzz[A-Za-z0-9_]*' | sed 's/:func /:/'); do \
		file=$${spec%%:*}; fn=$${spec##*:}; pkg=./$$(dirname $$file); \
		echo "== $$pkg $$fn"; \
		out=$$($(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime 30s $$pkg 2>&1); rc=$$?; echo "$$out" | tail -n 3; \
		if [ $$rc != 0 ]; then \
			echo "$$out" | grep -q 'Failing input written' && exit 1; \
			echo "   (ended without writing a crasher: the fuzz coordinator's end-of-run deadline, not a finding)"; \
		fi; \
	done

soak: ## resource bounds: generator RSS over 1M and 10M requests, and 10,000 watchers
	scripts/soak.sh

clean:
	rm -rf bin
