"""butai_tools.lambda_deps: the runtime's wheels or nothing, and a package check that refuses what the
runtime could not load.  Real pip against folders of small wheels made here (no index), and real ELF
shared objects (this interpreter's extension modules) edited where a test needs another property."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from butai_tools import lambda_deps, lambda_runtime

PY = lambda_runtime.ABI                                     # cp312
PLATFORM = f"manylinux_2_17_{lambda_runtime.MACHINE}"


def _wheel(folder: Path, name: str, version: str, tag: str, files: dict[str, bytes] | None = None) -> Path:
    """A minimal wheel: the package's files, METADATA, WHEEL (with its tag) and RECORD."""
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}-{version}-{tag}.whl"
    info = f"{name}-{version}.dist-info"
    contents = {f"{name}/__init__.py": b"", **(files or {}),
                f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
                f"{info}/WHEEL": (f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: {'true' if tag.endswith('any') else 'false'}\n"
                                  f"Tag: {tag}\n").encode()}
    contents[f"{info}/RECORD"] = "".join(f"{n},,\n" for n in [*contents, f"{info}/RECORD"]).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for n, data in contents.items():
            archive.writestr(n, data)
    return path


def _requirements(tmp_path: Path, *pins: str) -> Path:
    path = tmp_path / "requirements.txt"
    path.write_text("# pinned\n" + "\n".join(pins) + "\n", encoding="utf-8")
    return path


def _install(tmp_path, wheels: Path, *pins: str) -> Path:
    target = tmp_path / "vendor"
    lambda_deps.install(_requirements(tmp_path, *pins), target,
                        ["--no-index", "--find-links", str(wheels), "--no-cache-dir"])
    return target


def test_the_wheels_for_the_runtime_are_installed(tmp_path):
    wheels = tmp_path / "wheels"
    _wheel(wheels, "plain", "1.0", "py3-none-any")
    _wheel(wheels, "native", "2.0", f"{PY}-{PY}-{PLATFORM}")
    _wheel(wheels, "native", "2.0", f"{PY}-{PY}-manylinux_2_39_{lambda_runtime.MACHINE}")   # newer glibc: not this
    target = _install(tmp_path, wheels, "plain==1.0", "native==2.0")
    assert (target / "plain" / "__init__.py").exists() and (target / "native" / "__init__.py").exists()
    tags = (target / "native-2.0.dist-info" / "WHEEL").read_text()
    assert PLATFORM in tags
    assert not list(target.rglob("__pycache__"))      # no bytecode of the packaging interpreter


@pytest.mark.parametrize("tag", [
    f"{PY}-{PY}-manylinux_2_39_{lambda_runtime.MACHINE}",      # needs a newer glibc than Amazon Linux 2023's
    f"cp311-cp311-{PLATFORM}",                                 # another Python
    f"{PY}-{PY}-manylinux_2_17_{'x86_64' if lambda_runtime.MACHINE == 'aarch64' else 'aarch64'}",   # other machine
    f"{PY}-{PY}-linux_{lambda_runtime.MACHINE}",               # not portable
])
def test_a_dependency_without_a_wheel_for_the_runtime_fails_the_install(tmp_path, tag):
    wheels = tmp_path / "wheels"
    _wheel(wheels, "plain", "1.0", "py3-none-any")
    _wheel(wheels, "native", "2.0", tag)
    with pytest.raises(lambda_deps.InstallError, match="native") as failed:
        _install(tmp_path, wheels, "plain==1.0", "native==2.0")
    assert lambda_runtime.RUNTIME in str(failed.value)
    # All or nothing: the dependency it could have installed is not there alone (no dead weight).
    assert not (tmp_path / "vendor" / "plain").exists()


@pytest.mark.parametrize(("tag", "fits"), [
    ("py3-none-any", True), ("py2.py3-none-any", False), ("py310-none-any", True),
    (f"{PY}-{PY}-manylinux2014_{lambda_runtime.MACHINE}", True),
    (f"{PY}-{PY}-manylinux_2_34_{lambda_runtime.MACHINE}", True),
    (f"{PY}-{PY}-manylinux_2_35_{lambda_runtime.MACHINE}", False),
    (f"cp310-abi3-manylinux_2_28_{lambda_runtime.MACHINE}", True),
    (f"cp313-abi3-manylinux_2_28_{lambda_runtime.MACHINE}", False),
    (f"cp313-cp313-manylinux_2_17_{lambda_runtime.MACHINE}", False),
    (f"{PY}-{PY}-musllinux_1_2_{lambda_runtime.MACHINE}", False),
    (f"{PY}-{PY}-macosx_11_0_arm64", False),
])
def test_wheel_tags_are_read_against_the_runtime(tag, fits):
    # Tags in WHEEL files are single triples; py2.py3 appears there as two lines, py2-… and py3-….
    assert lambda_deps.tag_fits(tag) is fits


def _extension_module() -> bytes:
    """A real ELF extension module of this interpreter (its socket module: it links libc with versioned
    symbols), whatever the machine."""
    import _socket
    return Path(_socket.__file__).read_bytes()


def _package(tmp_path: Path, files: dict[str, bytes], dists: dict[str, tuple[str, str]]) -> Path:
    root = tmp_path / "task"
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    for dist, (version, tag) in dists.items():
        info = root / f"{dist}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nTag: {tag}\n", encoding="utf-8")
    return root


def _with_glibc_need(data: bytes, version: bytes) -> bytes:
    # One GLIBC_2.x version name the module needs, rewritten in place (same length, e.g. 2.14 -> 2.99).
    import re
    m = re.search(rb"GLIBC_2\.\d\d\x00", data)
    assert m, "no two-digit GLIBC_2.x version in the module"
    return data[:m.start()] + b"GLIBC_" + version + b"\x00" + data[m.end():]


def test_a_native_module_is_read_for_machine_libraries_and_glibc():
    module = lambda_deps.read_elf("_socket.so", _extension_module())
    assert module.machine in lambda_deps.ELF_MACHINES.values() and not module.problems
    assert "libc.so.6" in module.needed
    assert (2, 10) <= module.glibc <= (2, 99)
    assert lambda_deps.read_elf("_socket.so", _with_glibc_need(_extension_module(), b"2.99")).glibc == (2, 99)


def test_the_package_check_refuses_what_the_runtime_could_not_load(tmp_path):
    ok = _extension_module()
    machine = lambda_deps.ELF_MACHINES[lambda_runtime.MACHINE]
    other = next(m for m in lambda_deps.ELF_MACHINES.values() if m != machine)
    suffix = lambda_runtime.extension_suffixes()[0]
    files = {
        f"good/_speedups{suffix}": ok if ok[18] == machine else ok[:18] + machine.to_bytes(2, "little") + ok[20:],
        f"new/_glibc{suffix}": _with_glibc_need(ok, b"2.99"),
        f"arm/_other{suffix}": ok[:18] + other.to_bytes(2, "little") + ok[20:],
        "old/_py311.cpython-311-x86_64-linux-gnu.so": ok,
        "text/_not_elf.so": b"#!/bin/sh\n",
    }
    root = _package(tmp_path, files, {
        "good": ("1.0", f"{PY}-{PY}-{PLATFORM}"),
        "new": ("1.0", f"{PY}-{PY}-manylinux_2_39_{lambda_runtime.MACHINE}"),
        "stray": ("0.1", "py3-none-any"),
    })
    requirements = _requirements(tmp_path, "good==1.0", "new==1.0", "missing==3.0")
    problems = "\n".join(lambda_deps.check(root, requirements).problems)
    assert f"new/_glibc{suffix}: needs GLIBC_2.99" in problems
    assert "new 1.0: no wheel tag fits" in problems
    assert f"arm/_other{suffix}: built for ELF machine {other}" in problems
    assert "old/_py311.cpython-311-x86_64-linux-gnu.so: an extension module for cpython-311" in problems
    assert "text/_not_elf.so: not an ELF file" in problems
    assert "missing==3.0 is in requirements.txt but not in the package" in problems
    assert "stray 0.1 is in the package but not pinned in requirements.txt" in problems
    assert not [line for line in problems.splitlines() if line.startswith(("good/", "good "))]


def test_a_package_that_fits_passes_as_a_zip_too(tmp_path):
    ok = _extension_module()
    machine = lambda_deps.ELF_MACHINES[lambda_runtime.MACHINE]
    ok = ok[:18] + machine.to_bytes(2, "little") + ok[20:]
    root = _package(tmp_path, {f"good/_speedups{lambda_runtime.extension_suffixes()[0]}": ok, "good/__init__.py": b""},
                    {"good": ("1.0", f"{PY}-{PY}-{PLATFORM}")})
    package = tmp_path / "deployment.zip"
    with zipfile.ZipFile(package, "w") as archive:
        for path in root.rglob("*"):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    report = lambda_deps.check(package, _requirements(tmp_path, "good==1.0"))
    assert report.ok, report.problems
    assert [m.name for m in report.natives] == [f"good/_speedups{lambda_runtime.extension_suffixes()[0]}"]


def test_an_unpinned_runtime_requirement_is_refused(tmp_path):
    with pytest.raises(ValueError, match="pinned"):
        lambda_deps.pinned(_requirements(tmp_path, "boto3>=1.40"))
