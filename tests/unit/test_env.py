"""Every BUTAI_* name the Lambda code reads is declared in chalicelib/env.py."""
import re
from pathlib import Path

from chalicelib import env

ROOT = Path(__file__).resolve().parents[2]


def test_every_environment_name_is_declared_in_one_module():
    used = set()
    for path in (ROOT / "chalicelib").rglob("*.py"):
        if path.name != "env.py":
            used |= set(re.findall(r"\bBUTAI_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8")))
    assert used - env.names() == set()
