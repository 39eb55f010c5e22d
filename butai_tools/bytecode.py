"""Adds compiled bytecode to the Lambda deployment zip that `chalice package` writes.

Chalice unpacks the dependencies' wheels and copies the app's sources without
bytecode, and Lambda's /var/task is read-only, so without this every new
instance would compile boto3, botocore, pydantic and the app from source before
its first request (`butai bench coldstart --source` measures that cost).

The bytecode is hash-based and unchecked (PEP 552): a deployment package never
changes after it is built, so the interpreter loads it without comparing it to
the source, and zip timestamps (2-second resolution) cannot invalidate it.  It is
compiled by an interpreter of the runtime's version (infra/package.sh runs this
file with it, ``-I -S``: it needs nothing but the standard library); a runtime
of another version would ignore the files (its cache tag differs), so the
template's runtimes are checked to match the interpreter's.

    PYTHON3.12 butai_tools/bytecode.py build/package/deployment.zip [build/package/sam.json]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import marshal
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# Where Lambda unpacks the package: the path tracebacks show.
LAMBDA_TASK_ROOT = "/var/task"
# PEP 552 flags: hash-based (bit 0), not checked against the source (bit 1 clear).
_UNCHECKED_HASH = 0b01


@dataclass(frozen=True)
class BytecodeAdded:
    compiled: int
    already_present: int
    failed: list[str]


def runtime() -> str:
    """The Lambda runtime name of this interpreter (python3.12)."""
    return f"python{sys.version_info.major}.{sys.version_info.minor}"


def pyc_name(source: str, cache_tag: str | None = None) -> str:
    """`pkg/mod.py` → `pkg/__pycache__/mod.cpython-312.pyc` (this interpreter's cache tag by default)."""
    path = PurePosixPath(source)
    return str(path.parent / "__pycache__" / f"{path.stem}.{cache_tag or sys.implementation.cache_tag}.pyc")


def unchecked_pyc(source: bytes, display_path: str) -> bytes:
    code = compile(source, display_path, "exec", dont_inherit=True)
    return (importlib.util.MAGIC_NUMBER + _UNCHECKED_HASH.to_bytes(4, "little")
            + importlib.util.source_hash(source) + marshal.dumps(code))


def add_bytecode(package: Path, task_root: str = LAMBDA_TASK_ROOT) -> BytecodeAdded:
    """Appends a .pyc for every .py in the zip that has none; files that do not compile are left as source."""
    with zipfile.ZipFile(package) as archive:
        names = set(archive.namelist())
        sources = [info for info in archive.infolist() if info.filename.endswith(".py")]
        compiled: list[tuple[str, bytes]] = []
        present, failed = 0, []
        for info in sources:
            target = pyc_name(info.filename)
            if target in names:
                present += 1
                continue
            try:
                compiled.append((target, unchecked_pyc(archive.read(info), f"{task_root}/{info.filename}")))
            except (SyntaxError, ValueError):
                # A vendored file for another Python version; the import would fail on it either way.
                failed.append(info.filename)
    with zipfile.ZipFile(package, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        for target, data in compiled:
            info = zipfile.ZipInfo(target, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return BytecodeAdded(compiled=len(compiled), already_present=present, failed=failed)


def template_runtimes(template: Path) -> set[str]:
    resources = json.loads(template.read_text(encoding="utf-8")).get("Resources", {})
    return {r["Properties"]["Runtime"] for r in resources.values()
            if r.get("Type") == "AWS::Serverless::Function" and "Runtime" in r.get("Properties", {})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m butai_tools.bytecode", description=__doc__.split("\n")[0])
    parser.add_argument("package", type=Path, help="the deployment zip")
    parser.add_argument("template", type=Path, nargs="?", help="the SAM template, to check its runtimes")
    args = parser.parse_args(argv)
    if args.template is not None:
        others = template_runtimes(args.template) - {runtime()}
        if others:
            print(f"bytecode: the template's runtime {sorted(others)} is not this interpreter's "
                  f"({runtime()}); its bytecode would be ignored", file=sys.stderr)
            return 1
    added = add_bytecode(args.package)
    print(f"bytecode: {added.compiled} modules compiled for {runtime()} "
          f"({added.already_present} already had bytecode, {len(added.failed)} left as source)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
