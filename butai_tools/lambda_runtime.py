"""The Lambda runtime both functions are packaged for, and its interpreter on this machine.

The template's ``Runtime`` and ``Architectures``, the wheels `infra/package.sh` installs, the checks of
the package's native modules and the packaged-zip test all read these facts from here.

Python 3.12 on x86_64 (docs/deploy.md says why): the python3.12 runtime runs on Amazon Linux 2023,
whose glibc is 2.34, so a wheel built for glibc 2.34 or older loads there (SudachiPy's need 2.28;
the python3.11 runtime, Amazon Linux 2 with glibc 2.26, could not load them).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from . import env

PYTHON = "3.12"
RUNTIME = f"python{PYTHON}"
ABI = "cp" + PYTHON.replace(".", "")
# Lambda's name for the architecture, and the machine name wheels and extension modules carry.
ARCHITECTURE = "x86_64"
MACHINE = {"x86_64": "x86_64", "arm64": "aarch64"}[ARCHITECTURE]
# Amazon Linux 2023's glibc: the newest symbol version a native module may need.
GLIBC = (2, 34)
# The oldest perennial manylinux tag pip is offered; manylinux2014 (= 2.17) brings the older aliases.
_OLDEST_GLIBC_MINOR = 17
# Where Lambda unpacks the package.
TASK_ROOT = "/var/task"
# Set to an interpreter of the runtime's version when it is not found on its own.
PYTHON_VAR = env.LAMBDA_PYTHON


def pip_platforms() -> list[str]:
    """pip's `--platform` values for the runtime: every manylinux glibc up to the runtime's.

    pip takes each value literally (a manylinux_2_34 wheel matches only that tag), so every older glibc
    is listed too."""
    platforms = [f"manylinux_{GLIBC[0]}_{minor}_{MACHINE}" for minor in range(_OLDEST_GLIBC_MINOR, GLIBC[1] + 1)]
    return platforms + [f"manylinux2014_{MACHINE}"]


def extension_suffixes() -> tuple[str, ...]:
    """The file endings the runtime's interpreter imports extension modules from."""
    return (f".cpython-{ABI[2:]}-{MACHINE}-linux-gnu.so", ".abi3.so", ".so")


def _version_of(python: str) -> str | None:
    try:
        out = subprocess.run([python, "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _candidates() -> list[str]:
    found = []
    if os.environ.get(PYTHON_VAR):
        found.append(os.environ[PYTHON_VAR])
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    if pyenv.is_dir():
        versions = sorted(pyenv.glob(f"{PYTHON}.*"), key=lambda p: [int(x) for x in p.name.split(".") if x.isdigit()])
        found += [str(v / "bin" / f"python{PYTHON}") for v in reversed(versions)]
    on_path = shutil.which(f"python{PYTHON}")
    if on_path:
        found.append(on_path)
    return found


def find_python() -> str | None:
    """An interpreter of the runtime's version on this machine (BUTAI_LAMBDA_PYTHON, pyenv's, then PATH's).

    Only the bytecode the package ships and the packaged-zip test need it: the wheels are chosen by tag,
    whatever Python runs the packaging."""
    for candidate in _candidates():
        if _version_of(candidate) == PYTHON:
            return candidate
    return None


def main(argv: list[str] | None = None) -> int:
    import sys
    args = sys.argv[1:] if argv is None else argv
    if args == ["python"]:
        python = find_python()
        if python is None:
            sys.stderr.write(f"no Python {PYTHON} here (the {RUNTIME} runtime's version): install it, e.g. "
                             f"`pyenv install {PYTHON}`, or set {PYTHON_VAR} to one\n")
            return 1
        print(python)
        return 0
    if args == ["runtime"]:
        print(RUNTIME, ARCHITECTURE)
        return 0
    sys.stderr.write("usage: python -m butai_tools.lambda_runtime python|runtime\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
