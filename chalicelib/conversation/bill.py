"""Questions about the bill: what it holds, answered from what was served, never taken as paying.

「内訳は？」「何が入ってるの？」「高くない？」「2600円！？」 ask about the bill; the answer names each item
served with its price and the sum (the menu's `breakdown` lines, `{items}` and `{total}`), so a player can see
it adds up.  Only paying words (お会計, 払います, money handed over) pay.

The player is the one who knows what they ordered: an item taken back (「2杯目は頼んでない」「ハイボールは2杯しか
頼んでないよ」「ナポリタン取り消して」, 「キャンセル」 right after an order) comes off what is counted, and the
breakdown then says what remains.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from ..interpret.asking import is_question, sentence_end, sentence_start
from ..interpret.counts import fewer_by, number
from ..interpret.lexicon import compiled
from ..interpret.money import amounts, money
from ..interpret.text import nfkc
from .facts import sentences

_ABOUT_BILL = money("about_bill")
_AMOUNT_ASKED = money("amount_asked")
_MEANING_ASKED = money("meaning_asked")
_MEANING_OF_THING = money("meaning_of_thing")
_CONTENTS = money("contents")
_MOVES_ON = money("moves_on")
DEFAULT_BREAKDOWN = "{items}で、{total}円です。"
# Said when an item taken back leaves nothing on the bill.
DEFAULT_TAKEN_BACK = "失礼しました、{item}は取り消しておきますね。"

# Taking back: cancelling words, or a claim of not having ordered; the Nth and after, or only N, ordered.
_CANCEL = money("cancel")
# (an item named and declined, 「配達はなしで」: a cancel only of the item it names)
_DECLINED = money("declined")
_NOT_ORDERED = money("not_ordered")
_ORDINAL = money("ordinal")
_ONLY_COUNT = money("only_count")
# The bill asked for only to see it: the running total, not paying.
_BILL_WORD = money("running_bill_word")
_RUNNING = money("running")
_AMOUNT = money("amount")
UNIT_PRICE = money("unit_price")
_HANDS_OVER = money("hands_over")
_PAID_ASKED = money("paid_asked")
_RECAP = money("recap")
# (a recap word with a firm request in its sentence orders: 「かすみ草を一つ追加、それだけ」)
_ASKS_FIRMLY = compiled("shop", "asks_firmly")
_RECAP_SAID = money("recap_said")
# 「いや、それだけですけど。で、ハイボールまだかな？」: a line asking after an order recounts nothing
_STATUS_ASKED = compiled("shop", "status_asked")
_COUNT = compiled("counts", "count")
_CORRECTED = money("count_corrected")
# (a cancel said with は or も gives up the item right before it: 「きんぴらはやめとく」)
_TOPIC_PARTICLE = compiled("conversation", "bill_topic_particle")
# (「2杯しか」 says how many were had only beside a word of ordering or having)
_ORDERING_WORD = compiled("conversation", "bill_ordering_word")


def cancels(text: str) -> bool:
    """Whether `text` takes something off the bill in so many words (「取り消して」「バラはいりません」「配達はなしで」)."""
    normalised = nfkc(text)
    return bool(_CANCEL.search(normalised) or _DECLINED.search(normalised))


def asks_if_paid(text: str) -> bool:
    """Whether `text` asks if the bill is paid (「お金はもうはらったよね？」「もう払わなくていいよね？」): the ledger
    answers — settled, or what is owed."""
    return bool(_PAID_ASKED.search(nfkc(text)))


def hands_over(text: str) -> bool:
    """Whether `text` hands money over in so many words, asking nothing about what the bill holds (a sum checked
    on the way, 「1,600円ですよね」, still pays)."""
    normalised = nfkc(text)
    return bool(_HANDS_OVER.search(normalised)) and not _ABOUT_BILL.search(normalised)


def _meaning_of_other(sentence: str) -> bool:
    """Whether the sentence asks what a thing other than the tab meant (「チラシの話って結局どういうこと？」; not
    「2600円ってどういうこと？」)."""
    found = _MEANING_OF_THING.search(sentence)
    if found is None:
        return False
    thing = found.group("thing").lstrip("、, ")
    return not amounts(thing) and not money("bill_of").match(thing)


def disputes(text: str, item_named: bool = False, known: frozenset[int] | None = None, billed: bool = False) -> bool:
    """Whether `text` asks about the bill or doubts it, rather than pays it.  What comes before a sentence that
    moves on is let go of: 「ラッピングで200円取るのか。まあいい。ところで颯太くんは孫かい？」 asks about 颯太.
    `item_named`: the line names a menu item, so 「おでんって何が入ってます？」 asks what it holds, not the bill;
    `known`: the sums the tab holds (its total, its items' prices), where the caller knows them; `billed`: a line
    of money was said just before, so 「どういうこと？」 asks what that meant."""
    normalised = nfkc(text)
    said = sentences(normalised) or [normalised]
    # a sentence that moves on (ところで, それより) lets go of what came before it
    moved = max((i for i, sentence in enumerate(said) if _MOVES_ON.match(sentence)), default=0)
    kept = said[moved:]
    questions = [sentence for sentence in kept if is_question(sentence)]
    for sentence in kept:
        # (what was had recounted, 「飲み食いしたのは…それだけ」, checks the bill too)
        # (「…もうママだったよね」 recounts nothing: a recap without a word of checking needs what was had named)
        about = _ABOUT_BILL.search(sentence) or _RECAP_SAID.search(sentence) or \
            (billed and _MEANING_ASKED.search(sentence) and not _meaning_of_other(sentence)) or \
            (_RECAP.search(sentence) and (item_named or amounts(normalised) or _COUNT.search(normalised)) and
             not _STATUS_ASKED.search(normalised) and not _ASKS_FIRMLY.search(sentence))
        if about and not (item_named and _CONTENTS.search(sentence) and not _BILL_WORD.search(sentence)):
            return True
    # (a sum in a question — not said back — is about the bill when it is one the tab holds, where the tab's sums are given: 「予算
    # 3000円で足りますか？」 asks about a budget)
    def of_the_tab(sentence: str) -> bool:
        return known is None or bool(_BILL_WORD.search(sentence)) or any(n in known for n in amounts(sentence))
    return bool(any(_AMOUNT_ASKED.search(sentence) for sentence in kept) or
                any(_AMOUNT.search(sentence) and of_the_tab(sentence) for sentence in questions) or
                (_BILL_WORD.search(normalised) and _RUNNING.search(normalised)))


def taking_back(text: str) -> str:
    """The sentence of `text` that takes something off the bill (「ひまわりは0本で！かすみ草だけで」: the first), else
    the whole text: the items it names are the ones taken back."""
    found = [sentence for sentence in sentences(nfkc(text))
             if cancels(sentence) or _NOT_ORDERED.search(sentence) or fewer_by(sentence) is not None]
    # (a bare 「キャンセル！！」 before the sentence that says what: 「キャンセル！！スズランとかすみ草、取り消して」)
    named = [sentence for sentence in found if re.sub(r"[\W_]", "", _CANCEL.sub("", sentence))]
    chosen = (named or found or [nfkc(text)])[0]
    cue = _CANCEL.search(chosen)
    if cue is not None and (rest := re.search(r"[、,]", chosen[cue.end():])) is not None and \
            re.sub(r"[\W_]", "", chosen[:cue.start()]):
        # 「かすみ草やめて、ひまわり一本で」: what is said after the clause that cancels is no item taken back
        chosen = chosen[:cue.end() + rest.start()]
    return chosen


def asks_an_amount(text: str) -> bool:
    """Whether the last question of `text` checks a sum (「一皿600円なんですか？」「2,800円？」)."""
    questions = [sentence for sentence in sentences(nfkc(text)) if is_question(sentence)]
    return bool(questions) and bool(_AMOUNT_ASKED.search(questions[-1]) or _AMOUNT.search(questions[-1]))


def itemised(ordered: Iterable[str], prices: Mapping[str, int]) -> tuple[str, int]:
    """What was served with a price, each with its price (「水割り700円、ナポリタン800円×2」), and the sum."""
    counts = Counter(item for item in ordered if item in prices)
    parts = [f"{item}{prices[item]:,}円" + (f"×{n}" if n > 1 else "") for item, n in counts.items()]
    return "、".join(parts), sum(prices[item] * n for item, n in counts.items())


def fewer_claimed(text: str, claimed: Mapping[str, int], ordered: list[str]) -> list[str] | None:
    """What is left counted where `text` corrects the bill by saying fewer of its items than it counts
    (「水割りは二杯で、ナポリタンは一皿しかいただいてないと思うんだけど」: `claimed` holds the count said of each item
    named); None where it says no fewer, or says it without a word of correcting (「ハイボール2杯追加」 orders)."""
    lower = {item: n for item, n in claimed.items() if item in ordered and n < ordered.count(item)}
    if not lower or not _CORRECTED.search(nfkc(text)) or fewer_by(nfkc(text)) is not None:
        return None       # (「ひまわりを1本減らして」: a count taken off, not the count had — taken_back reads it)
    return _last_taken_off(ordered, {item: ordered.count(item) - n for item, n in lower.items()})


def more_claimed(claimed: Mapping[str, int], ordered: list[str], basket: frozenset[str]) -> list[str] | None:
    """What is counted where the player says more of goods in the basket than it holds (「かすみ草は2本です！ 2本で
    600円でしょ？」, 「合計いくら？かすみ草2本とスズラン1本で」): goods are picked by the player, who knows how many;
    None where nothing is said to be more.  (A drink said to be more than was served is not added: it was poured.)"""
    more = {item: n - ordered.count(item) for item, n in claimed.items()
            if item in basket and item in ordered and n > ordered.count(item)}
    if not more:
        return None
    return [*ordered, *(item for item, n in more.items() for _ in range(n))]


def _last_taken_off(ordered: list[str], drop: dict[str, int]) -> list[str]:
    """`ordered` less `drop[item]` of each item, the last ones served coming off first."""
    left = []
    for served in reversed(ordered):
        if drop.get(served):
            drop[served] -= 1
            continue
        left.append(served)
    return left[::-1]


def _last_named_before(text: str, at: int, named: list[str]) -> str | None:
    """The item of `named` whose last mention in `text` ends nearest before `at`, or None."""
    found = [(text.rfind(item, 0, at), item) for item in named]
    found = [(pos, item) for pos, item in found if pos >= 0]
    return max(found)[1] if found else None


def _kept(had: int, fewer, ordinal: re.Match[str] | None, only: re.Match[str] | None, one_off: bool) -> int:
    """How many of an item stay after it is taken back: `fewer` off (「ひまわり8本キャンセル」), those before the
    ordinal (「2杯目は」), the count said (「2杯しか」), one (a cancel, or the one just served pointed at: 「今の大根は
    頼んでないから、取り消して」), else none."""
    if fewer is not None:
        return max(0, had - fewer.n)
    if ordinal:
        return min(had, (number(ordinal.group(1)) or 0) - 1)
    if only:
        return min(had, (number(only.group(1)) or 0))
    return had - 1 if one_off else 0


def _denial_of_named(normalised: str, named: list[str]) -> re.Match[str] | None:
    """Where the line denies having ordered (頼んでない, 飲んでない), and of an item named before the denial in its
    sentence (「俺今日お酒飲んでないっすよ笑 ウーロン茶しか頼んでないです」 denies no item: the one named after it is
    what was had); None where it denies nothing or nothing named."""
    denied = _NOT_ORDERED.search(normalised)
    if denied is not None and named and not any(
            item in normalised[sentence_start(normalised, denied.start()):denied.start()] for item in named):
        return None
    return denied


def taken_back(text: str, named: list[str], ordered: list[str], recent: str | None,
               basket: frozenset[str] = frozenset(), item_ends: Mapping[int, str] | None = None) -> list[str] | None:
    """What is left counted after `text` takes items back, or None where it takes nothing back.

    `named`: the menu items the text names; `ordered`: what was served, in order; `recent`: the item served in the
    last turns (「キャンセル」 alone takes it back).  A count says how many stay (「2杯目は」 keeps one, 「2杯しか」
    keeps two); an item named without one is taken off once when cancelled (取り消して) and wholly when denied
    (頼んでない); goods (`basket`: chosen into one basket, 「ひまわり抜いてください」) are taken off wholly.
    `item_ends`: where the text's menu items end, and which item each is, so a giving up said with は or も is of the
    item right before it (「ナポリタンでお腹いっぱいだから、きんぴらはやめとく」: the きんぴら, whatever else is named)."""
    normalised = nfkc(text)
    cancel = _CANCEL.search(normalised)
    ordinal, only = _ORDINAL.search(normalised), _ONLY_COUNT.search(normalised)
    if cancel is not None and only is not None and \
            not sentence_start(normalised, cancel.start()) <= only.start() < sentence_end(normalised, cancel.start()):
        only = None          # (「かすみ草はキャンセル。一本しか買えねえって」: the count is of another sentence)
    denied = _denial_of_named(normalised, named)
    if denied is not None:
        # 「一杯目は濃いめ、二杯目は薄め。三杯目は飲んでないわ」: the ordinal of what is denied, the last before it
        ordinal = next(reversed([m for m in _ORDINAL.finditer(normalised, 0, denied.start())]), ordinal)
    fewer = fewer_by(normalised)
    if cancel is not None and item_ends is not None and _TOPIC_PARTICLE.match(cancel.group(0)):
        before = len(normalised[:cancel.start()].rstrip(" 、,"))
        if before in item_ends:
            if item_ends[before] in named:
                named = [item_ends[before]]   # only the item right before the particle is given up
        else:
            # (「ナポリタンでお腹いっぱいなので今日はやめときます」: what is given up is not the item named — only one
            # named right before the particle is taken back: 「ナポリタンはやめとく」)
            cancel = None
    if named and cancel is None:
        # (declined only of an item named right before: 「配達なしで」; 「水割り、氷なしで」 takes back no drink)
        # (or, said at the start of a sentence, of the item named last before it: 「ラッピングお金かかるんだ…。
        # なしでいいです」)
        # (the item may be named by another of its words: 「包装なしで」 of ラッピング)
        def right_after_item(at: int) -> bool:
            before = normalised[:at].rstrip(" 、,")
            return any(before.endswith(item) for item in named) or (item_ends is not None and len(before) in item_ends)
        cancel = next((m for m in _DECLINED.finditer(normalised)
                       if right_after_item(m.start()) or
                       (not normalised[sentence_start(normalised, m.start()):m.start()].strip(" 、,…") and
                        _last_named_before(normalised, m.start(), named) is not None)), None)
        if cancel is not None and not any(normalised[:cancel.start()].rstrip(" 、,").endswith(i) for i in named):
            named = [_last_named_before(normalised, cancel.start(), named) or named[-1]]
    if not (cancel or denied or fewer or (only and _ORDERING_WORD.search(normalised))):
        return None
    items = [item for item in dict.fromkeys(named) if item in ordered]
    if len(items) > 1:
        if fewer is not None or only or denied or not cancel:
            # which count is of which is not read here, nor a claim that several served were never ordered
            # (「コーヒーとカレーは頼んでない」): the breakdown answers
            return None
        # 「スズランとかすみ草、やっぱいらないです」: each named comes off (once, a drink; goods, wholly)
        return _last_taken_off(ordered, {item: ordered.count(item) if item in basket else 1 for item in items})
    # (nothing named: what is cancelled, or denied and pointed at, is the one just served — 「注文したのではありま
    # せんよ。…それは結構です」; a denial alone, 「え、もう一皿？そがん頼んどらんよ」, is of no plate served)
    latest, this_one = money("latest_pointed").search(normalised), money("this_one_pointed").search(normalised)
    item = items[0] if items else (recent if (cancel or denied and (latest or this_one)) and not named else None)
    if item is None and ordinal and not named:
        # 「さっきの2皿目、取り消しでいいよな？」: the one item of which that many were served
        nth = number(ordinal.group(1)) or 0
        often = [i for i in dict.fromkeys(ordered) if ordered.count(i) >= nth > 1]
        item = often[0] if len(often) == 1 else None
    if item is None:
        return None
    # (the one just served pointed at — 「今の大根」, or 「これ」 of the item served last — is that one, not all of it)
    pointed = bool(latest or (item == recent and this_one))
    keep = _kept(ordered.count(item), fewer, ordinal, only,
                 one_off=bool((cancel and not denied or pointed and (cancel or denied)) and item not in basket))
    if keep >= ordered.count(item):
        return None
    return _last_taken_off(ordered, {item: ordered.count(item) - keep})
