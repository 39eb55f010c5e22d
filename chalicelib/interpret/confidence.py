"""How sure a result is, and the band in which a model should be asked.

Every `Interpretation` carries ``best`` (the top option score), ``margin``
(its lead over the runner-up, options only, none excluded) and ``unsure``.
For the lexical backend the scores are evidence sums (a listed word ≈ 1.0),
so the band is written in those units:

- **sure, none**: the best score is under ``floor`` (0.3): nothing in the text
  points at any option;
- **sure, chosen**: the best is at least ``confident`` (1.0) and leads by
  ``margin`` (0.1), or is at least ``clear`` (0.75, a listed word in another
  form) and leads by ``wide_margin`` (0.3);
- **unsure**: everything between: some evidence, but weak (a word related
  only in meaning, a word in a set-aside clause) or shared by two options.

Moves and 離脱 are decided by phrasing rules that a model cannot overrule
safely, so a lexical move or leave is never "unsure".
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .options import NONE_ANSWER


@dataclass(frozen=True)
class Band:
    floor: float = 0.3
    confident: float = 1.0
    margin: float = 0.1
    wide_margin: float = 0.3
    clear: float = 0.75


def best_and_margin(scores: Mapping[str, float]) -> tuple[float, float]:
    """(best option score, lead over the runner-up); none is not an option."""
    ranked = sorted((v for k, v in scores.items() if k != NONE_ANSWER), reverse=True)
    if not ranked:
        return 0.0, 0.0
    best = ranked[0]
    return best, best - (ranked[1] if len(ranked) > 1 else 0.0)


def is_unsure(best: float, margin: float, band: Band = Band()) -> bool:
    if best < band.floor:
        return False
    if best >= band.confident and margin >= band.margin:
        return False
    return best < band.clear or margin < band.wide_margin
