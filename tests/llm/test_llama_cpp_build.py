"""The llama.cpp that `make test-models` installs is built for x86-64 in general, not for the CPU that compiled
it: a native build on a CPU with AMX crashed on its first request, and a native wheel fits only its CPU.
Its CPU library may use AVX2 (ymm registers), never AVX-512 (zmm) or AMX tiles."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.models

AMX = ("ldtilecfg", "tileloadd", "tdpbf16ps", "tdpbssd", "tilerelease")


def cpu_library() -> Path:
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        if os.environ.get("BUTAI_REQUIRE_MODEL_SERVER") == "1":
            pytest.fail("llama-cpp-python is not installed (make test-models installs it)")
        pytest.skip("llama-cpp-python is not installed (make test-models installs it)")
    found = sorted(Path(spec.origin).parent.glob("lib/libggml-cpu*.so"))
    assert found, f"no libggml-cpu in {Path(spec.origin).parent / 'lib'}"
    return found[0]


def test_the_cpu_library_uses_no_instruction_newer_than_avx2():
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) is not installed")
    code = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(cpu_library())], capture_output=True, text=True,
                          timeout=300, check=True).stdout
    assert "%ymm" in code                       # built with AVX2, not a plain scalar build
    assert "%zmm" not in code                   # no AVX-512
    assert not [op for op in AMX if f"\t{op}" in code or f" {op} " in code]

