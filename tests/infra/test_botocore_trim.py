"""butai_tools.botocore_trim: the Lambda zip keeps botocore's data for the services chalicelib calls."""
import re
import zipfile

import pytest

from butai_tools import botocore_trim
from tests.conftest import ROOT


def test_every_service_the_code_makes_a_client_for_is_kept():
    called = set()
    for path in (ROOT / "chalicelib").rglob("*.py"):
        called |= set(re.findall(r"""\bclient\(\s*["']([a-z0-9-]+)["']""", path.read_text(encoding="utf-8")))
    assert called, "no client(...) call found: the pattern no longer matches the code"
    assert called <= set(botocore_trim.SERVICES), called - set(botocore_trim.SERVICES)


def _zip(path, names):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in names:
            archive.writestr(name, f"content of {name}")


FILES = ["app.py", "botocore/__init__.py", "botocore/data/endpoints.json", "botocore/data/_retry.json",
         "botocore/data/dynamodb/2012-08-10/service-2.json.gz", "botocore/data/s3/2006-03-01/service-2.json.gz",
         "botocore/data/sagemaker-runtime/2017-05-13/service-2.json.gz",
         "botocore/data/apigatewaymanagementapi/2018-11-29/service-2.json.gz",
         "botocore/data/ec2/2016-11-15/service-2.json.gz", "botocore/data/ec2/2016-11-15/paginators-1.json",
         "botocore/data/lambda/2015-03-31/service-2.json.gz", "other/data/ec2/kept.json"]


def test_other_services_are_removed_and_everything_else_is_kept_as_it_was(tmp_path):
    package = tmp_path / "deployment.zip"
    _zip(package, FILES)
    done = botocore_trim.trim(package)
    assert (done.services_removed, done.files_removed) == (2, 3)
    with zipfile.ZipFile(package) as archive:
        assert archive.testzip() is None
        kept = archive.namelist()
        assert all(archive.read(n) == f"content of {n}".encode() for n in kept)
    assert kept == [n for n in FILES if "/ec2/2016" not in n and "/lambda/" not in n]
    assert botocore_trim.trim(package).files_removed == 0


def test_a_zip_without_a_needed_service_is_refused(tmp_path):
    package = tmp_path / "deployment.zip"
    _zip(package, [n for n in FILES if "/s3/" not in n])
    with pytest.raises(ValueError, match="s3"):
        botocore_trim.trim(package)
