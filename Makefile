# The README's test command is `make test`; .ci/run calls exactly that.
GO ?= go
# go.work (the harness and ./models) is for the root module only; the
# pinned tools modules are built on their own, and xk6-resilience uses its
# own go.work.
GO_NOWORK = GOWORK=off $(GO)
PKG_TIMEOUT ?= 60m

FUZZTIME ?= 30s

.PHONY: test lint lint-workflows test-main test-ext fuzz reliability

test: lint lint-workflows test-main test-ext fuzz

lint:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./... ./models/...
	cd xk6-resilience && $(GO) vet ./...

# Packages run one at a time: the end-to-end scenarios measure latency and
# must not share the two cores with another package's load.
test-main:
	$(GO) test -p 1 -count=1 -timeout $(PKG_TIMEOUT) ./... ./models/...

# The reliability group alone (make test runs it too): every way a run can
# break — a dead k6, target or Toxiproxy, a hung child, signals, SIGKILL then
# clean, floods — and what must follow.
reliability:
	$(GO) test -p 1 -count=1 -timeout $(PKG_TIMEOUT) -run '^TestReliability' ./cmd/chaosrun

test-ext:
	cd xk6-resilience && $(GO) test -count=1 -timeout $(PKG_TIMEOUT) ./...

# Every parser of outside input is fuzzed for a bounded time; findings are
# kept as regression inputs under each package's testdata/fuzz.
FUZZ_TARGETS = ./scenario:FuzzParse ./scenario:FuzzWorkload ./workloads/native:FuzzReadSpec ./workloads/native:FuzzParseResults ./compose:FuzzImport ./assertions:FuzzParseCheck ./workloads/stream:FuzzDecode ./record:FuzzHistCount ./record:FuzzReadJSON ./testbed/httpstage:FuzzStage ./targets/bankservice:FuzzRequests ./targets/kvdispatcher:FuzzRequests ./export/metrics:FuzzParseScrapeKey

fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "fuzz $$pkg $$fn for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

# The GitHub workflows are checked by actionlint, built from a pinned tools module
# (it runs shellcheck on their embedded shell); the action's scripts by shellcheck.
lint-workflows:
	cd tools/actionlint && $(GO_NOWORK) build -o ../../bin/actionlint github.com/rhysd/actionlint/cmd/actionlint
	bin/actionlint -color=false .github/workflows/*.yml
	shellcheck -x scripts/action/*.sh scripts/install-deps.sh
