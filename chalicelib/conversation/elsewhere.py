"""Other places named in a line: 「角のコンビニ、夜遅くまでやってる？」 asks about a コンビニ, not about this shop —
an entry on the shop's hours (「やってるわよ。どうぞ」) is no answer to it, nor is a line that shares この辺.

Read on the analyser's tokens (no model): a noun made a shop or house by its suffix (和菓子屋, 本屋, 居酒屋,
喫茶店, 映画館), or a kind of place that is never the stage itself (コンビニ, 銀行); not the scenario's own places
(店, お店), nor one pointed at as here (この店, うちの店).
"""
from __future__ import annotations

from ..interpret.ja import analyse
from ..interpret.ja.tokens import TAG
from ..interpret.lexicon import compiled

# Kinds of places a line may name that are other places than a scene's own (shops, services): one token, whole.
_PLACES = compiled("conversation", "elsewhere_places")
# The suffixes that make a noun a shop or house (本屋, 喫茶店, 映画館): one token or character, whole; a word's end.
_SUFFIX = compiled("conversation", "elsewhere_suffix_word")
_ENDS_WITH_SUFFIX = compiled("conversation", "elsewhere_ends_with_suffix")
# What points at a shop as here, right before it (この店, うちの店).
_HERE = compiled("conversation", "elsewhere_here_before")
# The polite お before a place's name (お店), taken off once.
_POLITE_PREFIX = compiled("conversation", "elsewhere_polite_prefix")


def other_places(text: str, own: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The places other than the scene's own (`own`: its places' names) that normalised `text` names."""
    tokens = analyse(text).tokens
    found: list[str] = []
    for i, token in enumerate(tokens):
        if not token.is_noun:
            continue
        start = i
        end = i
        while end + 1 < len(tokens) and tokens[end + 1].start == tokens[end].end and \
                (tokens[end + 1].pos[:1] == (TAG.noun,) or _SUFFIX.fullmatch(tokens[end + 1].surface)):
            end += 1
        if start > 0 and tokens[start - 1].is_noun and tokens[start - 1].end == tokens[start].start:
            continue          # inside a compound: read from its first noun
        word = text[tokens[start].start:tokens[end].end]
        kind = next((t.surface for t in tokens[start:end + 1] if _PLACES.fullmatch(t.surface)), None)
        if kind is not None:
            word = kind       # 角のコンビニ夜遅く: the コンビニ
        shop = kind is not None or \
            (len(word) > 1 and _ENDS_WITH_SUFFIX.search(word) and
             (_SUFFIX.fullmatch(tokens[end].surface) or _PLACES.fullmatch(tokens[end].surface))) or \
            (len(word) > 1 and _SUFFIX.fullmatch(word[-1]) and len(tokens[end].surface) > 1)
        if not shop or word in own or _POLITE_PREFIX.sub("", word, count=1) in own:
            continue
        before = text[:tokens[start].start]
        if _HERE.search(before):
            continue          # この店, うちの店: here
        found.append(word)
    return tuple(dict.fromkeys(found))
