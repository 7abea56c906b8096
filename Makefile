# Fido for Neovim. `make` builds bin/fido and doc/tags; `make run` starts
# Neovim with Fido on this directory; `make test` runs vet, gofmt and every test with -race;
# `make bench` measures rendering and tool speed against naive code, rg and fd.
GO      ?= go
NVIM_BIN ?= nvim
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build run test vet fmt-check bench bench-render bench-tools clean FORCE

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

test: build fmt-check vet
	@bash scripts/ensure-nvim
	$(GO) test -race -count=1 -timeout 15m ./...

bench: build bench-render bench-tools

bench-render: build
	$(GO) run ./cmd/renderbench

bench-tools:
	@command -v rg >/dev/null && command -v fdfind >/dev/null || \
	  { echo "make bench needs ripgrep and fd-find: apt-get install -y ripgrep fd-find"; exit 1; }
	$(GO) run ./cmd/toolbench

clean:
	rm -rf bin doc/tags
