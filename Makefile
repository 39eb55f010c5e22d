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
# install compiles llama.cpp (about 9 minutes on 2 cores) into a wheel kept for the next installs.
# LLAVA_BUILD=OFF leaves out the multimodal library (51 of 193 objects), which text models never load.
# GGML_NATIVE=OFF builds for x86-64 with AVX2, FMA and F16C (any x86-64 machine since 2013) instead of
# for the CPU that compiles it: a native build on a CPU with AMX crashed on its first request (a general
# protection fault in libggml-cpu), and a wheel built natively fits only the CPU it was built on.  pip's
# own wheel cache keys a wheel by its source alone, so it would hand back a native build made with other
# flags: the wheel is built without it, into a folder named after the version and the flags, and installed
# from there only (--only-binary: never compiled again by pip with other flags).  The wheel loads llama.cpp
# through ctypes (py3-none-linux_x86_64): one build serves every Python 3 on the machine.
MODELS_STAMP := $(VENV)/.installed-models
LLAMA_CPP := $(shell sed -n 's/^\(llama-cpp-python\)\[[a-z]*\]==\([0-9.]*\).*/\1==\2/p' requirements-models.txt)
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF
LLAMA_WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/butai/wheels/$(subst ==,-,$(LLAMA_CPP))-llava-off-native-off

$(MODELS_STAMP): $(STAMP) requirements-models.txt
	test -n "$$(ls '$(LLAMA_WHEELS)'/llama_cpp_python-*.whl 2>/dev/null)" || \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS) $$CMAKE_ARGS" $(BIN)/python -m pip wheel --quiet --no-cache-dir --no-deps \
	    -w '$(LLAMA_WHEELS)' '$(LLAMA_CPP)'
	$(BIN)/python -m pip install --quiet --find-links '$(LLAMA_WHEELS)' --only-binary llama-cpp-python \
	  -r requirements-models.txt
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
