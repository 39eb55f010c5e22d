"""Settings are built one way: a process reads ``Settings.from_env()`` once and overrides it explicitly.

- no ``*_from_env`` helper outside the settings modules;
- the local runtime, the operator commands, the cold-start bench and the load test make no Settings by hand.
(Where the model layer and the settings may import from is tests/unit/test_layers.py's, from
docs/architecture.md.)  Checked on the source with the ast module.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "chalicelib"




def test_no_from_env_helpers_outside_the_settings_modules():
    settings_modules = {LIB / "config.py", LIB / "llm" / "settings.py"}
    found = []
    for package in ("chalicelib", "butai_tools", "scripts"):
        for path in (ROOT / package).rglob("*.py"):
            if path in settings_modules:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef) and node.name.endswith("_from_env"):
                    found.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert found == []


def test_every_process_builds_settings_from_the_environment():
    """The local runtime, the operator commands, the cold-start bench and the load test never make a
    Settings by hand (which is how `make run` once dropped the model switch)."""
    for relative in ("butai_tools/local/runtime.py", "butai_tools/local/commands.py",
                     "butai_tools/bench/coldstart.py", "scripts/load_test.py"):
        tree = ast.parse((ROOT / relative).read_text(encoding="utf-8"))
        by_hand = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
                   and isinstance(node.func, ast.Name) and node.func.id == "Settings"]
        assert by_hand == [], (relative, by_hand)
