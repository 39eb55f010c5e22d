"""Imports run down the layers only (docs/architecture.md).

- chalicelib/ (what Lambda runs) imports neither the tools (butai_tools/) nor the agent side (butai/);
- butai/ (the agent side: client, agent commands, MCP server) imports nothing from the server;
- no library module edits sys.path.
Checked on the source with the ast module, so a lazy import inside a function counts too.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imports(package: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (ROOT / package).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
        found[str(path.relative_to(ROOT))] = names
    return found


def offenders(package: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(f"{path}: {name}" for path, names in imports(package).items() for name in names
                  if name.split(".")[0] in forbidden)


def test_the_lambda_package_imports_no_tool_and_no_agent_module():
    assert offenders("chalicelib", ("butai", "butai_tools", "moto", "mcp")) == []


def test_the_agent_side_imports_nothing_from_the_server():
    assert offenders("butai", ("chalicelib", "butai_tools", "app")) == []


def test_no_library_module_edits_sys_path():
    for package in ("chalicelib", "butai", "butai_tools"):
        for path in (ROOT / package).rglob("*.py"):
            assert "sys.path.insert" not in path.read_text(encoding="utf-8"), path
            assert "sys.path.append" not in path.read_text(encoding="utf-8"), path
