"""Results of pure functions of a scenario's texts, kept beside the scenario.

Building a scenario's interpreter and conversation analyses every text its author wrote (some 2,500 analyses
for the reference scenario, most of a new instance's build).  What the build takes from them — a sentence's
keys, a word's reading, a text's kanji nouns — depends on the text, the analyser's dictionary and butai's own
code only.  Functions of that kind are declared with ``@table(name)``: they are cached for the process, and
``recording()`` collects every result while a scenario is built; ``prime()`` hands such a collection to a new
process, which reads the results instead of deriving them.  The director keeps a collection in the bucket
under the scenario's content hash and ``fingerprint()`` (butai's code and data, the analyser and its
dictionary), so results made by other code or another dictionary are never read.
"""
from __future__ import annotations

import contextvars
import functools
import hashlib
import importlib.util
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

R = TypeVar("R")
FORMAT = 1
_MISSING = object()
_TABLES: dict[str, Table[Any]] = {}
# The results collected while a scenario is built (per thread and task: builds may run side by side).
_RECORDING: contextvars.ContextVar[dict[str, dict[str, Any]] | None] = contextvars.ContextVar("kept", default=None)
# How much of the dictionary's file identifies its build (its header holds the version and build time).
_HEADER_BYTES = 4096


def _same(value: Any) -> Any:
    return value


class Table(Generic[R]):
    """A pure function of one text, cached, whose results can be recorded and primed."""

    def __init__(self, name: str, fn: Callable[[str], R], encode: Callable[[R], Any],
                 decode: Callable[[Any], R], maxsize: int) -> None:
        self.name = name
        self._cached = functools.lru_cache(maxsize=maxsize)(fn)
        self._encode = encode
        self._decode = decode
        self._primed: dict[str, R] = {}
        functools.update_wrapper(self, fn)

    def __call__(self, text: str) -> R:
        result = self._primed.get(text, _MISSING)
        if result is _MISSING:
            result = self._cached(text)
        recording = _RECORDING.get()
        if recording is not None:
            recording.setdefault(self.name, {})[text] = self._encode(result)  # type: ignore[arg-type]
        return result  # type: ignore[return-value]

    def prime(self, encoded: dict[str, Any]) -> None:
        self._primed.update((text, self._decode(value)) for text, value in encoded.items())

    def cache_clear(self) -> None:
        self._cached.cache_clear()
        self._primed.clear()


def table(name: str, *, encode: Callable[[Any], Any] = _same, decode: Callable[[Any], Any] = _same,
          maxsize: int = 4096) -> Callable[[Callable[[str], R]], Table[R]]:
    """Declares a pure function of one text (a str) whose result, as ``encode`` gives it, is plain JSON."""
    def wrap(fn: Callable[[str], R]) -> Table[R]:
        if name in _TABLES:
            raise ValueError(f"kept table {name!r} declared twice")
        made: Table[R] = Table(name, fn, encode, decode, maxsize)
        _TABLES[name] = made
        return made
    return wrap


@contextmanager
def recording() -> Iterator[dict[str, dict[str, Any]]]:
    """Collects every kept table's results computed or read inside the block: {table: {text: encoded}}."""
    collected: dict[str, dict[str, Any]] = {}
    token = _RECORDING.set(collected)
    try:
        yield collected
    finally:
        _RECORDING.reset(token)


def forget() -> None:
    """Empties every table (what a new process starts with)."""
    for made in _TABLES.values():
        made.cache_clear()


def is_recording() -> bool:
    return _RECORDING.get() is not None


def export(collected: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"format": FORMAT, "fingerprint": fingerprint(), "tables": collected}


def prime(document: Any) -> bool:
    """Gives the tables the results of ``document`` (as ``export`` made it) when they were made by this code
    and dictionary; False, and nothing primed, otherwise."""
    if not isinstance(document, dict) or document.get("format") != FORMAT or \
            document.get("fingerprint") != fingerprint() or not isinstance(document.get("tables"), dict):
        return False
    tables = document["tables"]
    if any(name not in _TABLES or not isinstance(results, dict) for name, results in tables.items()):
        return False
    for name, results in tables.items():
        _TABLES[name].prime(results)
    return True


@functools.cache
def fingerprint() -> str:
    """What the results depend on beyond the text: every source and data file of butai's Lambda code, the
    analyser's version and its dictionary's header and size."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".json") and "__pycache__" not in path.parts and path.is_file():
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    digest.update(_analyser_identity())
    return digest.hexdigest()[:16]


def _analyser_identity() -> bytes:
    spec = importlib.util.find_spec("sudachipy")
    if spec is None:
        return b"no analyser"
    import sudachipy
    parts = [f"sudachipy {getattr(sudachipy, '__version__', '?')}".encode()]
    dictionary = importlib.util.find_spec("sudachidict_small")
    if dictionary is not None and dictionary.submodule_search_locations:
        path = Path(next(iter(dictionary.submodule_search_locations))) / "resources" / "system.dic"
        if path.is_file():
            with path.open("rb") as f:
                parts += [str(path.stat().st_size).encode(), f.read(_HEADER_BYTES)]
    return b"\n".join(parts)
