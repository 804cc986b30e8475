# sandcheck: `make run` and `make test` work on a fresh Debian 12 machine (as root, or with sudo).
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
export GOFLAGS ?= -buildvcs=false
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN := bin/sandcheck
TOOLS := $(CURDIR)/.tools
export SANDCHECK_SRT := $(TOOLS)/npm/node_modules/.bin/srt
STATICCHECK := $(TOOLS)/bin/staticcheck
ACTIONLINT := $(TOOLS)/bin/actionlint
GO_PKGS := ./...

.PHONY: all deps deps-test reports results-tables bypass-table bypass-history scenarios-doc build run test test-quick unit lint bench sweep clean

all: build

deps: ## Debian packages + the pinned srt into .tools/ (idempotent)
	@./scripts/install-deps.sh

build: ## static binary, so it can be copied into containers and VMs
	@CGO_ENABLED=0 go build -ldflags "-X main.Version=$(VERSION)" -o $(BIN) ./cmd/sandcheck

$(STATICCHECK):
	@GOBIN=$(TOOLS)/bin go install honnef.co/go/tools/cmd/staticcheck@v0.8.2

$(ACTIONLINT):
	@GOBIN=$(TOOLS)/bin go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

run: deps build ## the default matrix on this host
	$(BIN) run --out out/run

lint: $(STATICCHECK) $(ACTIONLINT)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	go vet $(GO_PKGS)
	$(STATICCHECK) $(GO_PKGS)
	$(ACTIONLINT)

deps-test:
	@./scripts/install-deps.sh --test
	@./scripts/vm-deps.sh

# Unit and driver tests first (packages in parallel), then the end-to-end tests alone: they count
# outcomes of the real srt, whose start-up waits are short enough that a loaded machine shows.
# The e2e timeout guards against a hang; it is not the budget (issue 32 and make bench are): on
# a slower 2-core machine the e2e tier went past the 25 minutes it had. Verbose, so that each
# test's time is in the log (--- PASS: TestX (N s)).
test: deps deps-test build lint ## every test, against the real srt, bwrap and socat
	@mkdir -p out && ./scripts/check-leftovers.sh --snapshot out/leftovers-before.txt
	SANDCHECK_NODE_MODULES=$(TOOLS)/npm-report/node_modules go test -count=1 -timeout 20m $$(go list ./... | grep -v /e2e)
	set -o pipefail; go test -count=1 -timeout 40m -v ./e2e/ 2>&1 | grep -v '^=== '
	@./scripts/check-leftovers.sh --since out/leftovers-before.txt

# The edit loop: lint, the unit tests without their slow tier (-short: VM boots, cross-builds,
# runner processes), and every target's network scenario once healthy and once under a fail-open
# known-bad (e2e TestQuick). Not coverage: make test is.
test-quick: deps build lint ## lint, unit tests (-short) and one healthy and one fail-open cell per target, for the edit loop
	SANDCHECK_NODE_MODULES=$(TOOLS)/npm-report/node_modules go test -short -count=1 -timeout 10m $$(go list ./... | grep -v /e2e)
	set -o pipefail; go test -short -count=1 -timeout 10m -run 'TestQuick$$' -v ./e2e/ 2>&1 | grep -v '^=== '

# Measured results live in docs/results/, each file saying when and on which machine: the tools
# that measure them write them, never a hand.
results-tables: deps build bypass-table ## the sandbox x scenario and bypass tables, measured on this machine, into docs/results/
	@mkdir -p out
	@BYPASS_TABLE=out/bypass-table-unused.md ./scripts/readme-table.sh 3 > out/readme-table.md
	@./scripts/results-header.sh "sandbox x scenario" "Sandbox x scenario, healthy" out/readme-table.md > docs/results/sandboxes.md
	@echo "docs/results/sandboxes.md: written"

# The allow-list sandboxes side by side (srt, Claude Code's bundled srt, Codex's own proxy), and
# the deny-all ones, on every bypass class: 3 healthy trials each (a Claude Code trial starts
# claude once per session, eight sessions: minutes, not the default 2m).
BYPASS_TARGETS ?= srt claude-code codex bwrap firejail
bypass-table: deps build ## the bypass class x target table (srt, Claude Code, Codex, bwrap, firejail) into docs/results/bypass.md
	@mkdir -p out
	@TARGETS="$(BYPASS_TARGETS)" LABELS=bypass TIMEOUT=10m BYPASS_TABLE=out/bypass-table.md ./scripts/readme-table.sh 3 > /dev/null
	@./scripts/results-header.sh "bypass-table" "Bypass classes x target, healthy" out/bypass-table.md > docs/results/bypass.md
	@echo "docs/results/bypass.md: written"

# Every bypass case on srt's and Codex's releases and on Claude Code's around each fix (the last
# release with each escape, the first without it): the version x case table of the run's report.md, into
# docs/results/bypass-history.md. Old releases fail (that is the history): exit 1 is expected.
# Each run starts afresh (the table is one run's); RESUME=1 continues an interrupted one.
bypass-history: deps build ## every bypass case across srt's, Codex's and Claude Code's releases into docs/results/bypass-history.md
	@[ -n "$(RESUME)" ] || rm -rf out/bypass-history
	@mkdir -p out/bypass-history-tmp
	@TMPDIR=$(CURDIR)/out/bypass-history-tmp $(BIN) run --matrix matrix/examples/bypass-history.yaml --out out/bypass-history $(if $(RESUME),--resume) > out/bypass-history.log 2>&1; \
	  code=$$?; [ $$code -le 1 ] || { cat out/bypass-history.log; exit $$code; }
	@awk '/^## Versions/{p=1} /^## Truth tables/{p=0} p' out/bypass-history/report.md > out/bypass-history/versions.md
	@./scripts/results-header.sh "bypass-history" "Bypass cases across srt's, Codex's and Claude Code's releases" out/bypass-history/versions.md > docs/results/bypass-history.md
	@echo "docs/results/bypass-history.md: written"

# Bug reports a maintainer acts on (docs/reports/): what `sandcheck repro` prints for a finding,
# with every reproducer it wrote run here outside sandcheck. Each report's opening is written by
# hand and kept (scripts/bug-report.sh).
PROTECTED_FROM_SUBDIR := bypass-fs-interplay-protected-bashrc-from-subdir || bypass-fs-interplay-protected-git-hooks-from-subdir || bypass-fs-interplay-protected-git-config-from-subdir
SRT_AT = /var/cache/sandcheck/npm/@anthropic-ai/sandbox-runtime@$(1)/node_modules/.bin/srt
CLAUDE_AT = /var/cache/sandcheck/npm/@anthropic-ai/claude-code@$(1)/node_modules/@anthropic-ai/claude-code-linux-x64/claude
reports: deps deps-test build ## the bug reports in docs/reports/, each from a real run here, its reproducers run
	@./scripts/bug-report.sh claude-code-bypass-approves-denied-hosts $(call CLAUDE_AT,2.1.215):$(call CLAUDE_AT,2.1.332) -- --target claude-code \
	  --label-filter 'claude-seed-repro || claude-permissions-bypass || claude-permissions-bypass-strict-allowlist' -n 5
	@./scripts/bug-report.sh firejail-home-writable $$(command -v firejail) -- --target firejail --label-filter fs-outside -n 5
	@./scripts/bug-report.sh srt-protected-files-from-subdir $(SANDCHECK_SRT) -- --target srt --label-filter '$(PROTECTED_FROM_SUBDIR)' -n 5
	@./scripts/bug-report.sh srt-0.0.65-root-keeps-capabilities $(call SRT_AT,0.0.65):$(call SRT_AT,0.0.76) -- --target srt@0.0.65 --user root --label-filter bypass-privilege -n 5
	@./scripts/beside-guests.sh env REPRO_ENV="RUNS=100 PAR=2" ./scripts/bug-report.sh claude-code-startup-race $(call CLAUDE_AT,2.1.215):$(call CLAUDE_AT,2.1.332) -- \
	  --target claude-code@2.1.215 --label-filter network -n 100 -j 2
	@./scripts/bug-report.sh srt-bridge-relay-follows-links $(SANDCHECK_SRT) -- --target srt --label-filter bypass-bridge -n 5
	@./scripts/bug-report.sh srt-git-xdg-config-writable $(SANDCHECK_SRT) -- --target srt --label-filter bypass-persistence-git-xdg-config -n 5
	@./scripts/bug-report.sh srt-own-binary-writable $(SANDCHECK_SRT) -- --target srt --label-filter bypass-persistence-own-binary -n 5
	@./scripts/bug-report.sh codex-proxy-serves-without-credentials $(TOOLS)/npm-codex/node_modules/.bin/codex -- --target codex --label-filter bypass-other-egress-proxy-no-credentials -n 5
	@./scripts/bug-report.sh claude-code-caller-proxy-skips-address-check $(call CLAUDE_AT,2.1.215):$(call CLAUDE_AT,2.1.332) -- --target claude-code@2.1.332 \
	  --label-filter 'bypass-parent-proxy-rebind-loopback || bypass-parent-proxy-rebind-metadata' -n 5

# The scenario catalogue, from the compiled specs' own tables (no sandbox runs); a test fails when
# the committed file is stale.
scenarios-doc: build ## regenerate docs/scenarios.md (sandcheck list --markdown)
	@env -u SANDCHECK_CONCURRENCY $(BIN) list --markdown > docs/scenarios.md.new && mv docs/scenarios.md.new docs/scenarios.md
	@echo "docs/scenarios.md: $$(grep -c '^| `' docs/scenarios.md) scenarios"

# Old srt releases leave files in $$TMPDIR after every run: the sweep gets a TMPDIR of its own.
sweep: deps build ## srt's history on this host (matrix/examples/sweep.yaml): a version x scenario table in out/sweep/report.md
	@mkdir -p out/sweep-tmp
	TMPDIR=$(CURDIR)/out/sweep-tmp $(BIN) run --matrix matrix/examples/sweep.yaml --out out/sweep
	@./scripts/results-header.sh "a sweep of srt's history (make sweep)" "srt's history on this host" out/sweep/report.md > docs/results/sweep.md

bench: deps build ## the benchmarks; their output, with the machine and date, into docs/results/bench-latest.txt
	@mkdir -p out
	go test -run '^$$' -bench . -benchtime 1x -timeout 60m ./... | tee out/bench.txt
	@./scripts/results-header.sh "make bench" "Benchmarks" out/bench.txt > docs/results/bench-latest.txt

clean:
	rm -rf bin out
