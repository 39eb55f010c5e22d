"""The cyclic garbage collector, paused while a new instance starts.

A new Lambda instance allocates hundreds of thousands of long-lived objects
before its first answer: modules, classes, botocore's service models, pydantic's
validators, the scenario's interpreter.  The collector runs again and again
while they are made and frees next to nothing (they all stay alive): about 3 %
of the CPU time before the first answer.  ``begin()`` (the first line of
``app.py``) pauses it; ``settle()``,
after the first request, moves everything alive into the permanent generation
(``gc.freeze``: later collections no longer walk it) and turns the collector
back on, so a long-lived instance collects its request garbage as usual.
Measured in ``butai bench coldstart`` (docs/performance.md).

With SnapStart (chalicelib/snapstart.py) the start-up runs once, before the
snapshot: ``before_snapshot()`` collects its garbage so no restored instance
carries it, and the pause is applied again after each restore (``begin()``),
until that instance's first request.
"""
from __future__ import annotations

import gc

_paused = False


def begin() -> None:
    """Pauses the collector, unless something else already turned it off."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def settle() -> None:
    """Freezes what the start-up built and turns the collector back on; once per process."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def before_snapshot() -> None:
    """Frees start-up's garbage once, and moves what stays alive into the permanent generation, so the
    snapshot carries no garbage and no restored instance's collector walks start-up's objects."""
    gc.collect()
    gc.freeze()


def paused() -> bool:
    return _paused
