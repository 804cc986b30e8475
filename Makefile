# sandcheck: `make run` and `make test` work on a fresh Debian 12 machine (as root, or with sudo).
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
export GOFLAGS ?= -buildvcs=false
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN := bin/sandcheck
TOOLS := $(CURDIR)/.tools
export SANDCHECK_SRT := $(TOOLS)/npm/node_modules/.bin/srt
STATICCHECK := $(TOOLS)/bin/staticcheck
GO_PKGS := ./...

.PHONY: all deps deps-test build run test unit lint bench clean

all: build

deps: ## Debian packages + the pinned srt into .tools/ (idempotent)
	@./scripts/install-deps.sh

build: ## static binary, so it can be copied into containers and VMs
	@CGO_ENABLED=0 go build -ldflags "-X main.Version=$(VERSION)" -o $(BIN) ./cmd/sandcheck

$(STATICCHECK):
	@GOBIN=$(TOOLS)/bin go install honnef.co/go/tools/cmd/staticcheck@v0.8.2

run: deps build ## the default matrix on this host
	$(BIN) run --out out/run

lint: $(STATICCHECK)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	go vet $(GO_PKGS)
	$(STATICCHECK) $(GO_PKGS)

deps-test:
	@./scripts/install-deps.sh --test

test: deps deps-test build lint ## every test, against the real srt, bwrap and socat
	SANDCHECK_NODE_MODULES=$(TOOLS)/npm-report/node_modules go test -count=1 -timeout 25m $(GO_PKGS)
	@./scripts/check-leftovers.sh

bench: deps build
	go test -run '^$$' -bench . -benchtime 1x -timeout 60m ./...

clean:
	rm -rf bin out
