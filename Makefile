# Every target sets up what it needs: a fresh machine only needs python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# `make run` installs only the local run's packages (requirements-run.txt); `make test` adds the
# tests', benchmarks', models' and template checks' (requirements-dev.txt).
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed

.PHONY: run test bench clean setup package deploy

# Deployment (docs/deploy.md): make package; make deploy STACK=name [PARAMS="Param=Value ..."]
STACK ?= butai-prod
CHALICE_STAGE ?= prod
PARAMS ?=

setup: $(STAMP)

$(RUN_STAMP): requirements.txt requirements-run.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile -r requirements-run.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP) requirements-dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(STAMP)

run: $(RUN_STAMP)
	exec $(BIN)/butai run

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/butai bench stage
	$(BIN)/butai bench rules
	$(BIN)/butai bench turn
	$(BIN)/butai bench coldstart

package: $(STAMP)
	infra/package.sh $(CHALICE_STAGE) build/package

deploy: package
	BUTAI_PACKAGE_DIR=build/package infra/deploy.sh all $(STACK) $(PARAMS)

clean:
	rm -rf $(VENV) .butai test-output build
