"""How many of an item an order asks for (lexicon/counts.json): 「赤い薔薇を5本」 is five, 「ビール、ふたつ」 two,
「3本の薔薇」 three; 「5本にしてください」 makes the item's total five.  The tab counts what is asked, not one per
line that names an item."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .lexicon import compiled, pattern, values

# An order never counts more than this many of one item at once (a typo's 99 is not 99 on the bill; a bouquet
# of 25 or 50 roses is an order).
MOST = 50


@dataclass(frozen=True)
class Count:
    n: int
    total: bool = False     # the new total of the item, not more of it
    said: str = ""          # the player's words for it (「5本」)
    more: bool = False      # said as more of it (あと, もう, 追加): never a new total


def number(word: str) -> int | None:
    """A number written in digits or kanji (「2」「二」「十二」「二十」「千五百」「一万」), or None; the kanji are the
    table's `values`: digits, and the units ten, hundred, thousand and ten thousand."""
    if word.isdigit():
        return int(word)
    worth = values("counts")
    if not word or not all(c in worth for c in word):
        return None
    total = section = 0
    digit: int | None = None
    for c in word:
        value = worth[c]
        if value >= 10000 and value % 10 == 0:
            total += (section + (digit or 0) or 1) * value
            section, digit = 0, None
        elif value >= 10 and str(value).strip("0") == "1":
            section += (1 if digit is None else digit) * value
            digit = None
        else:
            digit = value if digit is None else digit * 10 + value
    return total + section + (digit or 0)


def _value(match: re.Match[str]) -> int | None:
    if match.group("digits"):
        return int(match.group("digits"))
    if match.group("native") or match.group("ten"):
        return values("counts").get(match.group("native") or match.group("ten"))
    return number(match.group("kanji")) if match.group("kanji") else None


def _count(match: re.Match[str] | None, *, total: bool = False) -> Count | None:
    if match is None:
        return None
    n = _value(match)
    if n is None or n < 1:
        return None
    more = any(bool(match.group(group)) for group in ("more", "more_after") if group in match.re.groupindex)
    said = match.group("said")
    if n > MOST and said:
        # said back as booked: the counter kept, the number the most an order takes
        said = str(MOST) + compiled("interpretation", "count_number_head").sub("", said, count=1)
    return Count(min(n, MOST), total, said, more)


def count_of(text: str, start: int, end: int, bound: int | None = None) -> Count | None:
    """The count asked for the item named at `text[start:end]`: a new total said after it in the clause (up to
    `bound`, where the next item starts), else a count right after it, else one right before it."""
    after = re.split(r"[。！!？?]", text[end:bound])[0]
    first = compiled("counts", "after_item").match(after)
    denied = compiled("counts", "denied").match(after, first.end()) if first is not None else None
    if denied is not None:
        # 「かすみ草3つちゃうで、2つや」: the count said after the one taken back is the total
        again = _count(compiled("counts", "count_alone").search(after, denied.end()), total=True)
        if again is not None:
            return again
    total = compiled("counts", "total").search(after)
    if total is not None and compiled("counts", "more_lead").search(after[:total.start()]):
        # 「かすみ草をもう1本にしようかな」: one more of it, not one in all
        found = _count(total)
        return replace(found, more=True) if found is not None else None
    found = _count(total, total=True) or _count(first)
    return found or _count(compiled("counts", "before_item").search(text[max(0, start - 8):start]))


def each_after(text: str, end: int) -> Count | None:
    """The count said of each item of a list ending at `end` (「スズランとかすみ草を一つずつ」: one of each)."""
    return _count(compiled("counts", "each_after_item").match(text[end:]))


def fewer_by(text: str) -> Count | None:
    """A count taken off an item (「ひまわり8本キャンセル」「かすみ草を1本減らして」): how many fewer; none of it
    (「ひまわりは0本で」): all of it."""
    if compiled("counts", "zero").search(text):
        return Count(MOST, said="0")
    return _count(compiled("counts", "fewer").search(text))


def zero_said(text: str) -> bool:
    """Whether the text asks for none of an item (「0本で」)."""
    return bool(compiled("counts", "zero").search(text))


def reduces(after_cue: str) -> bool:
    """Whether what follows an order's cue takes it off instead (「1本|減らして」「8本|キャンセル」)."""
    return bool(re.match(r"\s*(?:" + pattern("interpretation", "reduce_particle") + r")?\s*(?:" +
                         pattern("counts", "reduce_cue") + ")", after_cue))


def joined(between: str) -> bool:
    """Whether `between`, the text between two items named, joins them into one order (「…を5本と、…」)."""
    return bool(compiled("counts", "joined").match(between))


def orders_by_count(text: str, end: int) -> bool:
    """Whether a count after the item ending at `end` is by itself the order, in a sentence that asks nothing: a
    new total (「薔薇は合計5本にしてください」), or a count right after it with nothing but an ending to follow
    (「薔薇をあと3本」「ビール二杯！」)."""
    sentence = re.match(r"[^。！!？?\n]*[。！!？?]?", text[end:])
    clause = sentence.group(0) if sentence else ""
    if clause.endswith(("？", "?")):
        return False
    total = compiled("counts", "total").search(clause)
    if total is not None and compiled("counts", "item_total_lead").match(clause[:total.start()]):
        return True                             # 「薔薇は合計5本にしてください」: the new total is the order
    found = compiled("counts", "after_item").match(clause)
    if found is None:
        return False
    denied = compiled("counts", "denied").match(clause, found.end())
    if denied is not None and compiled("counts", "count_alone").search(clause, denied.end()):
        return True                             # 「カップ3個ちゃうで、2個や」: the count corrected is the order
    return bool(compiled("counts", "bare_order").match(clause[found.end():]))


def of_the_last(text: str) -> tuple[Count, int] | None:
    """The count a sentence naming no item asks of an item named or ordered before it, and where the sentence
    starts: a new total in a sentence that asks nothing (「七本にしてくれ」), or a sentence asking for more
    (「あと2本」「もう二杯ください」), or a count asked for alone (「ハイボールにしよ！1杯ください」)."""
    for sentence in re.finditer(r"[^。！!？?\n]+[。！!？?]?", text):
        if sentence.group(0).rstrip().endswith(("？", "?")) and \
                not compiled("counts", "asked_as_request").search(sentence.group(0)):
            continue              # (「10本くらいにしてもらえます？」 asks for it: read as the request it is)
        total = compiled("counts", "total").search(sentence.group(0))
        if total is not None and not compiled("counts", "total_lead").match(sentence.group(0)[:total.start()]):
            total = None
        more = _count(compiled("counts", "more_of_last").match(sentence.group(0)))
        found = _count(total, total=True) or (replace(more, more=True) if more is not None else None) or \
            _count(compiled("counts", "count_request_alone").match(sentence.group(0)))
        if found is not None:
            return found, sentence.start()
    return None


def count_sentence_after(text: str, at: int) -> Count | None:
    """A later sentence of the line that is only a count (「…ハイボールで。二杯ね」): how many the order is."""
    for sentence in re.finditer(r"[^。！!？?\n]+[。！!？?]?", text):
        if sentence.start() >= at:
            found = _count(compiled("counts", "count_sentence").match(sentence.group(0)))
            if found is not None:
                return found
    return None


def count_claimed(text: str) -> bool:
    """Whether `text` states a count of what was had (「三杯だと思うんだけど」) rather than asks for one."""
    return bool(compiled("counts", "count_claimed").search(text))
