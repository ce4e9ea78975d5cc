# The README's test command is `make test`; .ci/run calls exactly that.
GO ?= go
# go.work (the harness and ./models) is for the root module only; the
# pinned tools modules are built on their own, and xk6-resilience uses its
# own go.work.
GO_NOWORK = GOWORK=off $(GO)
PKG_TIMEOUT ?= 60m

# Fuzz budget per target: FUZZTIME for most; the decoders that face the
# network (the results stream, the engine's HTTP answers, the guard's
# addresses, the game-day API)
# carry a count of executions (about 20 s each here), because a time
# budget can end while a worker is mid-input on a loaded machine and Go's
# fuzzer (1.26) then fails with "context deadline exceeded" and no input.
FUZZTIME ?= 10s

.PHONY: test test-fast deps lint grpc-example lint-workflows test-main test-ext fuzz fuzz-net reliability docker-catalog dist extension-tags

# Every test, nothing skipped: deps first installs what the tests need (or
# fails at once naming the command), and CI=true makes a test whose tool or
# Docker engine is missing fail rather than skip (internal/testenv).
test: export CI ?= true
test: deps lint lint-workflows grpc-example test-main test-ext fuzz-net

# What the tests need from the machine besides Go and Docker: Debian
# packages, installed when no password is needed (root or passwordless
# sudo), else it fails naming the one command to run; then a Docker engine
# that answers.
deps:
	scripts/install-deps.sh --no-prompt

lint:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./... ./models/...
	cd xk6-resilience && $(GO) vet ./...
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build -o /dev/null ./cmd/chaosrun

# Packages with end-to-end tests (those -short skips) run one at a time:
# their scenarios measure latency and must not share the two cores with
# another package's load. The rest, unit tests only, run first, two
# packages at a time, as make test-fast runs them.
# TESTFLAGS adds flags (-v for each test's time: make test TESTFLAGS=-v).
TESTFLAGS ?=
E2E_TEST = testing\.Short\(\)|skipShort\(t\)
test-main:
	@all="$$($(GO) list -f '{{.ImportPath}} {{.Dir}}' ./... ./models/...)" && \
	  e2e="$$(echo "$$all" | while read -r pkg dir; do if grep -qsE '$(E2E_TEST)' "$$dir"/*_test.go; then echo "$$pkg"; fi; done)" && \
	  test -n "$$e2e" && unit="$$(echo "$$all" | cut -d' ' -f1 | grep -vxF "$$e2e")" && \
	  echo "go test: $$(echo "$$unit" | wc -l) unit packages two at a time, then $$(echo "$$e2e" | wc -l) with end-to-end tests one at a time" && \
	  $(GO) test -p 2 -count=1 -timeout $(PKG_TIMEOUT) $(TESTFLAGS) $$unit && \
	  $(GO) test -p 1 -count=1 -timeout $(PKG_TIMEOUT) $(TESTFLAGS) $$e2e

# A developer's inner loop: unit tests, fuzz seeds and golden files, with
# no end-to-end run (-short skips them); packages in parallel.
test-fast:
	$(GO) test -short -count=1 ./... ./models/...

# The reliability group alone (make test runs it too): every way a run can
# break — a dead k6, target or Toxiproxy, a hung child, signals, SIGKILL then
# clean, floods, a long results file, a port taken from under a service, a
# file of a thousand mistakes — and what must follow.
RELIABILITY_PKGS = ./cmd/chaosrun ./testbed ./scenario
reliability:
	$(GO) test -p 1 -count=1 -timeout $(PKG_TIMEOUT) -run '^TestReliability' $(RELIABILITY_PKGS)

# Every catalog A/B pair on the Docker testbed (make test runs every pair
# locally and a subset on Docker: dockerPairs in cmd/chaosrun).
docker-catalog:
	CHAOSRUN_DOCKER_CATALOG=1 $(GO) test -p 1 -count=1 -timeout $(PKG_TIMEOUT) -run '^TestDockerCatalogAB$$' ./cmd/chaosrun

test-ext:
	cd xk6-resilience && $(GO) test -count=1 -timeout $(PKG_TIMEOUT) ./...

# Every parser of outside input has a fuzzer: its seed corpus and the
# findings kept under each package's testdata/fuzz run in every go test;
# make fuzz runs each for a bounded time, make test (fuzz-net) the decoders
# that face the network (marked :net=COUNT).
FUZZ_TARGETS = \
  ./scenario:FuzzParse \
  ./scenario:FuzzWorkload \
  ./workloads/k6run:FuzzParseOptions \
  ./workloads:FuzzScriptExecutors \
  ./workloads/native:FuzzReadSpec \
  ./workloads/native:FuzzParseResults \
  ./workloads/native/h1:FuzzReadResponse:net=100000x \
  ./workloads/grpcproto:FuzzParseMethod \
  ./workloads/grpcproto:FuzzRequest \
  ./compose:FuzzImport \
  ./assertions:FuzzParseCheck \
  ./workloads/stream:FuzzDecode:net=150000x \
  ./workloads/stream:FuzzReceiver:net=30000x \
  ./record:FuzzHistCount \
  ./record:FuzzReadJSON \
  ./testbed/httpstage:FuzzStage \
  ./testbed/httpstage:FuzzH2 \
  ./targets/bankservice:FuzzRequests \
  ./targets/kvdispatcher:FuzzRequests \
  ./export/metrics:FuzzParseScrapeKey \
  ./guard:FuzzHosts:net=250000x \
  ./gameday:FuzzAPI:net=80000x \
  ./judge:FuzzReadTimeline

fuzz-net:
	@$(MAKE) --no-print-directory fuzz FUZZ_TARGETS="$(filter %x,$(FUZZ_TARGETS))"

fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; rest=$${t#*:}; fn=$${rest%%:*}; ft=$(FUZZTIME); \
	  case $$rest in *:net=*) ft=$${rest##*=};; esac; \
	  echo "fuzz $$pkg $$fn for $$ft"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $$ft $$pkg || exit 1; \
	done

# The native engine's gRPC tests load a real gRPC server chaosrun did not
# write: grpc-go's reflection example (Greeter, Echo, server reflection),
# built from a pinned tools module.
grpc-example:
	cd tools/grpcexample && $(GO_NOWORK) build -o ../../bin/grpc-example-server google.golang.org/grpc/examples/features/reflection/server

# The GitHub workflows are checked by actionlint, built from a pinned tools module
# (it runs shellcheck on their embedded shell); the action's scripts by shellcheck.
lint-workflows:
	cd tools/actionlint && $(GO_NOWORK) build -o ../../bin/actionlint github.com/rhysd/actionlint/cmd/actionlint
	bin/actionlint -color=false .github/workflows/*.yml
	shellcheck -x scripts/action/*.sh scripts/install-deps.sh scripts/third-party-licenses.sh

# A release build here, published nowhere (about 20 s with warm caches,
# some 10 minutes cold, so make test does not run it; make lint builds the
# darwin binary, which a Linux-only line would break): static binaries (CGO_ENABLED=0)
# for linux and darwin, amd64 and arm64, as tar.gz archives with the
# licences, and checksums.txt (SHA-256), in dist/. goreleaser comes from the
# pinned tools module; .goreleaser.yaml says what is built, and
# .github/workflows/release.yml publishes the same on a tag.
# goreleaser reads the commit only when git names a remote: in a clone
# without one the archives would say commit "none", built 0001-01-01, so
# the repository's URL is given to its git commands. The check at the end
# counts the archives, verifies the checksums and asks the linux/amd64
# binary for the commit it was built from.
DIST_GIT_ENV = $(if $(shell git remote 2>/dev/null),,GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/chaosrun/chaosrun)
dist:
	cd tools/goreleaser && $(GO_NOWORK) build -o ../../bin/goreleaser github.com/goreleaser/goreleaser/v2
	$(DIST_GIT_ENV) bin/goreleaser release --snapshot --clean
	cd dist && sha256sum -c checksums.txt && test "$$(ls *.tar.gz | wc -l)" -eq 4 && test "$$(wc -l < checksums.txt)" -eq 4
	dist/chaosrun_linux_amd64_v1/chaosrun version | grep -F "commit     $$(git rev-parse HEAD)"

# The git tags that release the extension by version (xk6-resilience/README.md,
# "By version"): models/vA.B.C for the models version its go.mod requires (when it
# requires one), then xk6-resilience/vX.Y.Z from its Version constant.
extension-tags:
	@v=$$(sed -n 's/^const Version = "\(v[0-9][0-9.]*\)"$$/\1/p' xk6-resilience/resilience.go); \
	  test -n "$$v" || { echo "no Version constant in xk6-resilience/resilience.go" >&2; exit 1; }; \
	  awk '{for (i = 1; i < NF; i++) if ($$i == "github.com/chaosrun/chaosrun/models") print "git tag models/" $$(i+1)}' xk6-resilience/go.mod; \
	  echo "git tag xk6-resilience/$$v"
