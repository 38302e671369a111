# One target per habit. `make run` and `make test` are all a fresh machine needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

PORT ?= 8000

.PHONY: install run test lint bench footprint pg-up chromium clean

WEB := src/loomdb/server/static/app/index.html
# the page's JSDoc types, generated from the API's /openapi.json (gitignored)
TYPES := web/src/lib/types.js

CLIENTS := tests/clients/node_modules/.package-lock.json

install: $(STAMP) $(WEB) $(TYPES) $(CLIENTS) chromium

# the coding agents the gateway's tests drive (Codex, pi), from the lockfile, offline after
$(CLIENTS): tests/clients/package.json tests/clients/package-lock.json
	cd tests/clients && npm ci --no-audit --no-fund --loglevel=error

# the web app: Svelte components built by Vite from the lockfile (npm ci) into the package
$(WEB): web/package.json web/package-lock.json web/vite.config.js web/svelte.config.js web/index.html $(shell find web/src -type f 2>/dev/null)
	cd web && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent

$(TYPES): $(STAMP) $(WEB) web/scripts/types.mjs web/scripts/openapi.py $(shell find src/loomdb/server -name '*.py')
	$(PY) web/scripts/openapi.py > web/openapi.json
	node web/scripts/types.mjs web/openapi.json $@

# the browser tests drive Debian's Chromium (never a downloaded browser build)
chromium:
	@command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all,test]'
	rm -f $(VENV)/.installed-*
	touch $@

run: install
	$(PY) -m loomdb.demo --db .loomdb-demo
	@echo "loomdb: open http://127.0.0.1:$(PORT)/ (Ctrl-C stops the server)"
	$(PY) -m loomdb --db .loomdb-demo serve --port $(PORT)

pg-up:
	@pg_isready -q -h 127.0.0.1 -p 5432 || \
	  pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start
	@for i in $$(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done; \
	  pg_isready -q -h 127.0.0.1 -p 5432 || \
	  (echo "PostgreSQL is not reachable on 127.0.0.1:5432" >&2; exit 1)
	@# search ranks from a RUM index where Debian's extension package is installed
	@v=$$(ls /etc/postgresql); test -f /usr/share/postgresql/$$v/extension/rum.control || \
	  apt-get install -y -q postgresql-$$v-rum >/dev/null 2>&1 || \
	  (apt-get update -q >/dev/null && apt-get install -y -q postgresql-$$v-rum >/dev/null)

test: install pg-up
	cd web && npm test --silent
	$(PY) -m pytest -n 2 --dist loadgroup -q --durations=60

lint: install
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m mypy src
	$(VENV)/bin/lint-imports
	cd web && npm run check --silent

bench: install pg-up
	$(PY) benchmarks/bench_core.py
	$(PY) benchmarks/bench_peers.py
	$(PY) benchmarks/bench_models.py
	$(PY) benchmarks/bench_buffer.py
	$(PY) benchmarks/bench_import.py
	$(PY) benchmarks/bench_postgres.py
	$(PY) benchmarks/bench_tokens.py
	$(PY) benchmarks/bench_http.py
	$(PY) benchmarks/bench_cli.py
	$(PY) benchmarks/bench_search.py --model
	$(PY) benchmarks/footprint.py $(VENV) tests/clients/node_modules

# the size of the environment `make install` built: what `pip install 'loomdb[all]'`
# brings, and the test tools (the test extra, the npm clients) counted apart
footprint: install
	$(PY) benchmarks/footprint.py $(VENV) tests/clients/node_modules

clean:
	rm -rf $(VENV) .loomdb .loomdb-demo .pytest_cache .hypothesis
