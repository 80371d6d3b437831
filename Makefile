# Chipwise: `make demo` and `make test` are the two set-up commands; each builds .venv on a fresh machine.
PYTHON ?= python3
comma  := ,
VENV   := .venv
BIN    := $(VENV)/bin
SRC    := shared/chipwise devkit functions tests benchmarks

.PHONY: demo test lint imports bench browser clean build-ChipwiseLayer layer-constraints sam-cli checkov

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.demo-installed: pyproject.toml devkit/pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[cli,demo]' -e devkit
	touch $@

$(VENV)/.dev-installed: pyproject.toml devkit/pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[cli,dev]' -e devkit
	touch $@ $(VENV)/.demo-installed

## demo: run the whole pipeline on the embedded AWS emulator and SQLite; artifacts in ./chipwise-demo/
demo: $(VENV)/.demo-installed
	$(BIN)/chipwise demo

## lint: ruff (lint + format check), mypy (strict on shared/chipwise) and the import contracts (the handlers' too)
lint: $(VENV)/.dev-installed imports
	$(BIN)/ruff check $(SRC)
	$(BIN)/ruff format --check $(SRC)
	$(BIN)/mypy

## imports: the import contracts (pyproject.toml) on the package, and the same on the handlers (functions/*/app.py)
imports: $(VENV)/.dev-installed
	$(BIN)/lint-imports
	$(BIN)/python -m chipwise_devkit.handler_imports functions

## browser: headless Chromium for the browser tests: installed with apt on Debian as root, otherwise says how
browser:
	@if [ -n "$$CHIPWISE_CHROMIUM" ] || [ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1 \
	  || command -v chromium-browser >/dev/null 2>&1 || command -v google-chrome >/dev/null 2>&1; then \
	  true; \
	elif [ -f /etc/debian_version ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian chromium for the browser tests"; \
	  (apt-get update -qq && apt-get install -y -qq chromium chromium-driver) >/dev/null; \
	else \
	  echo "no Chromium: the browser tests will be skipped. Install one (Debian/Ubuntu: sudo apt-get install chromium;"; \
	  echo "macOS: brew install --cask chromium) and, if it is not on PATH, set CHIPWISE_CHROMIUM=/path/to/chromium"; \
	fi

## test: the gates (ruff, mypy) and the whole suite; PostgreSQL too when CHIPWISE_TEST_DATABASE_URL is set
test: $(VENV)/.dev-installed browser lint
	$(BIN)/pytest -n 2 --dist loadfile -q

## bench: performance figures (ratios against a baseline run in the same process)
bench: $(VENV)/.dev-installed
	$(BIN)/python -m benchmarks

## sam-cli, checkov: the AWS SAM CLI and checkov, each in its own venv under .venv/ (their pins clash with the dev
## tools'); the slow tests in tests/iac install them when missing
SAM     := $(VENV)/sam/bin/sam
CHECKOV := $(VENV)/checkov/bin/checkov
$(SAM):
	$(PYTHON) -m venv $(VENV)/sam
	$(VENV)/sam/bin/pip install --quiet 'aws-sam-cli>=1.120,<2'
$(CHECKOV):
	$(PYTHON) -m venv $(VENV)/checkov
	$(VENV)/checkov/bin/pip install --quiet 'checkov>=3.2,<4'
sam-cli: $(SAM)

## checkov: the templates' security checks (iac/checkov.yaml; what is skipped and why: iac/README.md)
checkov: $(CHECKOV)
	CKV_SKIP_PACKAGE_UPDATE_CHECK=true BC_SKIP_MAPPING=TRUE $(CHECKOV) --config-file iac/checkov.yaml

clean:
	rm -rf $(VENV) chipwise-demo chipwise.db .pytest_cache .mypy_cache .ruff_cache

## build-ChipwiseLayer: called by `sam build` (iac/template.yaml, BuildMethod makefile) with ARTIFACTS_DIR set.
## The runtime only (pyproject's `dependencies`, pinned by iac/layer-constraints.txt) as wheels for the functions'
## architecture and Python whatever the host (LAYER_ARCH=x86_64 builds for x86_64), templates/ inside, botocore's
## models for the services Chipwise calls only, and bytecode compiled ahead (Lambda cannot write it at run time):
## chipwise keeps its sources beside it, its dependencies ship as bytecode alone (iac/README.md says why).
LAYER_ARCH           ?= arm64
LAYER_PYTHON_VERSION := 3.11
LAYER_PLATFORM       := manylinux2014_$(if $(filter arm64,$(LAYER_ARCH)),aarch64,$(if $(filter x86_64,$(LAYER_ARCH)),x86_64,$(error LAYER_ARCH must be arm64 or x86_64)))
LAYER_BUILD_PYTHON   ?= $(shell command -v python$(LAYER_PYTHON_VERSION) || command -v $(PYTHON))
# Every service a client is made for (chipwise.aws.AwsContext.client, boto3.client), and X-Ray (Powertools' Tracer
# makes its own client): tests/iac keeps this in step.
BOTOCORE_SERVICES    := application-autoscaling athena autoscaling batch bedrock ce cloudwatch ec2 ecs eks events glue iam organizations pricing s3 sagemaker savingsplans scheduler secretsmanager sesv2 sqs ssm sts xray
# $(call chipwise_wheel,DIR): the chipwise wheel into DIR, built from a clean copy of the sources (no stale build/)
chipwise_wheel = mkdir -p "$(1)/.src" \
	&& tar -cf - --exclude=__pycache__ --exclude='*.egg-info' pyproject.toml README.md shared | tar -xf - -C "$(1)/.src" \
	&& $(LAYER_BUILD_PYTHON) -m pip wheel --quiet --no-deps --wheel-dir "$(1)" "$(1)/.src" && rm -rf "$(1)/.src"

build-ChipwiseLayer:
	@test -n "$(ARTIFACTS_DIR)" || { echo "ARTIFACTS_DIR is not set (sam build sets it)"; exit 2; }
	@$(LAYER_BUILD_PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != ($(subst .,$(comma),$(LAYER_PYTHON_VERSION))))' \
	  || { echo "the layer's bytecode needs Python $(LAYER_PYTHON_VERSION): put python$(LAYER_PYTHON_VERSION) on PATH or set LAYER_BUILD_PYTHON"; exit 2; }
	rm -rf "$(ARTIFACTS_DIR)/python" "$(ARTIFACTS_DIR)/.wheel"
	$(call chipwise_wheel,$(ARTIFACTS_DIR)/.wheel)
	$(LAYER_BUILD_PYTHON) -m pip install --quiet --no-compile --no-warn-conflicts --target "$(ARTIFACTS_DIR)/python" \
	  --platform $(LAYER_PLATFORM) --implementation cp --python-version $(LAYER_PYTHON_VERSION) --only-binary=:all: \
	  --constraint iac/layer-constraints.txt "$(ARTIFACTS_DIR)"/.wheel/chipwise-*.whl
	rm -rf "$(ARTIFACTS_DIR)/.wheel" "$(ARTIFACTS_DIR)/python/bin" "$(ARTIFACTS_DIR)/python/chipwise/cli"
	cp -R templates "$(ARTIFACTS_DIR)/python/chipwise/templates"
	cd "$(ARTIFACTS_DIR)/python/botocore/data" && for service in */; do \
	  case " $(BOTOCORE_SERVICES) " in *" $${service%/} "*) ;; *) rm -rf "$$service" ;; esac; done
	cd "$(ARTIFACTS_DIR)/python" && $(LAYER_BUILD_PYTHON) -m compileall -q -j 0 --invalidation-mode unchecked-hash chipwise \
	  && $(LAYER_BUILD_PYTHON) -m compileall -q -j 0 -b -d /opt/python -x '^\./chipwise/' . \
	  && find . -name '*.py' ! -path './chipwise/*' -delete

## layer-constraints: re-pin iac/layer-constraints.txt to the newest releases pyproject's `dependencies` allow that
## have wheels for the layer's platform (run after changing `dependencies`; review the diff, then `sam build`)
layer-constraints:
	rm -rf build/layer-pins
	$(call chipwise_wheel,build/layer-pins)
	{ echo "# The layer's runtime, pinned: \`make layer-constraints\` writes this from pyproject's dependencies ($(LAYER_PLATFORM), cp$(subst .,,$(LAYER_PYTHON_VERSION)))."; \
	  $(LAYER_BUILD_PYTHON) -m pip install --quiet --dry-run --ignore-installed --report - --target build/layer-pins/target \
	    --platform $(LAYER_PLATFORM) --implementation cp --python-version $(LAYER_PYTHON_VERSION) --only-binary=:all: \
	    build/layer-pins/chipwise-*.whl \
	  | $(LAYER_BUILD_PYTHON) -c 'import json, re, sys; print(*sorted(re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower() + "==" + i["metadata"]["version"] for i in json.load(sys.stdin)["install"] if i["metadata"]["name"] != "chipwise"), sep="\n")'; \
	} > iac/layer-constraints.txt.new
	mv iac/layer-constraints.txt.new iac/layer-constraints.txt
	rm -rf build/layer-pins && rmdir build 2>/dev/null || true
