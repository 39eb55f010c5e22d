"""The Lambda functions' dependencies, as wheels for the runtime they run on, and the check of what ships.

``install`` asks pip for requirements.txt's wheels for the runtime's platform (lambda_runtime.py: the
Python version, the architecture, manylinux up to the runtime's glibc), whatever Python runs it, and
binary wheels only: a dependency without a wheel for that runtime fails the install, so a package
never ships without it (nor with a part that needs it, such as SudachiPy's dictionary without the
analyser).

``check`` reads a built package (the deployment zip, or a folder) and fails on anything the runtime
could not load:

- every distribution in requirements.txt at its pinned version, and none that is not pinned there;
- each wheel's tags: one of them fits the runtime (interpreter, ABI, manylinux glibc and machine);
- each native module (ELF shared object): the runtime's machine, 64-bit little-endian, an extension
  module's file ending for the runtime's Python, libraries the runtime has (or the package carries),
  and glibc symbol versions no newer than the runtime's.

    python -m butai_tools.lambda_deps install requirements.txt TARGET_DIR
    python -m butai_tools.lambda_deps check build/package/deployment.zip requirements.txt
"""
from __future__ import annotations

import argparse
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from butai_tools import lambda_runtime as rt

# What a manylinux wheel may link against on the system (the manylinux policies' libraries that Amazon
# Linux 2023's minimal image has); anything else must travel in the package (auditwheel's *.libs/).
SYSTEM_LIBRARIES = frozenset({
    "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libutil.so.1",
    "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
})
ELF_MACHINES = {"x86_64": 62, "aarch64": 183}

_SHT_DYNAMIC = 6
_SHT_GNU_VERNEED = 0x6FFFFFFE
_DT_NEEDED = 1
_GLIBC_VERSION = re.compile(r"GLIBC_(\d+)\.(\d+)")
_CPYTHON_SUFFIX = re.compile(r"\.cpython-(\d+)-([a-z0-9_]+)-linux-gnu\.so$")
_MANYLINUX = re.compile(r"manylinux_(\d+)_(\d+)_(\w+)$")
_LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


class InstallError(Exception):
    pass


# ---------------------------------------------------------------- install

def pip_command(requirements: Path, target: Path, extra: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--no-compile",                 # bytecode is compiled for the runtime's Python (bytecode.py)
            "--target", str(target), "--only-binary=:all:", "--implementation", "cp",
            "--python-version", rt.PYTHON, "--abi", rt.ABI,
            *[f"--platform={p}" for p in rt.pip_platforms()],
            *(extra or []), "-r", str(requirements)]


def install(requirements: Path, target: Path, extra: list[str] | None = None) -> None:
    """Installs the requirements' wheels for the runtime into ``target``; raises when one has none."""
    out = subprocess.run(pip_command(requirements, target, extra), capture_output=True, text=True)
    if out.returncode != 0:
        said = "\n".join(line for line in (out.stderr + out.stdout).splitlines() if "is ignored" not in line)
        raise InstallError(f"no wheel of every dependency in {requirements} for the {rt.RUNTIME} {rt.ARCHITECTURE} "
                           f"runtime (glibc {rt.GLIBC[0]}.{rt.GLIBC[1]}); pip said:\n{said.strip()}")
    # Console scripts, written for the packaging machine's interpreter: nothing in Lambda runs them.
    shutil.rmtree(target / "bin", ignore_errors=True)


# ---------------------------------------------------------------- reading a package

class _Package:
    """A deployment zip or an unpacked folder, read the same way."""

    def __init__(self, path: Path):
        self.path = path
        self._zip = zipfile.ZipFile(path) if path.is_file() else None

    def names(self) -> list[str]:
        if self._zip is not None:
            return [n for n in self._zip.namelist() if not n.endswith("/")]
        return [p.relative_to(self.path).as_posix() for p in self.path.rglob("*") if p.is_file()]

    def read(self, name: str) -> bytes:
        if self._zip is not None:
            return self._zip.read(name)
        return (self.path / name).read_bytes()

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def pinned(requirements: Path) -> dict[str, str]:
    """name -> version of every `name==version` line (extras dropped)."""
    pins = {}
    for raw in requirements.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "==" not in line or line.startswith("-"):
            raise ValueError(f"{requirements}: every runtime dependency is pinned with ==: {raw!r}")
        name, version = (part.strip() for part in line.split("==", 1))
        pins[canonical(name.split("[", 1)[0])] = version.split(";", 1)[0].strip()
    return pins


# ---------------------------------------------------------------- wheel tags

def glibc_of(platform: str) -> tuple[tuple[int, int], str] | None:
    """(glibc, machine) of a manylinux platform tag; None for any other platform."""
    for legacy, glibc in _LEGACY_MANYLINUX.items():
        if platform.startswith(legacy + "_"):
            return glibc, platform[len(legacy) + 1:]
    m = _MANYLINUX.match(platform)
    if m:
        return (int(m.group(1)), int(m.group(2))), m.group(3)
    return None


def tag_fits(tag: str) -> bool:
    """Whether one wheel tag (interpreter-abi-platform) loads on the runtime."""
    try:
        interpreter, abi, platform = tag.split("-")
    except ValueError:
        return False
    if platform != "any":
        found = glibc_of(platform)
        if found is None or found[1] != rt.MACHINE or found[0] > rt.GLIBC:
            return False
    minor = int(rt.PYTHON.split(".")[1])
    if abi == "none":
        return interpreter in ("py3", f"py3{minor}", rt.ABI) or (
            interpreter.startswith("py3") and interpreter[3:].isdigit() and int(interpreter[3:]) <= minor)
    if abi == "abi3":
        return interpreter.startswith("cp3") and interpreter[3:].isdigit() and int(interpreter[3:]) <= minor
    return abi == rt.ABI and interpreter == rt.ABI


# ---------------------------------------------------------------- native modules

@dataclass
class NativeModule:
    name: str
    machine: int
    needed: list[str] = field(default_factory=list)
    glibc: tuple[int, int] = (0, 0)      # the newest GLIBC_x.y symbol version it needs
    problems: list[str] = field(default_factory=list)


def _cstr(data: bytes, offset: int) -> str:
    end = data.index(b"\0", offset)
    return data[offset:end].decode("ascii", "replace")


def read_elf(name: str, data: bytes) -> NativeModule:
    """Machine, needed libraries and glibc versions of a shared object, from its section headers."""
    if data[:4] != b"\x7fELF":
        return NativeModule(name, 0, problems=[f"{name}: not an ELF file"])
    if data[4] != 2 or data[5] != 1:
        return NativeModule(name, 0, problems=[f"{name}: not a 64-bit little-endian ELF file"])
    machine, = struct.unpack_from("<H", data, 18)
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    module = NativeModule(name, machine)
    for _, sh_type, _, _, offset, size, link, info, _, _ in sections:
        strings = sections[link][4] if link < len(sections) else 0
        if sh_type == _SHT_DYNAMIC:
            for pos in range(offset, offset + size, 16):
                tag, value = struct.unpack_from("<qQ", data, pos)
                if tag == 0:
                    break
                if tag == _DT_NEEDED:
                    module.needed.append(_cstr(data, strings + value))
        elif sh_type == _SHT_GNU_VERNEED:
            pos = offset
            for _ in range(info):                       # sh_info: the number of Verneed entries
                _, count, _, aux, next_need = struct.unpack_from("<HHIII", data, pos)
                apos = pos + aux
                for _ in range(count):
                    _, _, _, vname, next_aux = struct.unpack_from("<IHHII", data, apos)
                    m = _GLIBC_VERSION.fullmatch(_cstr(data, strings + vname))
                    if m:
                        module.glibc = max(module.glibc, (int(m.group(1)), int(m.group(2))))
                    apos += next_aux
                if not next_need:
                    break
                pos += next_need
    return module


def _is_shared_object(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base.endswith(".so") or ".so." in base


def _check_native(module: NativeModule, shipped_libraries: set[str]) -> list[str]:
    problems = list(module.problems)
    if problems:
        return problems
    if module.machine != ELF_MACHINES[rt.MACHINE]:
        problems.append(f"{module.name}: built for ELF machine {module.machine}, not {rt.MACHINE}")
    if module.glibc > rt.GLIBC:
        problems.append(f"{module.name}: needs GLIBC_{module.glibc[0]}.{module.glibc[1]}, the runtime has "
                        f"{rt.GLIBC[0]}.{rt.GLIBC[1]}")
    missing = [lib for lib in module.needed if lib not in SYSTEM_LIBRARIES and lib not in shipped_libraries]
    if missing:
        problems.append(f"{module.name}: links {', '.join(missing)}, which neither the runtime nor the package has")
    base = module.name.rsplit("/", 1)[-1]
    bundled = ".libs/" in module.name or not base.endswith(".so")
    m = _CPYTHON_SUFFIX.search(base)
    if not bundled and m and (m.group(1) != rt.ABI[2:] or m.group(2) != rt.MACHINE):
        problems.append(f"{module.name}: an extension module for cpython-{m.group(1)} on {m.group(2)}, "
                        f"not the runtime's {rt.extension_suffixes()[0]}")
    return problems


# ---------------------------------------------------------------- the check

@dataclass
class Report:
    distributions: dict[str, str]                 # canonical name -> version, as shipped
    natives: list[NativeModule]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def _dist_infos(names: list[str]) -> Iterator[tuple[str, str, str]]:
    """(folder, canonical name, version) of every top-level *.dist-info folder."""
    seen = set()
    for name in names:
        top = name.split("/", 1)[0]
        if top.endswith(".dist-info") and top not in seen:
            seen.add(top)
            dist, _, version = top[:-len(".dist-info")].rpartition("-")
            yield top, canonical(dist), version


def check(package: Path, requirements: Path) -> Report:
    pins = pinned(requirements)
    source = _Package(package)
    try:
        names = source.names()
        problems: list[str] = []
        shipped: dict[str, str] = {}
        for folder, dist, version in _dist_infos(names):
            shipped[dist] = version
            if f"{folder}/WHEEL" in names:
                tags = [line.split(":", 1)[1].strip()
                        for line in source.read(f"{folder}/WHEEL").decode("utf-8").splitlines()
                        if line.startswith("Tag:")]
                if not any(tag_fits(t) for t in tags):
                    problems.append(f"{dist} {version}: no wheel tag fits {rt.RUNTIME} {rt.ARCHITECTURE} "
                                    f"(glibc {rt.GLIBC[0]}.{rt.GLIBC[1]}): {', '.join(tags) or 'none'}")
        for dist, version in pins.items():
            if dist not in shipped:
                problems.append(f"{dist}=={version} is in requirements.txt but not in the package")
            elif shipped[dist] != version:
                problems.append(f"{dist}: the package has {shipped[dist]}, requirements.txt pins {version}")
        for dist in sorted(set(shipped) - set(pins)):
            problems.append(f"{dist} {shipped[dist]} is in the package but not pinned in requirements.txt")
        libraries = [n for n in names if _is_shared_object(n)]
        shipped_libraries = {n.rsplit("/", 1)[-1] for n in libraries}
        natives = []
        for name in libraries:
            module = read_elf(name, source.read(name))
            natives.append(module)
            problems += _check_native(module, shipped_libraries)
    finally:
        source.close()
    return Report(shipped, natives, problems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m butai_tools.lambda_deps", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("install", help="the requirements' wheels for the runtime, into a folder")
    p.add_argument("requirements", type=Path)
    p.add_argument("target", type=Path)
    p = sub.add_parser("check", help="what a package ships against the runtime")
    p.add_argument("package", type=Path, help="the deployment zip or an unpacked folder")
    p.add_argument("requirements", type=Path)
    args = parser.parse_args(argv)
    if args.command == "install":
        try:
            install(args.requirements, args.target)
        except InstallError as exc:
            print(f"lambda_deps: {exc}", file=sys.stderr)
            return 1
        print(f"lambda_deps: wheels for {rt.RUNTIME} {rt.ARCHITECTURE} installed into {args.target}")
        return 0
    report = check(args.package, args.requirements)
    for problem in report.problems:
        print(f"lambda_deps: {problem}", file=sys.stderr)
    if not report.ok:
        print(f"lambda_deps: {args.package} would not load on {rt.RUNTIME} {rt.ARCHITECTURE}", file=sys.stderr)
        return 1
    newest = max((m.glibc for m in report.natives), default=(0, 0))
    print(f"lambda_deps: {len(report.distributions)} distributions as pinned, {len(report.natives)} native "
          f"modules for {rt.MACHINE}, newest glibc symbol {newest[0]}.{newest[1]} "
          f"(the runtime has {rt.GLIBC[0]}.{rt.GLIBC[1]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
