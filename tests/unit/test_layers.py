"""Imports run down the layers only, as docs/architecture.md's tables say, and no import cycle exists.

Every row of both tables in docs/architecture.md is read from the document and checked here, so the map and
the code cannot drift apart:

- "Which package may import which": chalicelib/ (what Lambda runs) imports neither the tools nor the agent
  side and only the third-party packages listed; butai/ (the agent side) imports nothing of the server; the
  tools import what they like, and nothing imports them;
- "Inside chalicelib/": each module's imports of other chalicelib modules stay within its row's list.

Imports are read from the source with the ast module, so an import inside a function (a lazy one) counts
too, and so does one under ``if TYPE_CHECKING:``. Importing ``a.b.c`` runs the packages ``a.b`` and ``a``
first, so for cycles those count as imported as well (a module's own packages excepted).

A few edges break the rules today and are being removed on another line of work (the llm/aws/config
cycle, config importing stage/, expression/ importing stage/ and interpret/): they are listed once, in
``PENDING``, each with what must change. The checks leave out only those edges; each edge also has a
strict xfail test that fails ("XPASS") as soon as the edge is gone, so the entry is then removed from the
list rather than left to hide a new edge.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"

# Edges that break a row today, each with what must change (none left: the settings/llm work removed the
# last ones; an edge added here is an exception to a row, never a permission).
PENDING: dict[tuple[str, str], str] = {}


# ---------------------------------------------------------------- the source's imports

def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@cache
def chalicelib_modules() -> dict[str, Path]:
    return {module_name(p): p for p in (ROOT / "chalicelib").rglob("*.py")}


def _imported(path: Path, name: str) -> Iterable[tuple[str, bool]]:
    """(imported name, whether it names a module for sure) for every import statement in the file, with
    relative imports resolved: ``import a.b`` gives a.b; ``from a import b`` gives a, and a.b (which may be
    a module, or a name defined in a)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, True
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            yield base, True
            for alias in node.names:
                yield f"{base}.{alias.name}", False


@cache
def imports_of(path: Path) -> frozenset[str]:
    """Top-level names (third-party, standard library, our packages) a file imports."""
    return frozenset(n.split(".")[0] for n, module in _imported(path, module_name(path)) if module and n)


@cache
def chalicelib_edges() -> dict[str, frozenset[str]]:
    """Each chalicelib module (and app.py) -> the chalicelib modules it imports itself."""
    modules = chalicelib_modules()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges = {}
    for name, path in {**modules, "app": ROOT / "app.py"}.items():
        found = set()
        for imported, _ in _imported(path, name):
            if imported == "chalicelib" or imported.startswith("chalicelib."):
                target = resolve(imported)
                if target and target != "chalicelib":
                    found.add(target)
        found.discard(name)
        edges[name] = frozenset(found)
    return edges


def packages_of(name: str) -> list[str]:
    out = []
    while "." in name:
        name = name.rpartition(".")[0]
        if name != "chalicelib" and name in chalicelib_modules():
            out.append(name)
    return out


def runtime_edges(leave_out: Iterable[tuple[str, str]] = ()) -> dict[str, set[str]]:
    """The edges an import really runs: a module's imports and the packages above them (not its own)."""
    left_out = set(leave_out)
    graph: dict[str, set[str]] = {}
    for name, targets in chalicelib_edges().items():
        own = set(packages_of(name)) | {name}
        graph[name] = set()
        for target in targets:
            if (name, target) in left_out:
                continue
            graph[name].add(target)
            graph[name].update(p for p in packages_of(target) if p not in own)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


# ---------------------------------------------------------------- the document's tables

def table_rows(heading: str) -> list[list[str]]:
    """The body rows of the first table under ``heading`` in docs/architecture.md, as cells."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == heading)
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    return rows[2:]                  # past the header and its rule


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def members(pattern: str) -> set[str]:
    """The modules a pattern of the inside table names: `x/` a package with everything in it, `x.py` a
    module, `app.py` the routes."""
    if pattern == "app.py":
        return {"app"}
    modules = chalicelib_modules()
    if pattern.endswith("/"):
        package = "chalicelib." + pattern.rstrip("/").replace("/", ".")
        return {m for m in modules if m == package or m.startswith(package + ".")}
    name = "chalicelib." + pattern.removesuffix(".py").replace("/", ".")
    assert name in modules, f"docs/architecture.md names {pattern}, which does not exist"
    return {name}


@cache
def inside_rows() -> list[tuple[str, set[str], set[str] | None]]:
    """(row label, its modules, the modules they may import; None: any)."""
    rows = []
    for cells in table_rows("### Inside `chalicelib/`"):
        label = cells[0]
        modules = set().union(*(members(p) for p in ticked(cells[0])))
        allowed = None if "anything" in cells[1] else set().union(*(members(p) for p in ticked(cells[1])), set())
        rows.append((label, modules, allowed))
    return rows


def test_every_chalicelib_module_has_exactly_one_row():
    covered: dict[str, list[str]] = {}
    for label, modules, _ in inside_rows():
        for m in modules:
            covered.setdefault(m, []).append(label)
    assert sorted(set(chalicelib_modules()) - {"chalicelib"} - set(covered)) == []
    assert {m: labels for m, labels in covered.items() if len(labels) > 1} == {}


def _row_id(row) -> str:
    return re.sub(r"[`\s]+", "", row[0])[:60]


@pytest.mark.parametrize("row", inside_rows(), ids=_row_id)
def test_each_row_imports_only_what_it_may(row):
    label, modules, allowed = row
    if allowed is None:
        return
    broken = sorted(f"{m} -> {t}" for m in modules for t in chalicelib_edges().get(m, ())
                    if t not in allowed | modules and (m, t) not in PENDING)
    assert broken == [], f"{label}: imports outside its row of docs/architecture.md"


def test_the_pending_edges_are_exceptions_to_a_row():
    """An entry of PENDING is an edge a row refuses, not a permission in disguise."""
    allowed_to = {}
    for _, modules, allowed in inside_rows():
        for m in modules:
            allowed_to[m] = None if allowed is None else allowed | modules
    assert [e for e in PENDING if allowed_to[e[0]] is None or e[1] in allowed_to[e[0]]] == []


def test_no_import_cycle_among_chalicelib_modules():
    assert cycles(runtime_edges(leave_out=PENDING)) == []


def test_the_cycle_check_finds_a_cycle():
    """The check itself: a two-module loop is found, a chain is not."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


# ---------------------------------------------------------------- packages and third-party imports

@cache
def package_rows() -> dict[str, tuple[set[str], set[str]]]:
    """package -> (what it may import, what it never imports), from the first table."""
    rows = {}
    for cells in table_rows("### Which package may import which"):
        rows[ticked(cells[0])[0]] = (set(ticked(cells[1])), set(ticked(cells[2])))
    return rows


def files_of(package: str) -> list[Path]:
    return [ROOT / "app.py"] if package == "app.py" else sorted((ROOT / package).rglob("*.py"))


def test_the_package_table_has_a_row_for_each_part_of_the_tree():
    assert set(package_rows()) == {"chalicelib/", "butai/", "butai_tools/", "app.py"}


@pytest.mark.parametrize("package", ["chalicelib/", "butai/", "butai_tools/", "app.py"])
def test_each_package_imports_nothing_its_row_refuses(package):
    _, never = package_rows()[package]
    refused = {n.rstrip("/").removesuffix(".py") for n in never}
    broken = sorted(f"{p.relative_to(ROOT)}: {name}" for p in files_of(package) for name in imports_of(p)
                    if name in refused)
    assert broken == []


def test_the_lambda_code_imports_only_the_listed_third_party_packages():
    """chalicelib's row lists what Lambda may import besides the standard library; the optional
    classifier backends' packages are imported only by the modules that use them, lazily."""
    may, _ = package_rows()["chalicelib/"]
    optional = {"pykakasi": "chalicelib/interpret/text.py",          # readings, when installed
                "torch": "chalicelib/llm/local.py",                    # the in-process model
                "transformers": "chalicelib/llm/local.py"}
    allowed = {n.rstrip("/") for n in may} | {"chalicelib"}
    broken = []
    for path in files_of("chalicelib/"):
        for name in imports_of(path) - set(sys.stdlib_module_names) - allowed:
            if optional.get(name) != str(path.relative_to(ROOT)):
                broken.append(f"{path.relative_to(ROOT)}: {name}")
    assert broken == []
    chalice_users = sorted(str(p.relative_to(ROOT)) for p in files_of("chalicelib/") if "chalice" in imports_of(p))
    assert chalice_users == ["chalicelib/http.py"]            # the routes' helpers only


def test_nothing_imports_the_tools():
    for package in ("chalicelib/", "butai/", "app.py"):
        assert [p for p in files_of(package) if "butai_tools" in imports_of(p)] == []


def test_the_director_imports_without_chalice():
    """The director (and the services around it) run where chalice is not installed."""
    script = ("import sys; sys.modules['chalice'] = None\n"
              "import chalicelib.director, chalicelib.context\n"
              "assert not [m for m, v in sys.modules.items() if v is not None and m.split('.')[0] == 'chalice']")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_no_library_module_edits_sys_path():
    for package in ("chalicelib", "butai", "butai_tools"):
        for path in (ROOT / package).rglob("*.py"):
            assert "sys.path.insert" not in path.read_text(encoding="utf-8"), path
            assert "sys.path.append" not in path.read_text(encoding="utf-8"), path


def resolved_imports(package: str) -> dict[str, set[str]]:
    """Like `imports`, with relative imports resolved against the importing module."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / package).rglob("*.py"):
        module = list(path.relative_to(ROOT).with_suffix("").parts)
        here = module[:-1] if path.name != "__init__.py" else module[:-1]
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = here[:len(here) - node.level + 1] if node.level else []
                name = ".".join([*base, node.module] if node.module else base)
                names.add(name)
                names.update(f"{name}.{alias.name}" for alias in node.names)
        found[str(path.relative_to(ROOT))] = names
    return found


def test_the_conversation_layer_reads_stored_shapes_but_plays_no_stage_and_calls_no_model():
    forbidden = ("chalicelib.director", "chalicelib.talk", "chalicelib.llm", "chalicelib.stage.")
    bad = sorted(f"{path}: {name}" for path, names in resolved_imports("chalicelib/conversation").items()
                 for name in names if name.startswith(forbidden) and not name.startswith("chalicelib.stage.records"))
    assert bad == []
    assert any("chalicelib.stage.records" in names for names in resolved_imports("chalicelib/conversation").values())
