# Fido for Neovim. `make` builds bin/fido and doc/tags; `make run` starts
# Neovim with Fido on this directory; `make test` runs vet, gofmt and every
# test with -race; `make bench` measures streaming (Neovim's latency and
# memory, bin/fido's CPU beside a floor reader, a naive renderer), tool
# speed against naive code, rg and fd, the provider's stream reader against
# a floor reader, the cost of one javascript_execute call and of one
# sandboxed command beside `sh -c true`; `make lint`
# runs staticcheck, the go.mod tidiness check, gofmt, StyLua and the
# darwin/windows cross-builds (tools come from scripts/ensure-tools).
GO      ?= go
NVIM_BIN ?= nvim
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build run test vet fmt-check lint fmt-lua cross bench bench-render bench-render-tls bench-host bench-tools bench-provider bench-js bench-conversations bench-sandbox clean FORCE

all: build doc/tags

build: bin/fido

# :help fido needs the tags file; without nvim the plugin runs :helptags on
# its own doc folder the first time it loads.
doc/tags: doc/fido.txt
	@if command -v $(NVIM_BIN) >/dev/null; then \
	  $(NVIM_BIN) --headless --clean -c 'helptags doc' -c 'qa!' && echo "doc/tags"; \
	else echo "doc/tags: no $(NVIM_BIN); the plugin generates it on first load"; fi

bin/fido: FORCE
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/fido ./cmd/fido

# RUN_DIR: the workspace to open (default: this directory), e.g.
#   make -C ~/src/fido run RUN_DIR=$PWD
RUN_DIR ?= $(CURDIR)

run: build doc/tags
	@bash scripts/ensure-nvim
	cd "$(RUN_DIR)" && $(NVIM_BIN) --cmd "set rtp^=$(CURDIR)" \
	  -c "lua require('fido').setup({ binary = '$(CURDIR)/bin/fido' })" -c "Fido"

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# Lint tools (staticcheck, StyLua) are pinned and cached outside the repo.
TOOLS_ENV = eval "$$(bash scripts/ensure-tools)"

lint: fmt-check vet cross
	@$(TOOLS_ENV) && staticcheck ./...
	$(GO) mod tidy -diff
	@$(TOOLS_ENV) && node scripts/stylua.cjs --check

fmt-lua:
	@$(TOOLS_ENV) && node scripts/stylua.cjs

# The host builds on every system Go targets; bash_exec says where it cannot run.
cross:
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) build ./...

test: build fmt-check vet
	@bash scripts/ensure-nvim
	$(GO) test -race -count=1 -timeout 15m ./...

bench: build bench-render bench-render-tls bench-host bench-tools bench-provider bench-js bench-conversations bench-sandbox

# BENCH_FLAGS, e.g. -repeat 3 or -cpuprofile /tmp/fido.prof (see cmd/renderbench).
bench-render: build
	$(GO) run ./cmd/renderbench -fido bin/fido $(BENCH_FLAGS)

# The host's CPU with the stream over TLS, as from OpenRouter.
bench-render-tls: build
	$(GO) run ./cmd/renderbench -fido bin/fido -tls -only burst,paced $(BENCH_FLAGS)

bench-tools:
	@command -v rg >/dev/null && command -v fdfind >/dev/null || \
	  { echo "make bench needs ripgrep and fd-find: apt-get install -y ripgrep fd-find"; exit 1; }
	$(GO) run ./cmd/toolbench

# The provider reading 20,000 deltas from memory: CPU and allocations per
# delta beside a floor reader that only splits lines and parses each chunk
# with gjson (goal: within 2x of the floor).
bench-provider:
	$(GO) test -run '^$$' -bench 'Stream20kDeltasInMemory' -benchtime 40x ./agent/openrouter/

# The host's whole turn for a 20,000-delta answer from memory, without
# Neovim's socket: CPU and allocations per turn.
bench-host:
	$(GO) test -run '^$$' -bench 'HostTurnBurst' -benchtime 40x ./nvim/

# One javascript_execute call: each snippet runs in a bin/fido js-worker process.
bench-js: build
	$(GO) run ./cmd/jsbench -worker bin/fido

# Loading a saved conversation of 1,000 messages (goal: under 100 ms).
bench-conversations:
	$(GO) test -run '^$$' -bench 'ConversationLoad1000' -benchtime 20x ./agent/conversation/

# One sandboxed command (bin/fido sandbox-exec: helper start, rules,
# Landlock, seccomp, supervisor) beside a plain `sh -c true` in the same
# run: added ms and ratio (goal: at most 5 ms added). Skips where Linux
# cannot sandbox.
bench-sandbox: build
	FIDO_SANDBOX_HELPER=$(CURDIR)/bin/fido $(GO) test -run '^$$' -bench 'SandboxCost|Compile' -benchtime 50x ./tools/sandbox/

clean:
	rm -rf bin doc/tags
