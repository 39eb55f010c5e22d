"""Regular expressions compiled where they are first used.

A new process (a cold Lambda instance) imported some three hundred module-level patterns and compiled every one
before its first turn, which uses fewer than half of them.  ``compile`` here gives an object that compiles its
pattern on the first call and from then on hands out the compiled pattern's own methods (no indirection left on
the hot path).  ``.pattern`` is the source and needs no compiling, so patterns built from others stay lazy.
A match's ``.re`` is the compiled pattern, not this object: compare ``.pattern`` to tell patterns apart.
"""
from __future__ import annotations

import re
from typing import cast

# What callers use of a pattern; each becomes an attribute of the instance once compiled.
_FORWARDED = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner",
              "flags", "groups", "groupindex")


class _LazyPattern:
    def __init__(self, source: str, flags: int) -> None:
        self.pattern = source
        self._flags = flags

    def __getattr__(self, name: str):
        # Only reached for what the instance does not hold yet: the first use of a forwarded name.
        if name not in _FORWARDED:
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self._flags)
        for forwarded in _FORWARDED:
            setattr(self, forwarded, getattr(compiled, forwarded))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazyre.compile({self.pattern!r})"


def compile(source: str, flags: int = 0) -> re.Pattern[str]:  # noqa: A001 - the name re gives it
    """``re.compile``, deferred to the pattern's first use (typed as the compiled pattern it stands for)."""
    return cast(re.Pattern[str], _LazyPattern(source, flags))
