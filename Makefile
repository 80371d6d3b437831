# Chipwise: `make demo` and `make test` are the two set-up commands; each builds .venv on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
SRC    := shared/chipwise functions tests benchmarks

.PHONY: demo test lint bench browser clean build-ChipwiseLayer

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[demo]'
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.demo-installed

## demo: run the whole pipeline on the embedded AWS emulator and SQLite; artifacts in ./chipwise-demo/
demo: $(VENV)/.demo-installed
	$(BIN)/chipwise demo

## lint: ruff (lint + format check) and mypy (strict on shared/chipwise)
lint: $(VENV)/.dev-installed
	$(BIN)/ruff check $(SRC)
	$(BIN)/ruff format --check $(SRC)
	$(BIN)/mypy

## browser: headless Chromium (Debian's) for the browser tests, installed when missing
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian chromium for the browser tests"; \
	  (apt-get update -qq && apt-get install -y -qq chromium chromium-driver) >/dev/null; }

## test: the gates (ruff, mypy) and the whole suite; PostgreSQL too when CHIPWISE_TEST_DATABASE_URL is set
test: $(VENV)/.dev-installed browser lint
	$(BIN)/pytest -n 2 --dist loadfile -q

## bench: performance figures (ratios against a baseline run in the same process)
bench: $(VENV)/.dev-installed
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) chipwise-demo chipwise.db .pytest_cache .mypy_cache .ruff_cache

## build-ChipwiseLayer: called by `sam build` (iac/template.yaml, BuildMethod makefile) with ARTIFACTS_DIR set
build-ChipwiseLayer:
	$(PYTHON) -m pip install --quiet --target "$(ARTIFACTS_DIR)/python" .
	cp -r templates "$(ARTIFACTS_DIR)/python/chipwise/templates"
