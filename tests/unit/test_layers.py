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
    # websockets serves the local run's push socket; in the cloud API Gateway holds the sockets.
    assert offenders("chalicelib", ("butai", "butai_tools", "moto", "mcp", "websockets")) == []


def test_the_agent_side_imports_nothing_from_the_server():
    assert offenders("butai", ("chalicelib", "butai_tools", "app")) == []


def test_no_library_module_edits_sys_path():
    for package in ("chalicelib", "butai", "butai_tools"):
        for path in (ROOT / package).rglob("*.py"):
            assert "sys.path.insert" not in path.read_text(encoding="utf-8"), path
            assert "sys.path.append" not in path.read_text(encoding="utf-8"), path


def resolved_imports(package: str) -> dict[str, set[str]]:
    """Like imports(), with relative imports (`from ..stage import x`) resolved to their full names."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / package).rglob("*.py"):
        here = list(path.relative_to(ROOT).with_suffix("").parts)
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = here[:len(here) - node.level] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                names.update(f"{module}.{alias.name}" for alias in node.names)
        found[str(path.relative_to(ROOT))] = names
    return found


def test_push_reads_the_stage_and_nothing_above_it():
    above = ("chalicelib.director", "chalicelib.interpret", "chalicelib.webhooks", "app")
    found = {path: names for path, names in resolved_imports("chalicelib/push").items()}
    assert any("chalicelib.stage.service.StageService" in names for names in found.values())  # resolved
    assert sorted(f"{path}: {name}" for path, names in found.items() for name in names if name.startswith(above)) == []
