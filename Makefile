# Every target sets up what it needs: a fresh machine only needs python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# `make run` installs only the local run's packages (requirements-run.txt); `make test` adds the
# tests', benchmarks', models' and template checks' (requirements-dev.txt).
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed

.PHONY: run doctor test test-models bench clean setup package deploy

# Deployment (docs/deploy.md): make package; make deploy STACK=name [PARAMS="Param=Value ..."]
STACK ?= butai-prod
CHALICE_STAGE ?= prod
PARAMS ?=

setup: $(STAMP)

$(RUN_STAMP): requirements-pip.txt requirements.txt requirements-run.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-pip.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile -r requirements-run.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP) requirements-dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(STAMP)

# One switch for a local model (docs/models.md): make run MODEL_URL=http://127.0.0.1:11434/v1 MODEL=qwen2.5:7b
MODEL_URL ?= $(BUTAI_MODEL_URL)
MODEL ?= $(BUTAI_MODEL)

run: $(RUN_STAMP)
	BUTAI_MODEL_URL='$(MODEL_URL)' BUTAI_MODEL='$(MODEL)' exec $(BIN)/butai run

doctor: $(RUN_STAMP)
	BUTAI_MODEL_URL='$(MODEL_URL)' BUTAI_MODEL='$(MODEL)' $(BIN)/butai doctor

# The real-model tests (-m models) belong to `make test-models`: where its packages are installed they would
# otherwise run twice.
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile -m "not models" $(PYTEST_ARGS)

# The classifier and free conversation against a real llama.cpp server (docs/models.md).  The first
# install compiles llama.cpp (about 9 minutes on 2 cores); pip keeps the wheel for the next runs.
# LLAVA_BUILD=OFF leaves out the multimodal library (51 of 193 objects), which text models never load.
MODELS_STAMP := $(VENV)/.installed-models

$(MODELS_STAMP): $(STAMP) requirements-models.txt
	CMAKE_ARGS="-DLLAVA_BUILD=OFF $$CMAKE_ARGS" $(BIN)/python -m pip install --quiet -r requirements-models.txt
	touch $(MODELS_STAMP)

test-models: $(MODELS_STAMP)
	BUTAI_REQUIRE_MODEL_SERVER=1 $(BIN)/python -m pytest -p no:xdist -m models tests/llm $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/butai bench stage
	$(BIN)/butai bench rules
	$(BIN)/butai bench turn
	$(BIN)/butai bench coldstart

# Packaging and deploying have a virtualenv of their own (requirements-package.txt: the runtime's packages,
# chalice, cfn-lint, the SAM translator; ~280 MB, no torch), so an operator's machine needs neither the tests'
# nor the models' packages.
PACKAGE_VENV := .venv-package
PACKAGE_BIN := $(PACKAGE_VENV)/bin
PACKAGE_STAMP := $(PACKAGE_VENV)/.installed

$(PACKAGE_STAMP): requirements-pip.txt requirements.txt requirements-package.txt pyproject.toml
	test -x $(PACKAGE_BIN)/python || $(PYTHON) -m venv $(PACKAGE_VENV)
	$(PACKAGE_BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-pip.txt
	$(PACKAGE_BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile -r requirements-package.txt
	$(PACKAGE_BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(PACKAGE_STAMP)

package: $(PACKAGE_STAMP)
	BUTAI_VENV_BIN=$(PACKAGE_BIN) infra/package.sh $(CHALICE_STAGE) build/package

deploy: package
	BUTAI_VENV_BIN=$(PACKAGE_BIN) BUTAI_PACKAGE_DIR=build/package infra/deploy.sh all $(STACK) $(PARAMS)

clean:
	rm -rf $(VENV) $(PACKAGE_VENV) .butai test-output build
