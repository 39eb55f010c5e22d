"""Other places named in a line: 「角のコンビニ、夜遅くまでやってる？」 asks about a コンビニ, not about this shop —
an entry on the shop's hours (「やってるわよ。どうぞ」) is no answer to it, nor is a line that shares この辺.

Read on the analyser's tokens (no model): a noun made a shop or house by its suffix (和菓子屋, 本屋, 居酒屋,
喫茶店, 映画館), or a kind of place that is never the stage itself (コンビニ, 銀行); not the scenario's own places
(店, お店), nor one pointed at as here (この店, うちの店).
"""
from __future__ import annotations

from ..interpret.ja import analyse
from ..interpret.ja.tokens import TAG

# Kinds of places a line may name that are other places than a scene's own (shops, services).
_PLACES = frozenset("コンビニ スーパー デパート ドラッグストア 薬局 病院 銀行 郵便局 交番 ホテル 旅館 カフェ ファミレス "
                    "ラーメン屋 パン屋 本屋 花屋 八百屋 魚屋 肉屋 床屋 居酒屋 寿司屋 蕎麦屋 そば屋 ケーキ屋 レストラン "
                    "ゲームセンター ゲーセン 映画館 美容院 銭湯 公園 学校 図書館".split())
_SUFFIXES = ("屋", "店", "館")
_HERE = ("この", "うちの", "ここの", "当")


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
                (tokens[end + 1].pos[:1] == (TAG.noun,) or tokens[end + 1].surface in _SUFFIXES):
            end += 1
        if start > 0 and tokens[start - 1].is_noun and tokens[start - 1].end == tokens[start].start:
            continue          # inside a compound: read from its first noun
        word = text[tokens[start].start:tokens[end].end]
        kind = next((t.surface for t in tokens[start:end + 1] if t.surface in _PLACES), None)
        if kind is not None:
            word = kind       # 角のコンビニ夜遅く: the コンビニ
        shop = kind is not None or \
            (len(word) > 1 and word.endswith(_SUFFIXES) and tokens[end].surface in _SUFFIXES + tuple(_PLACES)) or \
            (len(word) > 1 and word[-1] in _SUFFIXES and len(tokens[end].surface) > 1)
        if not shop or word in own or word.removeprefix("お") in own:
            continue
        before = text[:tokens[start].start]
        if before.endswith(_HERE):
            continue          # この店, うちの店: here
        found.append(word)
    return tuple(dict.fromkeys(found))
