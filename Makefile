# User Records Service. `make run` and `make test` each install what is missing first.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Development defaults for `make run` and `make dev` only; real deployments set their own (see README). Each
# yields to the command line, the environment, and the settings file (below).
BASIC_AUTH_USERNAME ?= admin
BASIC_AUTH_PASSWORD ?= dev-password
PORT ?= 3000
DATABASE_URL ?= sqlite:./data/users.sqlite

MOCK_PORT ?= 4010
MOCK_DYNAMIC ?=
SANDBOX_PORT ?= 4011
SANDBOX_LATENCY_MS ?= 0

# The Node everything here runs on. A machine whose own Node is a supported line (22 or newer) uses it; any
# other (Node 20 reached end of life on 2026-04-30) gets the Node that .node-version pins, from the npm
# registry, in .tools/ (about 5 s, once; scripts/install-node.sh): node-<platform>-<arch> is the official
# build, with the headers node-gyp builds native addons against. NODE=pinned uses it whatever the machine has.
NODE_PIN := $(shell cat .node-version)
OWN_NODE_MAJOR := $(shell node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
NODE ?= $(if $(shell [ $(OWN_NODE_MAJOR) -ge 22 ] && echo own),own,pinned)
ifeq ($(NODE),pinned)
NODE_PACKAGE := node-$(shell node -p 'process.platform + "-" + process.arch' 2>/dev/null || echo linux-x64)
NODE_HOME := $(CURDIR)/.tools/node-$(NODE_PIN)/node_modules/$(NODE_PACKAGE)
NODE_BIN := $(NODE_HOME)/bin/node
export PATH := $(NODE_HOME)/bin:$(PATH)
export npm_config_nodedir := $(NODE_HOME)
endif

INSTALLED := node_modules/.installed
# What make run and make sandbox need: the runtime packages and the compiler (npm ci --omit=dev, about 210
# packages), or everything. The Java generator, Prism, Spectral, Jest and the browser drivers (about 750 more)
# come with make test.
RUNTIME := node_modules/.runtime
# dist/ is compiled again only when a source changed: a later make run starts in a second or two.
BUILT := dist/.built
SOURCES := $(shell find server generated -name '*.ts') openapi/user-records.yaml generated/user-records.sandbox.yaml tsconfig.json tsconfig.build.json scripts/bundle.mjs scripts/copy-contract.mjs
JEST_FLAGS ?=

.PHONY: help install contract-gate release-contract chromium container-tools compose-tools deploy-tools fault-tools image service-images generate check-generated lint layers typecheck build client run dev start migrate backup restore hash-password mock sandbox test bench audit-lists clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(NODE_BIN):
	scripts/install-node.sh $(NODE_PIN) >/dev/null
	@touch $@

# A new Node (another pin, or the machine's own) installs again: better-sqlite3 is compiled for one Node.
# make's own steps (installing, compiling) report on standard error: a target's standard output is what its
# command prints (make backup's one line of JSON, make hash-password's hash).
$(INSTALLED): package.json package-lock.json $(NODE_BIN)
	@echo 'npm ci --no-audit --no-fund' >&2; npm ci --no-audit --no-fund >&2
	@touch $@ $(RUNTIME)

# A tree that had everything installed gets everything again: make build never takes away make test's tools.
$(RUNTIME): package.json package-lock.json $(NODE_BIN)
	@if [ -f $(INSTALLED) ] && [ $(INSTALLED) -nt package.json ] && [ $(INSTALLED) -nt package-lock.json ] \
	  $(if $(NODE_BIN),&& [ $(INSTALLED) -nt $(NODE_BIN) ]); then touch $@; \
	elif [ -f $(INSTALLED) ]; then $(MAKE) --no-print-directory install && touch $@; \
	else echo 'npm ci --omit=dev --no-audit --no-fund' >&2; npm ci --omit=dev --no-audit --no-fund >&2 && touch $@; fi

$(BUILT): $(RUNTIME) $(SOURCES)
	@echo 'npm run build --silent' >&2; npm run build --silent >&2
	@touch $@

install: $(INSTALLED) ## Install dependencies (npm ci) when package-lock.json changed

# Debian's Chromium for the browser tests (playwright-core drives it and downloads nothing). Installed when
# missing and apt-get can run as root; otherwise the browser tests say they are skipped (CI=true: they fail).
chromium: ## Install Chromium for the browser tests, if missing
	@if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; fi

# Debian packages the tests drive, installed when a command is missing and apt-get can run as root; otherwise
# those tests say they are skipped (CI=true: they fail). $(call debian,<commands>,<packages>)
debian = @if ! (for c in $(1); do command -v $$c >/dev/null || exit 1; done); then \
	  if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; fi; fi

# podman, with runc, buildah and debootstrap (which makes the base image on a machine that reaches no image
# registry), for make image and the container tests.
container-tools: ## Install podman and what the image build needs, if missing
	$(call debian,podman debootstrap,podman runc buildah debootstrap)

# PgBouncer and HAProxy, the pooler and the proxy of the production topology's tests.
deploy-tools: ## Install PgBouncer and HAProxy for the topology tests, if missing
	$(call debian,pgbouncer haproxy,pgbouncer haproxy)

# podman-compose (Debian 12's 1.0) and socat (for HAProxy's runtime API), which start compose.yaml's topology
# and roll out a new version through it (deploy/rolling-restart.sh).
compose-tools: container-tools ## Install podman-compose and socat for the compose topology, if missing
	$(call debian,podman-compose socat,podman-compose socat)

# strace, which makes a server's disk syncs slow for the slow-disk tests (tests/support/slow-disk.ts).
fault-tools: ## Install strace for the slow-disk tests, if missing
	$(call debian,strace,strace)

# The image: localhost/user-records-service:latest and :<version>. The base (node:24-bookworm-slim) is used as
# it is when podman has it (podman pull it first to use the official one); otherwise it is made here
# (scripts/node-base-image.sh). deploy/containers.conf keeps podman from raising RLIMIT_NOFILE, which some
# virtual machines refuse. The build reads the machine's CA bundle for npm (a network that presents its own
# certificate authority); it goes into no layer of the image.
IMAGE ?= localhost/user-records-service
VERSION = $(shell node -p 'require("./package.json").version')
PODMAN = CONTAINERS_CONF=$(CURDIR)/deploy/containers.conf podman
image: container-tools ## Build the container image (localhost/user-records-service:latest and :VERSION)
	CONTAINERS_CONF=$(CURDIR)/deploy/containers.conf scripts/node-base-image.sh node:24-bookworm-slim
	$(PODMAN) build --pull=never --format docker --network host \
	  $(if $(wildcard /etc/ssl/certs/ca-certificates.crt),-v /etc/ssl/certs:/etc/ssl/certs:ro --build-arg NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt) \
	  --build-arg VERSION=$(VERSION) --build-arg REVISION=$$(git rev-parse HEAD 2>/dev/null || echo unknown) \
	  -t $(IMAGE):latest -t $(IMAGE):$(VERSION) -f Containerfile .

# The images of compose.yaml's other services (postgres:15-bookworm, redis:7-bookworm, haproxy:2.6): used as they
# are when podman has them (podman pull them first to use the official ones); otherwise made here from Debian
# 12's packages (scripts/service-images.sh, deploy/images/).
service-images: container-tools ## Make compose.yaml's PostgreSQL, Redis and HAProxy images where podman has none
	CONTAINERS_CONF=$(CURDIR)/deploy/containers.conf scripts/service-images.sh

generate: $(INSTALLED) ## Regenerate generated/ from openapi/user-records.yaml and its sandbox overlay
	scripts/generate.sh generated

check-generated: $(INSTALLED) ## Fail when generated/ differs from what the contract generates
	scripts/check-generated.sh

contract-gate: $(INSTALLED) ## Breaking-change gate: the contract's changes since its last release against info.version
	node scripts/contract-gate.mjs

# After a release's contract is final: its changelog entry into openapi/CHANGELOG.md, and the contract into
# openapi/released/<version>.yaml, the one the gate compares with from then on and the one npm publish takes.
release-contract: $(INSTALLED) ## Record the contract as released (changelog entry, openapi/released/)
	node scripts/contract-gate.mjs --release

# The code with Biome (biome.jsonc: its formatting, and its recommended rules but the two it says why it turns
# off; `node_modules/.bin/biome check --write` formats), the contract with Spectral.
lint: $(INSTALLED) ## Lint and format-check the code (Biome); lint the contract and its sandbox variant (Spectral, .spectral.yaml)
	node_modules/.bin/biome check
	node_modules/.bin/spectral lint openapi/user-records.yaml generated/user-records.sandbox.yaml --ruleset .spectral.yaml --fail-severity warn

# The layers of the tree (.dependency-cruiser.cjs): which folder may import which, and no circles of imports.
layers: $(INSTALLED) ## Check the import rules between the tree's layers (dependency-cruiser)
	node_modules/.bin/depcruise server generated client/src --config .dependency-cruiser.cjs --output-type err

typecheck: $(INSTALLED) ## Strict type check of everything, and of the client as browser code
	node_modules/.bin/tsc --noEmit
	node_modules/.bin/tsc --noEmit -p client/tsconfig.json
	node_modules/.bin/tsc --noEmit -p client/tsconfig.node.json

build: $(BUILT) ## Compile the server to dist/ (when a source changed)

client: $(INSTALLED) ## Build the client package and pack it (client/user-records-client-*.tgz)
	cd client && npm pack --silent

# Not echoed: the line holds the password. `exec` leaves no shell between make and the server, so the SIGTERM
# make passes on reaches it (npm start execs node in turn); Ctrl-C reaches the whole process group anyway.
# The development password goes along unless the environment gives BASIC_AUTH_PASSWORD_HASH (the server takes
# exactly one of them); the hash passes through from the environment untouched.
# USERS_FILE (make run USERS_FILE=users.json): the users a new store starts with, instead of the demo users.
# The settings file (.env, or the file ENV_FILE names; ENV_FILE= none) is read by the server itself, and fills
# what the environment leaves unset: a development default of this Makefile is passed on only when neither the
# command line nor the environment gives the setting and the file does not (docs/operations.md, Settings).
SETTINGS_FILE = $(if $(filter undefined,$(origin ENV_FILE)),.env,$(ENV_FILE))
in_settings_file = $(if $(SETTINGS_FILE),$(shell grep -sqE '^[[:space:]]*(export[[:space:]]+)?$(1)[[:space:]]*=' '$(SETTINGS_FILE)' && echo yes))
default = $(if $(and $(filter file,$(origin $(1))),$(call in_settings_file,$(1))),,$(1)='$($(1))')
USERS = $(if $(USERS_FILE),USERS_FILE='$(USERS_FILE)')
WITH_PASSWORD = $(if $(or $(call in_settings_file,BASIC_AUTH_PASSWORD_HASH),$(if $(call default,BASIC_AUTH_PASSWORD),,yes)),:,\
	if [ -z "$$BASIC_AUTH_PASSWORD_HASH" ]; then export $(call default,BASIC_AUTH_PASSWORD); fi)
DEVELOPMENT = $(WITH_PASSWORD); $(call default,BASIC_AUTH_USERNAME) $(USERS) $(call default,PORT) $(call default,DATABASE_URL)
run: build ## Start the server on SQLite with demo data (http://127.0.0.1:3000)
	@$(DEVELOPMENT) exec npm start --silent

# The server as make run starts it, built again and restarted on every change (scripts/dev.mjs), with readable
# log lines on a terminal (pino-pretty, a development dependency).
dev: $(INSTALLED) ## make run, rebuilt and restarted on every change of server/ or generated/ (readable logs on a terminal)
	@$(DEVELOPMENT) exec node scripts/dev.mjs

# The operator's commands (docs/deployment.md), on the Node this Makefile runs (the machine's own from 22 on, or
# the pinned one): the service as in production, with the environment's settings and no development defaults;
# and its tools, on the store DATABASE_URL names (make run's by default).
start: build ## Start the server as in production, with the environment's settings alone (docs/operations.md)
	exec npm start --silent

migrate: build ## Bring the schema of the store DATABASE_URL names up to date, and exit
	@$(call default,DATABASE_URL) npm run --silent migrate

backup: build ## Back up the SQLite store DATABASE_URL names into FILE (make backup FILE=backups/users.sqlite)
	$(if $(FILE),,$(error name the backup: make backup FILE=backups/users.sqlite))
	@$(call default,DATABASE_URL) npm run --silent backup -- '$(FILE)'

restore: build ## Restore the backup FILE into the SQLite store DATABASE_URL names, the service stopped (NEXT_ID=N: a lost store)
	$(if $(FILE),,$(error name the backup: make restore FILE=backups/users.sqlite))
	@$(call default,DATABASE_URL) npm run --silent restore -- '$(FILE)' $(if $(NEXT_ID),--next-id='$(NEXT_ID)')

# Its standard output is the hash alone (BASIC_AUTH_PASSWORD_HASH="$$(printf %s '…' | make -s hash-password)"):
# what installing and building print goes to standard error.
hash-password: ## Print the hash for BASIC_AUTH_PASSWORD_HASH of the password on standard input
	@$(MAKE) --no-print-directory -s build >&2
	@npm run --silent hash-password

# The mock serves the sandbox variant: the same controls as the sandbox (Prefer, delay, the reset), so that a
# frontend's tests switch between them by base URL alone.
mock: $(INSTALLED) ## Prism mock of the contract's sandbox variant (http://127.0.0.1:4010, MOCK_PORT; MOCK_DYNAMIC=1: generated data)
	exec node_modules/.bin/prism mock generated/user-records.sandbox.yaml -h 127.0.0.1 -p $(MOCK_PORT) $(if $(MOCK_DYNAMIC),--dynamic)

# The real service on an in-memory SQLite store: every start (and every POST /__sandbox/reset) is the demo data.
sandbox: build ## The real service on an in-memory store with test controls (http://127.0.0.1:4011, SANDBOX_PORT)
	@$(WITH_PASSWORD); BASIC_AUTH_USERNAME='$(BASIC_AUTH_USERNAME)' $(USERS) \
	PORT='$(SANDBOX_PORT)' DATABASE_URL='sqlite::memory:' SANDBOX=true SANDBOX_LATENCY_MS='$(SANDBOX_LATENCY_MS)' \
	exec npm start --silent

test: check-generated contract-gate lint layers typecheck build chromium container-tools compose-tools deploy-tools fault-tools ## Every check: generated code, contract lint, types, unit, component, contract, client, process and browser tests
	NODE_OPTIONS=--experimental-vm-modules node_modules/.bin/jest $(JEST_FLAGS)

bench: $(INSTALLED) build deploy-tools fault-tools ## Benchmarks (not tests): this service beside its ceilings and peers; results in bench/results/
	node bench/run.mjs
	node bench/ablation.mjs
	node bench/large-list.mjs
	node bench/searches.mjs
	node bench/search-interference.mjs
	node bench/kit.mjs
	ROLLING_RESTART_REPORT=bench/results/rolling-restart.md NODE_OPTIONS=--experimental-vm-modules \
	  node_modules/.bin/jest tests/system/topology.test.ts -t 'rolling restart'

# The list audit of make test, on 1,000,000 users per store (about 15 minutes): every combination of list
# parameters timed, the table in bench/results/list-audit-{sqlite,postgres}.md.
AUDIT_USERS ?= 1000000
audit-lists: $(INSTALLED) build ## Time every list parameter combination on 1,000,000 users per store (AUDIT_USERS)
	LIST_AUDIT_USERS=$(AUDIT_USERS) LIST_AUDIT_REPORT=bench/results/list-audit NODE_OPTIONS=--experimental-vm-modules \
	  node_modules/.bin/jest tests/system/list-cost-audit.test.ts

clean: ## Remove build output and local databases
	rm -rf dist data .tools
