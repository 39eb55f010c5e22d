"""The model-call layer and the settings sit at the bottom (docs/architecture.md), and settings are built one way.

- `chalicelib/llm/` imports only itself and `env`: the transport takes the SageMaker client it is handed,
  so `aws → config → llm → aws` cannot close again;
- `config.py` imports only `env` and the model settings' parser;
- `expression/` reaches a model through `llm/` and takes the neutral face from `faces.py`: it imports
  neither `stage/` nor `interpret/`;
- no ``*_from_env`` helper outside the settings modules: a process reads ``Settings.from_env()`` once and
  overrides it explicitly.
Checked on the source with the ast module (lazy imports count).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "chalicelib"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every chalicelib module `path` imports, relative imports resolved."""
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {name for name in found if name.startswith("chalicelib.") and
            ((LIB.parent / name.replace(".", "/")).with_suffix(".py").exists()
             or (LIB.parent / name.replace(".", "/") / "__init__.py").exists())}


def outside(folder: str, allowed: tuple[str, ...]) -> list[str]:
    paths = [LIB / folder] if folder.endswith(".py") else sorted((LIB / folder).rglob("*.py"))
    return sorted(f"{p.relative_to(ROOT)}: {name}" for p in paths for name in imported(p)
                  if not name.startswith(allowed))


def test_the_model_call_layer_imports_only_itself_and_env():
    assert outside("llm", ("chalicelib.llm", "chalicelib.env")) == []


def test_config_imports_nothing_above_it():
    assert outside("config.py", ("chalicelib.env", "chalicelib.llm.settings", "chalicelib.llm")) == []
    assert not [name for name in imported(LIB / "config.py") if name.startswith("chalicelib.llm.")
                and name != "chalicelib.llm.settings"]


def test_expression_reaches_models_through_llm_and_faces_only():
    assert outside("expression", ("chalicelib.expression", "chalicelib.llm", "chalicelib.faces")) == []


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
