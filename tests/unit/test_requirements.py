"""pyproject.toml and the pinned requirements files name the same packages, layer by layer:
dependencies = requirements.txt (the Lambda zip), local = requirements-run.txt (`make run`),
test = requirements-dev.txt (`make test`), package = requirements-package.txt (`make package`, `make deploy`)."""
import re
import tomllib

from tests.conftest import ROOT


def _name(spec: str) -> str:
    return re.split(r"[\[<>=!~; ]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pinned(file: str, *, own_only: bool = False) -> set[str]:
    names = set()
    for line in (ROOT / file).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-r "):
            if not own_only:
                names |= _pinned(line[3:].strip())
            continue
        assert "==" in line, f"{file}: {line!r} is not pinned"
        names.add(_name(line))
    return names


def test_each_extra_names_what_its_requirements_file_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert {_name(d) for d in project["dependencies"]} <= _pinned("requirements.txt")
    assert {_name(d) for d in extras["local"]} == _pinned("requirements-run.txt", own_only=True)
    assert {_name(d) for d in extras["test"]} <= _pinned("requirements-dev.txt")
    assert _pinned("requirements-dev.txt", own_only=True) <= {_name(d) for d in extras["test"]}
    assert {_name(d) for d in extras["voice"]} == _pinned("requirements-voice.txt", own_only=True)
    assert {_name(d) for d in extras["package"]} == _pinned("requirements-package.txt", own_only=True)


def test_the_voice_is_an_extra_nothing_else_installs():
    voice = _pinned("requirements-voice.txt", own_only=True)
    for file in ("requirements.txt", "requirements-run.txt", "requirements-dev.txt"):
        assert not _pinned(file) & (voice - {"numpy", "packaging"}), file


def test_the_local_run_installs_no_test_model_or_template_tooling():
    run = _pinned("requirements-run.txt")
    assert not run & {"torch", "transformers", "tokenizers", "cfn-lint", "pytest", "hypothesis", "playwright"}
    assert "server" not in (ROOT / "requirements-run.txt").read_text().split("moto[", 1)[1].split("]")[0]


def test_packaging_installs_the_runtime_and_the_template_tools_only():
    # `make package` has its own virtualenv: 278 MB measured, against 1.7 GB for the development one (torch).
    package = _pinned("requirements-package.txt")
    assert _pinned("requirements.txt") <= package
    assert {"chalice", "cfn-lint", "aws-sam-translator"} <= package
    assert not package & {"torch", "transformers", "tokenizers", "pytest", "hypothesis", "playwright", "moto",
                          "numpy", "mypy", "ruff", "llama-cpp-python"}
    # the same versions as the development virtualenv's, so both build the same package
    dev = {}
    for file in ("requirements-dev.txt", "requirements-run.txt"):
        for line in (ROOT / file).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if "==" in line:
                dev[_name(line)] = line.split("==", 1)[1]
    for line in (ROOT / "requirements-package.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            assert dev[_name(line)] == line.split("==", 1)[1], line


def test_llama_cpp_is_built_for_any_x86_64_and_never_taken_from_pips_cache():
    # A native build (the default) on a CPU with AMX crashed on its first request; pip's wheel cache keys a
    # built wheel by its source only, so it would hand back a native build made elsewhere or earlier.
    makefile = (ROOT / "Makefile").read_text()
    assert "LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF" in makefile
    assert "pip wheel --quiet --no-cache-dir --no-deps" in makefile
    assert "--find-links '$(LLAMA_WHEELS)' --only-binary llama-cpp-python" in makefile
    assert "native-off" in makefile.split("LLAMA_WHEELS ?=", 1)[1].splitlines()[0]
