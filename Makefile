# Every target sets up what it needs: a fresh machine only needs python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run doctor test test-models bench clean setup package deploy

# Deployment (docs/deploy.md): make package; make deploy STACK=name [PARAMS="Param=Value ..."]
STACK ?= butai-prod
CHALICE_STAGE ?= prod
PARAMS ?=

setup: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# One switch for a local model (docs/models.md): make run MODEL_URL=http://127.0.0.1:11434/v1 MODEL=qwen2.5:7b
MODEL_URL ?= $(BUTAI_MODEL_URL)
MODEL ?= $(BUTAI_MODEL)

run: $(STAMP)
	BUTAI_MODEL_URL='$(MODEL_URL)' BUTAI_MODEL='$(MODEL)' exec $(BIN)/butai run

doctor: $(STAMP)
	BUTAI_MODEL_URL='$(MODEL_URL)' BUTAI_MODEL='$(MODEL)' $(BIN)/butai doctor

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile $(PYTEST_ARGS)

# The classifier and free conversation against a real llama.cpp server (docs/models.md).  The first
# install compiles llama.cpp (tens of minutes on 2 cores); pip keeps the wheel for the next runs.
MODELS_STAMP := $(VENV)/.installed-models

$(MODELS_STAMP): $(STAMP) requirements-models.txt
	$(BIN)/python -m pip install --quiet -r requirements-models.txt
	touch $(MODELS_STAMP)

test-models: $(MODELS_STAMP)
	BUTAI_REQUIRE_MODEL_SERVER=1 $(BIN)/python -m pytest -p no:xdist -m models tests/llm $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/butai bench stage
	$(BIN)/butai bench rules
	$(BIN)/butai bench turn

package: $(STAMP)
	infra/package.sh $(CHALICE_STAGE) build/package

deploy: package
	BUTAI_PACKAGE_DIR=build/package infra/deploy.sh all $(STACK) $(PARAMS)

clean:
	rm -rf $(VENV) .butai test-output build
