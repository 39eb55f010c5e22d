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


def test_the_tools_spell_no_environment_name_themselves():
    """butai_tools takes every BUTAI_* name from chalicelib/env.py (the Lambda code's) or butai_tools/env.py
    (the tools' own): a name written out as a string, or as a keyword, elsewhere is a second spelling."""
    import ast

    from butai_tools import env as tool_env
    declared = env.names() | {v for k, v in vars(tool_env).items() if k.isupper() and isinstance(v, str)}
    assert not env.names() & (declared - env.names()), "a tool name must not shadow a Lambda one"
    spelled = []
    for path in (ROOT / "butai_tools").rglob("*.py"):
        if path == ROOT / "butai_tools" / "env.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [node.value]
            elif isinstance(node, ast.keyword) and node.arg:
                names = [node.arg]
            spelled += [f"{path.relative_to(ROOT)}:{node.lineno if hasattr(node, 'lineno') else '?'} {n}"
                        for n in names if re.fullmatch(r"BUTAI_[A-Z0-9_]*[A-Z0-9]", n)]
    assert spelled == []
