"""Keeps, in the Lambda deployment zip, botocore's data for the services the functions call, and no other.

botocore ships the models of every AWS service (about 28 MB unpacked, 420 folders).  Making a client
lists that folder for each kind of file it loads (a stat per service and version), so a new Lambda
instance pays for services it never calls, and the package carries them towards Lambda's 250 MB limit.
The endpoint, partition, retry and default-configuration files at the folder's top stay whole.

A service missing here would fail at its first client (``UnknownServiceError``), so the list is
checked against the code: tests/infra/test_botocore_trim.py finds every ``client("…")`` in chalicelib.

    python -m butai_tools.botocore_trim build/package/deployment.zip
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

# What chalicelib makes clients for: the stage's tables, the bucket, the classifier endpoint, the pages'
# push sockets (API Gateway's connection-management API).
SERVICES = ("dynamodb", "s3", "sagemaker-runtime", "apigatewaymanagementapi")
DATA = "botocore/data/"


@dataclass(frozen=True)
class Trimmed:
    services_kept: tuple[str, ...]
    services_removed: int
    files_removed: int
    bytes_removed: int


def _service(name: str) -> str | None:
    """The service folder a zip entry belongs to (None for anything outside botocore's service data)."""
    if not name.startswith(DATA):
        return None
    rest = name[len(DATA):]
    return rest.split("/", 1)[0] if "/" in rest else None


def trim(package: Path, keep: tuple[str, ...] = SERVICES) -> Trimmed:
    """Rewrites the zip without the other services' data; a zip already trimmed is left as it is."""
    with zipfile.ZipFile(package) as archive:
        entries = archive.infolist()
        drop = [e for e in entries if (svc := _service(e.filename)) is not None and svc not in keep]
        present = sorted({_service(e.filename) for e in entries} - {None})
        missing = [svc for svc in keep if svc not in present]
        if missing and present:
            raise ValueError(f"botocore in {package} has no data for {missing}")
        if not drop:
            return Trimmed(tuple(keep), 0, 0, 0)
        dropped = {e.filename for e in drop}
        fd, tmp = tempfile.mkstemp(suffix=".zip", dir=package.parent)
        os.close(fd)
        try:
            with zipfile.ZipFile(tmp, "w") as out:
                for entry in entries:
                    if entry.filename in dropped:
                        continue
                    # Entry by entry, with its own compression and attributes (a new record: writing
                    # one fills in offsets the reading side still uses).
                    copy = zipfile.ZipInfo(entry.filename, entry.date_time)
                    copy.compress_type, copy.external_attr = entry.compress_type, entry.external_attr
                    copy.create_system, copy.file_size = entry.create_system, entry.file_size
                    with archive.open(entry) as src, out.open(copy, "w") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
            os.chmod(tmp, package.stat().st_mode & 0o777)
            os.replace(tmp, package)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return Trimmed(tuple(keep), len({_service(n) for n in dropped}), len(drop), sum(e.file_size for e in drop))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m butai_tools.botocore_trim", description=__doc__.split("\n")[0])
    parser.add_argument("package", type=Path, help="the deployment zip")
    args = parser.parse_args(argv)
    done = trim(args.package)
    print(f"botocore data: kept {', '.join(done.services_kept)}; removed {done.services_removed} other services "
          f"({done.files_removed} files, {done.bytes_removed / 1e6:.1f} MB unpacked)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
