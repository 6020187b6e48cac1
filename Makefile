# etcdperf: build, test, lint, bench, e2e. `make help` lists the targets.
GO ?= go
PKGS := ./...
STATICCHECK_VERSION ?= v0.8.2

.PHONY: help build test test-race lint bench compare fuzz e2e etcd clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' Makefile | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/etcdperf
	$(GO) build -o bin/etcdperf ./cmd/etcdperf

etcd: ## build bin/etcd, the etcd server release etcdperf embeds, as a separate binary
	$(GO) build -o bin/etcd go.etcd.io/etcd/server/v3

test: ## the whole suite (what CI runs): unit, live against real etcd, e2e of the binary, race on the generator; packages one at a time, so live tests do not load each other's disk and CPU
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -p 1 -timeout 14m $(PKGS)
	$(GO) test -race -count=1 -timeout 10m ./bench/ ./results/

lint: ## gofmt, go vet, staticcheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt: $$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

bench: ## Go benchmarks of the hot paths (recorder, pacer, parsers)
	$(GO) test -run '^$$' -bench . -benchmem ./bench/ ./results/ ./analyze/

compare: build ## side by side with etcd's benchmark and etcdctl check perf (builds the reference tools)
	scripts/compare-benchmark.sh

fuzz: ## run every fuzz target for 30 s
	@for spec in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs grep -H -o '^func Fuzz[A-Za-z0-9_]*' | sed 's/:func /:/'); do \
		file=$${spec%%:*}; fn=$${spec##*:}; pkg=./$$(dirname $$file); \
		echo "== $$pkg $$fn"; $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime 30s $$pkg || exit 1; \
	done

clean:
	rm -rf bin
