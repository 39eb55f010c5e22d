"""Orders: the player asks for an item of a character's menu (scenario data), and is served.

An order names an item (its id or one of its `words`: ビール, 生, 大根 for おでん) with an ordering cue close
to it — ください, ひとつ, お願い, 〜で, 〜にする, 飲みたい, ある？ — and no other thing in between
(「ナポリタンを看板メニューにしよう」 is an opinion about the menu, not an order).  It is also:

- ``again``: おかわり, もう一杯, 同じの — the item ordered last;
- ``ask``: an order naming no item (何か飲み物ちょうだい; yes to 「何か飲む？」): the server asks what;
- ``missing``: an ordering cue with a word near food or drink in meaning that no menu of the place holds
  (カクテルある？): the server says so;
- a yes to a character's offer that names an item (「ナポリタン、食べていく？」「うん」).

Who serves: the addressed character when they have the item, else whoever present has it, else the
addressed character (or the place's responder) with their menu's `missing` lines.  A place where nobody
present has a menu answers orders as before (the 注文 reaction).  Paying (お会計) is not an order.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from .. import lazyre
from ..interpret.asking import WH, is_question, sentence_end, sentence_start
from ..interpret.counts import (
    Count,
    count_claimed,
    count_of,
    count_sentence_after,
    each_after,
    joined,
    of_the_last,
    orders_by_count,
)
from ..interpret.ja import analyse, word_meaning
from ..interpret.ja.tokens import ATTRIBUTIVE_OR_FINAL, TAG, VERB, Token
from ..interpret.lexicon import compiled, listed, mapping, pattern, word_class
from ..interpret.money import amounts, asks_to_pay, money
from ..interpret.text import TextForms, make_matcher, nfkc
from ..scenario import CompiledScenario
from .undone import not_ordered, treats_not, turned_down

OrderKind = Literal["item", "again", "ask", "missing", "adjust", "treat", "declined", "coming", "extra", "about",
                    "paid"]

# Cues that order whatever is named right before them.
_CUE = compiled("shop", "order_cue")
_OTHER_ACT_ASKED = compiled("shop", "other_act_asked")
_AT_HAND = compiled("shop", "at_hand")
_MUSING = compiled("acts", "musing")
_SUPPOSED_AFTER_CUE = compiled("shop", "supposed_after_cue")
# Between two items of a line, a word that says the later one instead (「…いや、」「じゃなくて」).
_SAID_INSTEAD = compiled("corrections", "said_instead")
# A part of a dish given up where it is named (「卵やめて、牛すじに」「卵はいらんって」): not served.
_PART_GIVEN_UP = compiled("undone", "part_given_up")
_COUNT_AS_MEASURE = compiled("shop", "count_as_measure")
_COUNT_ASKED_OF = compiled("shop", "count_asked_of")
_HAD_AFTER_COUNT = compiled("undone", "had_after_count")
# A noun after an ordering verb that leaves it an order: 「ビール頼むことにするわ」 decides.
_DECIDED_AFTER_CUE = compiled("shop", "decided_after_cue")
# What joins the items of a list (「かすみ草とひまわり」).
_LIST_JOINER = compiled("shop", "list_joiner")
# One item on the tab swapped for another (lexicon shop.swap_*).
_SWAP_BETWEEN = compiled("shop", "swap_between")
_SWAP_BY_CHANGE = compiled("shop", "swap_by_change")
_SWAP_AFTER = compiled("shop", "swap_after")
_SWAP_CHANGE = compiled("shop", "swap_change")
# 「じゃあそれで」「それください」: the item just named.
_THAT_ONE = compiled("orders", "that_one")
# (「もう一つは入院してる友達だ」: the other one, a topic, orders nothing)
_AGAIN = compiled("shop", "again")
_AGAIN_DENIED = compiled("shop", "again_denied")
# How many there are, asked (「在庫は今何本くらいありますか？」): the item said bare after it is what is asked of.
_QUANTITY_ASKED = compiled("shop", "quantity_asked")
_LATER_DAY = compiled("shop", "later_day")
_COLOUR = compiled("shop", "colour")
_ANYTHING = compiled("shop", "anything_asked")
# 「ナポリタンも気になるけど、まず飲み物を」: turned from the item to the request after it
_SWITCH_BEFORE_ASK = compiled("orders", "switch_before_ask")
# Hunger or thirst told asks for something to eat or drink (「お腹すいたなあ」).
_HUNGER = compiled("shop", "hunger")
_WHAT_IS_SOLD = compiled("shop", "what_is_sold")
_MENU_SUBJECT = compiled("shop", "menu_subject")
# the particles that mark what a question is about (「映写室って、…」「倉庫には…」)
_TOPIC_MARK = compiled("shop", "topic_particle")
_OF_PARTICLE = compiled("orders", "of_particle")
_COUNT = compiled("counts", "count")
# between an item and its cue, words that name no other thing (「ビールとりあえずひとつ」)
_LEAD_WORDS = compiled("orders", "lead_words")
_TAKEN_BACK_AFTER = compiled("shop", "taken_back_after")
_HESITATED = compiled("shop", "hesitated_after")
_ASKS_FOR = compiled("shop", "asks_for")
# 「配達ってできますか？」「届けてもらえたりします？」: whether it can be had, not a request for it
_ASKS_POSSIBLE = compiled("shop", "asks_possible")
_ASKS_FIRMLY = compiled("shop", "asks_firmly")
_ASKS_WHICH = compiled("shop", "asks_which")
_PRICE_ASKED = compiled("money", "price_asked")
_NOT_SOLD = compiled("shop", "not_a_thing_sold")
_RECAP = compiled("money", "recap")
_STOCK_NOTICED = compiled("shop", "stock_noticed")
_WONDERING = compiled("shop", "wondering")


def _clause_end(text: str, at: int) -> int:
    """Where the sentence that `at` lies in ends (after its question mark, if one), or the text's end; a
    sentence that only names things (「赤いバラもあるのよね。一本いくら？」) runs on to the next."""
    end = sentence_end(text, at)
    return sentence_end(text, end) if end < len(text) and text[end - 1] == "。" else end


def _describes_noun(text: str, end: int) -> bool:
    """Whether the ordering verb that ends at `end` describes the noun after it, a relative clause that orders
    nothing (「常連さんってビール頼む人が多い？」「ナポリタン頼むお客さん多いでしょ」).  A noun that ends its
    sentence is the one spoken to (「ビール頼むママ！」), and こと makes the verb a decision (「頼むことにする」)."""
    tokens = analyse(text).tokens
    at = next((k for k, t in enumerate(tokens) if t.end == end), None)
    if at is None or tokens[at].kind != VERB or not tokens[at].conjugation.startswith(ATTRIBUTIVE_OR_FINAL):
        return False
    after = [t for t in tokens[at + 1:] if not t.is_prefix]
    return len(after) >= 2 and after[0].is_noun and not after[1].is_mark and \
        not _DECIDED_AFTER_CUE.match(text[after[0].start:])


def _had_before(text: str, hit: _Hit, hits: list[_Hit]) -> bool:
    """Whether the item at `hit`, or the list it ends (「ひまわり2本とかすみ草」), follows a clause saying it was
    bought or had before (「さっき買った…」: undone.had_before_item): spoken of, not ordered again."""
    first = hit
    for other in sorted(hits, key=lambda h: h.start, reverse=True):
        if other.end <= first.start and _LISTED_BETWEEN.match(text[other.end:first.start]):
            first = other
    return bool(_HAD_BEFORE.search(text[sentence_start(text, first.start):first.start]))


def _declined_later(text: str, end: int) -> bool:
    """Whether a later sentence declines the item ending at `end`, named bare before it, with no request in
    between (「お通し。小鉢のやつ。今日はなしでいいってこと」)."""
    later = _DECLINED_LATER.search(text, sentence_end(text, end))
    return later is not None and not _ASKS_FIRMLY.search(text, end, later.start())


def asks_after_order(text: str) -> bool:
    """Whether `text` (normalised) asks after an order's coming (「ハイボールまだかな？」「いつ来るの」)."""
    return bool(_STATUS.search(text))


def already_ordered(text: str) -> bool:
    """Whether `text` (normalised or not) says the player ordered before (「さっき頼みました」「もう注文しましたよね」)."""
    return bool(_ALREADY.search(nfkc(text)))


def asks_firmly(text: str) -> bool:
    """Whether `text` (normalised) asks for something in so many words (ください, お願い, ちょうだい)."""
    return bool(_ASKS_FIRMLY.search(text))


def only_asks_price(text: str) -> bool:
    """Whether `text` asks a price and asks for nothing (「一本いくら？」)."""
    normalised = nfkc(text)
    return bool(_PRICE_ASKED.search(normalised)) and not _ASKS_FIRMLY.search(normalised)


def asks_if_possible(text: str, at: int = 0) -> bool:
    """Whether `text` (normalised), from `at`, asks whether a thing can be had or done, asking for nothing."""
    found = _ASKS_POSSIBLE.search(text, at)
    if found is None or _ASKS_FIRMLY.search(text, at):
        return False
    start = sentence_start(text, found.start())
    return not _ASKS_WHICH.search(text, start, found.end())
_AMOUNT_ANY = compiled("money", "amount_any")
# The words of food and drink a thing asked for is compared with in meaning (lexicon orders.food_anchors).
_FOOD_ANCHORS = listed("orders", "food_anchors")
# Words that praise or place the item, not another thing (「名物のナポリタン」「いつものハイボール」「自慢のおでん」).
_SAID_OF_ITEM = compiled("orders", "said_of_item")
_BARE = compiled("orders", "bare")
_OF_A_THING_BEFORE = compiled("counts", "of_a_thing_before")
_SUBJECT_MARK = compiled("orders", "subject_mark")
# A question about the item (いつからある？ どんな味？ 何が入ってる？) is not an order of it.
_WH = WH
_TOPIC_AFTER = compiled("shop", "topic_after")
_RECOGNISED_AFTER = compiled("shop", "recognised_after")
# 「えーまだハイボール2杯だよ！」: how many so far, told (counts.so_far)
_SO_FAR = compiled("counts", "so_far")
# one more by the glass is of the last drink, by the plate of the last dish
_BY_GLASS = compiled("orders", "by_glass")
_BY_PLATE = compiled("orders", "by_plate")
# 「焼酎の水割り」: a thing named for the item; お or ご before a word of food
_MODIFIER_BEFORE = compiled("orders", "modifier_before")
_POLITE_LEAD = compiled("orders", "polite_lead")
NEAR_FOOD = 0.4
NEAR_ALONE = 0.6
_KATAKANA = compiled("orders", "katakana")
# one katakana letter, not the middle dot: a katakana word runs on across it
_KATAKANA_LETTER = compiled("orders", "katakana_letter")
_KANA = compiled("orders", "kana")
_THING_SUFFIX = compiled("orders", "another_thing_suffix")
_STRONG_CUE = compiled("orders", "strong_cue")


# How a drink is wanted (薄めで, 濃いめ, 氷多め): acknowledged, never contradicted by the item's own line.
_STYLE = compiled("orders", "style")
_STYLE_WORD = mapping("orders", "style_words")
_STYLE_NOT = compiled("orders", "style_not")
_STYLE_OF_WHOLE = compiled("orders", "style_of_whole")
# 「わしにだけ大盛りにしてくれよった」: a way of making it told of another time, no request
_DONE_FOR_ONE = compiled("undone", "done_for_one")
# the word right before a way (「からし多め」): part of the way, unless it is an item
_WORD_BEFORE_STYLE = compiled("orders", "word_before_style")
_HAD_BEFORE = compiled("undone", "had_before_item")
_DECLINED_LATER = compiled("undone", "declined_later")
# 「葵さんの分、ハイボールお願いします」: the one a treat is for, by what follows their name
_TREATED_AFTER_NAME = compiled("shop", "treated_after_name")
_ORDER_JOINED = compiled("shop", "order_joined")
_WORTH = compiled("money", "worth")
_WORTH_EDGES = compiled("orders", "worth_edges")
# what joins the items of one list: counts, と, や, a comma
_LISTED_BETWEEN = compiled("counts", "listed_between")
_ADJUST = compiled("orders", "adjust")
_MADE_SO_END = compiled("orders", "made_so_end")
# 「レモンサワーってない？なければ水割りで」: the item after it is served if the one before is not.
FALLBACK = compiled("orders", "fallback")
# 「一杯おごります」「ママにも水割りを」: the player treats a character.
_TREAT = lazyre.compile(pattern("orders", "treat") + "|" + pattern("money", "pays_for_it"))
_TO_SOMEONE = compiled("orders", "to_someone")
_TREAT_NAMED_END = compiled("orders", "treat_named_end")
# 「ソーダ割り」「お茶割り」: a drink mixed with the thing named, not the thing
_MIXED = compiled("orders", "mixed")
_MIXED_END = compiled("orders", "mixed_end")
_POLITE_PREFIX = compiled("orders", "polite_prefix")
# 「…？あとウーロン茶も」: an item and も alone, the sentence before it asking
_ALSO_BARE = compiled("shop", "also_bare")
# 「…一杯もらっていい？」: a drink the player receives, nobody treated
_RECEIVED = compiled("shop", "received")
_TREAT_PARTICLES = compiled("shop", "treat_particles")
# 「ナポリタンまだ？」「いつ来るんだ」: asking after an item ordered.
_STATUS = compiled("shop", "status_asked")
# 「水割りは出てくるんすか？」: asking after an item only once it was ordered (before, it asks what is served);
# not 「…でお願いできますか？」, which asks for it.
_STATUS_ORDERED = compiled("orders", "status_ordered")
# 「いや、さっき頼みましたよ」: the player already ordered (the item named, the last ordered, or the one offered).
_ALREADY = compiled("orders", "already")
_STATUS_ORDER = compiled("orders", "status_order")
# Money handed over after the bill (「はい、6500円」「釣りはいらん」「これで」; lexicon money.handed_over)
PAID = money("handed_over")
# 「タバスコでいいや」「ケチャップじゃなくて粉チーズな」: a condiment or a change asked for the order just served.
_EXTRA_SWAP = compiled("orders", "extra_swap")
_EXTRA = compiled("orders", "extra")
# (a thing said with only な or ね after it: 「昭和歌謡な」)
_PARTICLE_END = compiled("orders", "particle_end")
_POINTING_OR_USUAL = compiled("orders", "pointing_or_usual")
# 「ピーマン抜いて」「玉ねぎなしで」「氷抜きってできる？」: a thing taken out of the dish, never an order of it.
_WITHOUT = compiled("orders", "without")
_WITHOUT_WORD = mapping("orders", "without_words")
_WORD_BEFORE_WITHOUT = compiled("orders", "word_before_without")
_POINTING_OR_WHAT = compiled("orders", "pointing_or_what")
_ICE = compiled("orders", "ice")
_DRINK_WORD = compiled("shop", "drink_word")
_FOOD_WORD = compiled("shop", "food_word")
# (ちくわ|ぶっ: the small っ glued on is no part of the word)
_GLUED_SMALL_TSU = compiled("orders", "glued_small_tsu")


def _names_nothing(sentence: str) -> bool:
    """Whether a sentence names no thing of its own (「もうすぐですか？」「まだかな？」: only a status asked), so what it
    asks after is the order."""
    return not any(t.is_common_noun and not t.is_adverbial for t in analyse(sentence).tokens)


def _fragment(tokens, i: int) -> bool:
    """Whether the kana token at `i` is left over from a word the analyser does not know, glued to the word
    before it (the ぶ of ちくわぶ, read as a suffix, a prefix of nothing, or a noun of one kana)."""
    token = tokens[i]
    if not _KANA.fullmatch(token.surface):
        return False
    kind = token.pos[:1]
    return kind == (TAG.suffix,) or (kind == (TAG.prefix,) and not _prefixes(tokens, i)) or \
        (kind == (TAG.noun,) and len(token.surface) == 1)


def _prefixes(tokens, i: int) -> bool:
    """Whether the prefix at `i` is one of the word after it (the お of お願い), not left over from a word the
    analyser does not know (the ぶ of 「ちくわぶ…」)."""
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    return after is not None and after.start == tokens[i].end and after.pos[:1] in ((TAG.noun,), (TAG.verb,), (TAG.adjective,))


@dataclass(frozen=True)
class OrderFound:
    kind: OrderKind
    item: str | None             # menu item id (None for ask / missing)
    server: str                  # character id who answers
    named: str | None = None     # the player's words for it (debug)
    instead: str | None = None   # a thing asked for first that is not served (焼酎, レモンサワー), said before the item
    style: str | None = None     # how it is wanted (薄め), acknowledged instead of the item's own line
    treated: str | None = None   # the character the player treats (kind "treat")
    group: str | None = None     # drink or food: what a request naming no item (or an item not served) is about
    parts: tuple[str, ...] = ()  # parts of the item named (大根, 卵 of おでん)
    count: int = 1               # how many of the item (「赤い薔薇を5本」: 5)
    counted: str | None = None   # the player's words for the count (「5本」), acknowledged by the menu's `counted`
    total: bool = False          # `count` is the item's new total on the bill (「5本にしてください」), not more of it
    more: bool = False           # `count` was said as more of it (「あと3本」「追加で2つ」)
    # other items of the same order, said before this one and served with it
    also: tuple[tuple[str, int, str | None, bool], ...] = ()   # (item, count, the words for it, a new total)
    amount: int | None = None    # the money handed over (kind "paid": 「はい、3,000円」)
    keep_change: bool = False    # the change is left to the house (「釣りはいらねえ」「取っといて」)
    change: int | None = None    # the change asked back (kind "paid": 「お釣り500円お願いします」)
    swapped: str | None = None   # an item on the tab given up for this one (「ハイボールやめてビールにして」)
    listing: bool = False        # what the menu holds was asked (kind "ask"; of `group`, else all but services)

    def to_dict(self) -> dict:
        found: dict[str, object] = {"kind": self.kind, "item": self.item, "server": self.server, "named": self.named}
        found.update({k: v for k, v in (("instead", self.instead), ("style", self.style),
                                         ("treated", self.treated), ("group", self.group),
                                         ("parts", list(self.parts)), ("count", self.count if self.counted else 0),
                                         ("total", self.total), ("also", [list(a) for a in self.also]),
                                         ("amount", self.amount), ("listing", self.listing),
                                         ("keep_change", self.keep_change), ("change", self.change),
                                         ("swapped", self.swapped)) if v})
        return found

    def but(self, **changes) -> OrderFound:
        return replace(self, **changes)


def style_of(text: str, items: Iterable[str] = ()) -> tuple[str | None, str]:
    """The last style asked for in `text` (not one turned down: 「濃いめは困ります」), and the text without them.
    A thing named right before it is part of it (からし多め, 粉チーズたっぷり), unless it is an item (`items`:
    「おでん多め」 is おでん, made that way)."""
    found = None
    spans: list[tuple[int, int]] = []
    for match in _STYLE.finditer(text):
        start = match.start()
        style = _STYLE_WORD.get(match.group(1), match.group(1))
        before = _WORD_BEFORE_STYLE.search(text[:start])
        if before is not None and not _STYLE_OF_WHOLE.match(style):
            nouns = [t for t in analyse(before.group(1)).tokens if t.is_noun]
            if nouns and nouns[-1].end == len(before.group(1)) and nouns[-1].surface not in items:
                thing = "".join(t.surface for t in nouns if t.start >= nouns[0].start)
                if before.group(1).endswith(thing):
                    style, start = thing + style, before.start(1) + len(before.group(1)) - len(thing)
        if not _STYLE_NOT.match(text, match.end()):
            found = style
            spans.append((start, match.end()))
    plain = text
    for start, end in reversed(spans):
        plain = plain[:start] + plain[end:]
    return found, _STYLE.sub("", plain)


@dataclass(frozen=True)
class _Hit:
    item: str
    owner: str
    start: int
    end: int


def _action_glued(text: str, at: int) -> bool:
    """Whether the katakana run from `at` is one word naming an action done to what comes before it (the
    キャンセル of 「ナポリタンキャンセルで」, a noun the dictionary marks as taking する), not a thing it makes
    a compound with (ビールサーバー, ウーロンハイ)."""
    end = at
    while end < len(text) and _KATAKANA_LETTER.fullmatch(text[end]):
        end += 1
    tokens = analyse(text[at:end]).tokens
    return len(tokens) == 1 and not tokens[0].oov and TAG.may_take_suru in tokens[0].pos


def _orders_nothing(text: str) -> bool:
    """Whether the line (normalised) orders nothing whatever it names: the tab recounted (「俺が飲み食いしたのは、
    ビール1杯、…。それだけ」), or an order mused over and then doubted (「四本にしようかな…いや、四って縁起悪い
    ですか？」) — unless something is asked for firmly."""
    if _ASKS_FIRMLY.search(text):
        return False
    return bool(_HESITATED.search(text) or (_RECAP.search(text) and not _STATUS.search(text)))


def _told_of(text: str, end: int) -> bool:
    """Whether the item ending at `end` is what its clause tells of (「ひまわりって水下がりしやすいイメージあって」): a
    topic marker after it and more said of it, not the item chosen."""
    rest = text[end:sentence_end(text, end)]
    marker = word_class("topic_markers").at_start(rest)
    return marker is not None and len(rest[len(marker):].strip(" 、,。！!？?…")) >= 4


class Orders:
    def __init__(self, scenario: CompiledScenario, names: Iterable[str] = (),
                 people_names: dict[str, list[str]] | None = None, spoken: Iterable[str] = ()) -> None:
        self.scenario = scenario
        # things the characters themselves talk of (包み紙 at a florist's that offers two papers): not a thing
        # asked for that the shop does not have
        self.spoken = {nfkc(w) for w in spoken if w}
        self.people_names = people_names or {}
        self.menus = scenario.menus
        self.matcher = make_matcher()
        self.names = {nfkc(n) for n in names if n}
        self._words = {(c, item.id): tuple(dict.fromkeys([item.id, *item.words, *item.parts]))
                       for c, menu in self.menus.items() for item in menu.items}
        self._parts = {(c, item.id): {nfkc(p) for p in item.parts}
                       for c, menu in self.menus.items() for item in menu.items}
        self.ids = {item.id for menu in self.menus.values() for item in menu.items}
        # words for a kind of the menu's items as a whole (花 at a florist's): a question about them lists the items
        self._called = {nfkc(word): (c, kind) for c, menu in self.menus.items()
                        for kind, words in menu.called.items() for word in words}
        self._places = {nfkc(p) for p in scenario.places}
        self._anchors = tuple(dict.fromkeys([*_FOOD_ANCHORS, *(w for ws in self._words.values() for w in ws)]))

    @property
    def any(self) -> bool:
        return bool(self.menus)

    def serves(self, character: str, item: str) -> bool:
        menu = self.menus.get(character)
        return menu is not None and any(i.id == item for i in menu.items)

    def item(self, character: str, item: str):
        menu = self.menus.get(character)
        return next((i for i in menu.items if i.id == item), None) if menu else None

    def named(self, text: str) -> list[str]:
        """The menu items `text` names, in the order named (a mention inside a longer one not counted: the 水 of
        水割り is no お水)."""
        return list(dict.fromkeys(h.item for h in self._hits(TextForms.of(text))))

    def swap(self, text: str, tab: Iterable[str]) -> OrderFound | None:
        """The order of the item taken instead of one on `tab` (`swapped`) when `text` swaps one for another
        (「ハイボールやめてビールにして」「ハイボールをビールに変更」「ハイボールはキャンセルして、代わりに生ビール
        ちょうだい」); None where it does not."""
        normalised = nfkc(text)
        hits = sorted(self._hits(TextForms.of(normalised)), key=lambda h: h.start)
        held = set(tab)
        for i, first in enumerate(hits[:-1]):
            second = hits[i + 1]
            if first.item not in held or second.item == first.item:
                continue
            # (what it is swapped for may be a list: 「ばらはやめて、かすみ草とひまわりにするわ」)
            last = i + 1
            while last + 1 < len(hits) and _LIST_JOINER.fullmatch(normalised[hits[last].end:hits[last + 1].start]):
                last += 1
            between, after = normalised[first.end:second.start], normalised[hits[last].end:]
            if (_SWAP_BETWEEN.match(between) and _SWAP_AFTER.match(after)) or \
                    (_SWAP_BY_CHANGE.match(between) and _SWAP_CHANGE.match(after)):
                taken = list(dict.fromkeys(h.item for h in hits[i + 1:last + 1] if h.item != first.item))
                counts = self._counts_said(normalised)      # (a count said in a later sentence: 「ひまわり二本ね」)
                main, said = hits[last], counts.get(taken[-1])
                return OrderFound("item", taken[-1], main.owner, named=normalised[main.start:main.end],
                                  swapped=first.item, count=said.n if said else 1, counted=said.said if said else None,
                                  also=tuple((item, c.n, c.said, False) if (c := counts.get(item)) else (item, 1, None, False)
                                             for item in taken[:-1]))
        return None

    def spans(self, text: str) -> list[tuple[str, int, int]]:
        """The menu items `text` (normalised) names, each with where its words start and end."""
        return [(h.item, h.start, h.end) for h in self._hits(TextForms.of(text))]

    def counts_said(self, text: str) -> dict[str, Count]:
        """The count said of each item the text names, with the player's words for it (「2本」)."""
        return self._counts_said(nfkc(text))

    def counts_named(self, text: str) -> dict[str, int]:
        """The count said of each item the text names (「水割りは二杯で、ナポリタンは一皿しか…」: 水割り 2,
        ナポリタン 1); an item named without one is not in it."""
        return {item: count.n for item, count in self._counts_said(nfkc(text)).items()}

    def _counts_said(self, normalised: str) -> dict[str, Count]:
        """The count said of each item the text names, with its words; an item named without one is not in it."""
        hits = sorted(self._hits(TextForms.of(normalised)), key=lambda h: h.start)
        out: dict[str, Count] = {}
        bounds: list[int | None] = [h.start for h in hits[1:]]
        for hit, after in zip(hits, [*bounds, None] if hits else [], strict=True):
            count = count_of(normalised, hit.start, hit.end, after)
            if count is not None and not count.more:
                out[hit.item] = count
        return out

    def orders_outright(self, text: str) -> bool:
        """Whether `text` orders an item by its own words (a cue or a count after it), not only by naming it
        after an offer."""
        normalised = nfkc(text)
        return any(self._ordered(normalised, h.end) or orders_by_count(normalised, h.end)
                   for h in self._hits(TextForms.of(normalised)))

    def without_items(self, text: str) -> str:
        """`text` (normalised) with the names of menu items taken out (「で、ひまわりは？」 → 「で、は？」)."""
        spans = sorted((h.start, h.end) for h in self._hits(TextForms.of(text)))
        out, at = [], 0
        for start, end in spans:
            if start >= at:
                out.append(text[at:start])
            at = max(at, end)
        return "".join(out) + text[at:]

    def _hits(self, forms: TextForms) -> list[_Hit]:
        found = []
        for (owner, item), words in self._words.items():
            for hit in self.matcher.hits(forms, words):
                found.append(_Hit(item, owner, hit.start, hit.end))
        # a mention inside a longer word names something else (ウーロンハイ is no ウーロン茶; ちくわぶ, which the
        # analyser cuts as ちくわ and a glued ぶ, is no ちくわ)
        analysed = analyse(forms.nfkc).tokens if found else ()
        tokens = [t for t in analysed if t.is_noun]
        glued = {t.start for i, t in enumerate(analysed) if _fragment(analysed, i)}
        # (a suffix that makes the item another thing names that thing: おでん屋 is a shop, 包み方 a way of wrapping)
        compounded = {t.start for t in analysed if t.pos[:2] == (TAG.suffix, TAG.noun_like) and
                      _THING_SUFFIX.fullmatch(t.surface)}
        text = forms.nfkc
        # (an action glued on in katakana, 「ハイボールキャンセルで」, leaves the item named: the analyser may read the
        # whole run as one unknown word)
        acted = {h.end for h in found if h.end < len(text) and _KATAKANA.fullmatch(text[h.end - 1]) and
                 _KATAKANA_LETTER.fullmatch(text[h.end]) and _action_glued(text, h.end)}
        found = [h for h in found
                 if not any(t.start < h.end < t.end and h.end not in acted or t.start < h.start < t.end
                            for t in tokens)
                 and not (h.end in glued and _KANA.fullmatch(text[h.end - 1]))
                 and h.end not in compounded
                 and not _MIXED.match(text, h.end)                   # (お茶割り is no お茶: a drink mixed with it)
                 and not (_KATAKANA.fullmatch(text[h.end - 1]) and h.end < len(text) and
                          _KATAKANA_LETTER.fullmatch(text[h.end]) and h.end not in acted)
                 and not (_KATAKANA.fullmatch(text[h.start]) and h.start > 0 and
                          _KATAKANA_LETTER.fullmatch(text[h.start - 1]))]
        # the longest mention wins where two overlap (生ビール over 生; フルーツ牛乳 over its フルーツ and its 牛乳)
        found.sort(key=lambda h: (-(h.end - h.start), h.start))
        kept: list[_Hit] = []
        for h in found:
            if any(h.start < k.end and k.start < h.end for k in kept):
                continue
            kept.append(h)
        return sorted(kept, key=lambda h: h.start)

    def read(self, text: str, people: list[str], addressee: str | None, responder: str | None, *,
             last_order: str | None = None, offered: str | None = None, offer_yes: bool = False,
             offer_open: bool = False, mentioned: str | None = None, ordered: Iterable[str] = (),
             recent: str | None = None) -> OrderFound | None:
        """The order in `text`, said where `people` are (addressee and responder among them), or None.
        `ordered`: the items ordered so far; `recent`: the item served in the last turns (a condiment or a
        change asked for is about it).
        `offer_open`: a character just offered something (何か飲む？ 何にする？), so an item named at all is
        an order; `offered`: the item they offered; `offer_yes`: the line says yes to the offer."""
        if not self.menus or not people:
            return None
        normalised = nfkc(text)
        if asks_to_pay(normalised):
            return None
        if _orders_nothing(normalised):
            return None
        about = self._about(normalised, people, addressee, responder, last_order)
        if about is not None:
            return about
        asked_after = self._asked_after(normalised, people, addressee, responder, ordered or (), offered)
        if asked_after is not None:
            return asked_after
        without = self._without(normalised, people, addressee, responder, recent or last_order, ordered or ())
        if without is not None:
            return without
        # (not where an item is ordered outright: 「…お店の話ね。まあいいや、ハイボールください」)
        if recent is not None and not self.orders_outright(normalised) and (extra := self._extra(normalised)) is not None:
            served = self._served(recent, people, addressee, responder, None)
            if served.kind == "item":
                return served.but(kind="extra", named=extra)
        style, plain = style_of(normalised, self.ids)
        found = self._read(plain, people, addressee, responder, last_order=last_order, offered=offered,
                           offer_yes=offer_yes, offer_open=offer_open, mentioned=mentioned, tab=tuple(ordered))
        treated = self._treated(normalised, people, addressee, responder)
        if treated is not None and (found is None or found.kind in ("item", "ask", "missing", "again")):
            # (「ママももう一杯どうぞ、私のおごりで！」: one more, for the one treated)
            treat = self._treat(normalised, treated, found, people, addressee, responder)
            if treat is not None:
                return treat
        if found is None and treated is None and (declined := self._declined(normalised, people, addressee,
                                                                           responder)) is not None:
            return declined           # 「おごりません」「奢れないっす」: turned down, never accepted
        named = self.named(plain) if found is None and style is not None else []
        if found is None and style is not None and asks_if_possible(normalised) and len(named) == 1:
            # 「ハイボール、濃いめにできる？」: the one item asked for made so (a thing asked whether it can be had at
            # all orders nothing, 「配達ってできますか？」; a drink asked of a way to make it is asked for)
            served = self._served(named[0], people, addressee, responder, None)
            found = served.but(style=style) if served.kind == "item" else None
        if found is None and style is not None and last_order is not None and not named and \
                any((_MADE_SO_END.search(m.group(0)) or _ADJUST.match(normalised, m.end())) and
                    not _DONE_FOR_ONE.match(normalised[m.end():]) for m in _STYLE.finditer(normalised)):
            # 「薄くしてもらえる？」 right after a drink: the drink made again that way
            served = self._served(last_order, people, addressee, responder, None)
            return served.but(kind="adjust", style=style) if served.kind == "item" else None
        if found is not None and style is not None and found.kind in ("item", "again", "ask"):
            found = found.but(style=style)
        return self._by_worth(normalised, found)

    def _by_worth(self, text: str, found: OrderFound | None) -> OrderFound | None:
        """An item asked for by a sum's worth (「かすみ草を1000円分ください」: money.worth): as many as it buys."""
        if found is None or found.kind != "item" or found.item is None or found.counted is not None:
            return found
        item = self.item(found.server, found.item)
        if item is None or not item.price:
            return found
        for hit in self._hits(TextForms.of(text)):
            worth = _WORTH.match(text[hit.end:]) if hit.item == found.item else None
            if worth is not None and (sums := amounts(worth.group(0))):
                return found.but(count=max(1, sums[0] // item.price), counted=_WORTH_EDGES.sub("", worth.group(0)))
        return found

    def _read(self, normalised: str, people: list[str], addressee: str | None, responder: str | None, *,
              last_order: str | None, offered: str | None, offer_yes: bool, offer_open: bool,
              mentioned: str | None, tab: tuple[str, ...] = ()) -> OrderFound | None:
        fallback = FALLBACK.search(normalised)
        if fallback is not None:
            return self._with_fallback(normalised, fallback, people, addressee, responder, last_order=last_order,
                                       offered=offered, mentioned=mentioned)
        hits = self._hits(TextForms.of(normalised))
        asked = _ANYTHING.search(normalised)
        if hits and asked is not None and asked.start() >= hits[-1].end and \
                _SWITCH_BEFORE_ASK.search(normalised[hits[-1].end:asked.start()]):
            # 「ナポリタンも気になるけど、まず飲み物を」: the request after it is the one made
            hits, switched = [], True
        else:
            switched = False
        ordered = self._ordered_hits(normalised, hits, offer_yes or offer_open, tab)
        again = self._count_of_earlier(normalised, hits, last_order, people, addressee, responder, tab) \
            if not ordered else None
        if again is not None and not hits and (later := self._unknown_item(normalised)) is not None:
            # 「もう一杯！…あ、レモンサワーにしようかな」: the one more is of what is asked for after it
            server = self._server_for_missing(people, addressee, responder)
            return OrderFound("missing", None, server, later, group=self.group_of(later)) if server else None
        if again is not None:
            return again
        if ordered and _TAKEN_BACK_AFTER.search(normalised, ordered[-1].end):
            return None                # 「ナポリタン、もう一皿…いや、やっぱりやめとこう」: taken back at once
        if ordered:
            return self._for_service(self._chosen(normalised, hits, ordered[-1], people, addressee, responder), tab)
        if hits:
            return self._named_not_ordered(normalised, hits[-1], people, addressee, responder)
        if _THAT_ONE.search(normalised) and mentioned:
            # 「じゃあそれで」: the item just named (by the player or by the one serving)
            return self._served(mentioned, people, addressee, responder, None)
        again_cue = _AGAIN.search(normalised)
        if again_cue and last_order and not _AGAIN_DENIED.search(
                normalised[sentence_start(normalised, again_cue.start()):]):
            served = self._served(self._again_of(again_cue.group(0), last_order, tab), people, addressee, responder,
                                  None)
            return OrderFound("again", served.item, served.server, None) if served.kind == "item" else served
        missing = None if switched else self._unknown_item(normalised)
        if offer_yes and offered and missing is None:
            # (「レモンサワーもらおうかな」 after 「ナポリタン、食べていく？」 asks for the thing it names)
            return self._served(offered, people, addressee, responder, None)
        listing = self._listing(normalised, missing, people, addressee, responder)
        if listing is not None:
            return listing
        if missing is not None:
            server = self._server_for_missing(people, addressee, responder)
            return OrderFound("missing", None, server, missing, group=self.group_of(missing)) if server else None
        return self._asked_for_any(normalised, asked, switched or offer_yes, people, addressee, responder, tab)

    def _asked_for_any(self, text: str, asked: re.Match[str] | None, asks: bool, people: list[str],
                       addressee: str | None, responder: str | None, tab: tuple[str, ...]) -> OrderFound | None:
        """Something to eat or drink asked for with no item named (「何か飲み物ある？」), or hunger told where a
        menu holds food and none is on the tab yet (「お腹すいたなあ」; not at a florist's, nor while a dish is on
        its way: 「カレーまだ？腹ぺこだよ」): what there is.  `asks`: the line asks in any case (a request after a
        switch, a yes to an offer)."""
        server = self._server_for_missing(people, addressee, responder, prefer_menu=True)
        if (asked is not None and (_CUE.search(text) or "?" in text or "？" in text)) or asks:
            group = self._group(text[asked.start():] if asked is not None else text)
            return OrderFound("ask", None, server, None, group=group) if server else None
        if _HUNGER.search(text) and server is not None:
            group = self._group(text)
            kinds = {i.id: i.kind for i in self.menus[server].items}
            if group in kinds.values() and not any(kinds.get(item) == group for item in tab):
                return OrderFound("ask", None, server, None, group=group)
        return None

    def _named_not_ordered(self, normalised: str, last: _Hit, people: list[str], addressee: str | None,
                           responder: str | None) -> OrderFound | None:
        """A line that names items and orders none of them: a kind the menu does not hold asked after, or a thing
        asked for after them, is said to be missing; else an item talked about orders nothing."""
        unsold = self._modifier(normalised, last.start)
        # 「ピンクの薔薇ってないんですか？」: asked whether a kind the menu does not hold is had — said not to be,
        # with what is; nothing goes on the tab.  「ビール…いや、やっぱりレモンサワーください」: what is asked for after it
        missing = unsold if unsold is not None and asks_if_possible(normalised, last.end) else \
            self._unknown_item(normalised[last.end:])
        if missing is None:
            return None
        server = self._server_for_missing(people, addressee, responder)
        return OrderFound("missing", None, server, missing, group=self.group_of(missing)) if server else None

    def _ordered_hits(self, normalised: str, hits: list[_Hit], offered: bool,
                      tab: Iterable[str] = ()) -> list[_Hit]:
        """The items of the line that it orders: each followed by an ordering cue or a count that orders; after an
        offer, the first named (「何か飲む？」「じゃあビール」, not 「ナポリタンはさっき食べた」); none where the line
        asks what there is (「おでんの具は何があるんですか？大根とか卵とか」)."""
        ordered = [h for h in hits if (self._ordered(normalised, h.end) or orders_by_count(normalised, h.end)) and
                   not (_AT_HAND.search(normalised[:h.start]) and _BARE.match(normalised[h.end:sentence_end(normalised, h.end)])) and
                   not _had_before(normalised, h, hits) and not _SO_FAR.search(normalised[sentence_start(normalised, h.start):h.start]) and
                   not _declined_later(normalised, h.end) and not self._what_a_thing_is(normalised, h)]
        if not ordered and offered and hits and not re.search(r"[？?]\s*$", normalised) and \
                not is_question(normalised[sentence_start(normalised, hits[0].start):
                                           sentence_end(normalised, hits[0].end)]) and \
                not _WONDERING.search(normalised) and \
                not not_ordered(normalised[hits[0].end:], "") and not self._price_said(normalised[hits[0].end:]) and \
                not _told_of(normalised, hits[0].end):
            ordered = hits[:1]
        if ordered and _WHAT_IS_SOLD.search(normalised) and not _ASKS_FOR.search(normalised):
            return []
        # 「赤いバラもあるのよね。一本いくら？」: a price asked of it (a count with it says of what), not an order
        ordered = [h for h in ordered if not _PRICE_ASKED.search(normalised, h.end, _clause_end(normalised, h.end)) or
                   _ASKS_FIRMLY.search(normalised, h.end)]
        if ordered and asks_if_possible(normalised, ordered[-1].start) and not self._for_goods(normalised, ordered[-1], tab):
            return []             # asked whether it can be had: nothing goes on the tab until it is asked for
        if ordered and is_question(normalised[sentence_start(normalised, ordered[0].start):]) and \
                _LATER_DAY.search(normalised, sentence_start(normalised, ordered[0].start)):
            return []             # 「六月の土曜日、ひまわりを30本、配達でお願いすることはできますか？」: asked of a day to come
        if ordered and self._service_asked_after(normalised, ordered[-1], tab):
            return []
        if any(self._kind_of(h) == "service" for h in hits):
            # 「薔薇ってラッピングしてもらえますか？」「かすみ草も一本、薔薇と一緒に包んでもらえますか？」 after the rose
            # was bought: goods already had are what the service is for, not bought again
            ordered = [h for h in ordered if self._kind_of(h) != "goods" or h.item not in tab]
        return ordered

    def _what_a_thing_is(self, text: str, hit: _Hit) -> bool:
        """Whether an item said bare is what a thing marked as subject right before it is (「結婚式のブーケがスズラン。」):
        told, not asked for.  A person as that subject is who the item is for (「彼女がカシス、僕がビール」): ordered."""
        if not _BARE.match(text[hit.end:sentence_end(text, hit.end)]):
            return False
        tokens = [t for t in analyse(text[sentence_start(text, hit.start):hit.start]).tokens if not t.is_mark]
        if len(tokens) < 2 or not tokens[-1].is_case_particle or not _SUBJECT_MARK.fullmatch(tokens[-1].surface):
            return False
        subject = tokens[-2]
        return subject.is_noun and TAG.person_name not in subject.pos and nfkc(subject.surface) not in self.names

    def _for_service(self, found: OrderFound, tab: tuple[str, ...]) -> OrderFound:
        """An order of a service (ラッピング) keeps, of the goods joined to it, only those not had yet: goods already
        bought are what the service is for (「薔薇ってラッピングしてもらえますか？」 after the rose)."""
        def kind(item: str) -> str | None:
            got = self.item(found.server, item)
            return got.kind if got is not None else None
        if found.kind != "item" or found.item is None or not found.also or \
                "service" not in {kind(found.item), *(kind(a[0]) for a in found.also)}:
            return found
        return found.but(also=tuple(a for a in found.also if kind(a[0]) != "goods" or a[0] not in tab))

    def _kind_of(self, hit: _Hit) -> str | None:
        item = self.item(hit.owner, hit.item)
        return item.kind if item is not None else None

    def recognised(self, text: str) -> bool:
        """Whether `text` (normalised) says an item alone and then recognises it (「ナポリタン！そうそう、昼は喫茶店
        でしたな」): a memory, read whole — no part of it orders."""
        return any(_BARE.match(text[h.end:sentence_end(text, h.end)]) and _RECOGNISED_AFTER.match(text[h.end:])
                   for h in self._hits(TextForms.of(text)))

    def of_quantity_asked(self, text: str) -> bool:
        """Whether the line asks how many there are and then names the item it asks of, bare (「在庫は今何本くらい
        ありますか？かすみ草で。」): one question, read whole."""
        normalised = nfkc(text)
        return any(_BARE.match(normalised[hit.end:]) and _QUANTITY_ASKED.search(normalised[:sentence_start(normalised, hit.end)])
                   for hit in self._hits(TextForms.of(normalised)))

    def asks_after_service(self, text: str, tab: Iterable[str] = ()) -> bool:
        """Whether `text` (normalised) asks whether a service is done, naming it as what it asks about (「ラッピングは
        していただけるの？」): answered with its price as an offer.  `tab`: what is on the unpaid tab."""
        return any(self._service_asked_after(text, hit, tab) for hit in self._hits(TextForms.of(text)))

    def _service_asked_after(self, text: str, hit: _Hit, tab: Iterable[str] = ()) -> bool:
        """A service set up as the topic of a question that asks for nothing firmly (「ラッピングはしていただけるの？」,
        not 「ラッピングってお願いできますか？」), or asked for at all with no goods bought yet for it to be done to
        (「配達ってお願いできますか？」 before any flower)."""
        if self._kind_of(hit) != "service":
            return False
        sentence = text[sentence_start(text, hit.start):sentence_end(text, hit.end)]
        if not self._goods_in(hit.owner, tab):
            return is_question(sentence)
        return bool(_TOPIC_AFTER.match(text[hit.end:])) and is_question(sentence) and not _ASKS_FIRMLY.search(sentence)

    def _goods_in(self, owner: str, tab: Iterable[str]) -> bool:
        """Whether the tab holds goods of `owner`'s menu (what a service is done to)."""
        return any((got := self.item(owner, had)) is not None and got.kind == "goods" for had in tab)

    def _for_goods(self, text: str, hit: _Hit, tab: Iterable[str]) -> bool:
        """Whether `hit` is a service asked for goods being bought, by the verb that does it (「それ、家まで届けて
        もらうことってできます？」 with flowers on the tab: a request for them).  The service named as what the
        question is about (「ラッピングってできますか？」) asks whether there is one: its price is said as an offer
        and a yes orders it."""
        item = self.item(hit.owner, hit.item)
        return item is not None and item.kind == "service" and not _TOPIC_AFTER.match(text[hit.end:]) and \
            self._goods_in(hit.owner, tab)

    def _with_fallback(self, normalised: str, fallback: re.Match[str], people: list[str], addressee: str | None,
                       responder: str | None, *, last_order: str | None, offered: str | None,
                       mentioned: str | None) -> OrderFound | None:
        """「レモンサワーってない？なければ水割りで」: the first if there is one, else the second (and the first
        said missing)."""
        first = self._read(normalised[:fallback.start()], people, addressee, responder, last_order=None,
                           offered=None, offer_yes=False, offer_open=True, mentioned=None)
        second = self._read(normalised[fallback.end():], people, addressee, responder, last_order=last_order,
                            offered=offered, offer_yes=False, offer_open=True, mentioned=mentioned)
        if first is not None and first.kind == "item":
            return first
        if second is not None and second.kind in ("item", "again"):
            return second.but(instead=first.named if first is not None and first.kind == "missing" else
                              self._unknown_item(normalised[:fallback.start()]))
        return first or second

    def _chosen(self, normalised: str, hits: list[_Hit], chosen: _Hit, people: list[str], addressee: str | None,
                responder: str | None) -> OrderFound:
        """The order of the item ordered last in the line: its parts, its count, the items joined to it, and a
        thing asked for first that it replaces (「焼酎の水割り」)."""
        served = self._served(chosen.item, people, addressee, responder, normalised[chosen.start:chosen.end])
        modifier = self._modifier(normalised, chosen.start)
        if served.kind == "item":
            # 「おでん。大根と卵」: the parts named are what is served
            # (not a part named in a sentence before the order's that orders nothing, nor one only noticed: 「あれ、
            # ちくわあるじゃないですか笑 じゃあ牛すじひとつ」 asks for the 牛すじ alone)
            begins = sentence_start(normalised, chosen.start)
            parts = tuple(dict.fromkeys(normalised[h.start:h.end] for h in hits if h.item == chosen.item and
                                        normalised[h.start:h.end] in self._parts.get((served.server, h.item), ()) and
                                        (h.start >= begins or self._ordered(normalised, h.end)) and
                                        not _STOCK_NOTICED.match(normalised[h.end:]) and
                                        not _PART_GIVEN_UP.match(normalised[h.end:])))
            served = self._counted(normalised, hits, chosen, served.but(parts=parts), people, addressee, responder)
        # (the kind not held as the player said it: 「焼酎の水割り」)
        unsold = normalised[normalised.rfind(modifier, 0, chosen.start):chosen.end] if modifier else \
            self._other_colour(normalised, chosen)
        if unsold and served.kind == "item":
            # 「焼酎の水割りください」「白いバラください」 (the menu's is 赤い薔薇): a kind the menu does not hold is asked
            # for — said not to be had, with what is; the plain item is never served in its place unasked
            # (「なければ水割りで」 asks for it: _with_fallback)
            return OrderFound("missing", None, served.server, unsold, group=self._kind_of(chosen))
        return served

    def _other_colour(self, text: str, hit: _Hit) -> str | None:
        """The item as said with a colour right before it that is not the menu item's own (「白いバラ」 of 赤い薔薇),
        or None."""
        said = [m for m in _COLOUR.finditer(text[max(0, hit.start - 6):hit.start]) if m.end() == min(6, hit.start)]
        own = _COLOUR.match(hit.item)
        if not said or own is None or said[-1].group("hue") == own.group("hue"):
            return None
        return said[-1].group(0) + text[hit.start:hit.end]

    def _counted(self, text: str, hits: list[_Hit], chosen: _Hit, served: OrderFound, people: list[str],
                 addressee: str | None, responder: str | None) -> OrderFound:
        """The order with how many are asked for (counts.py) and the items said before it in the same order
        (「赤い薔薇を5本と、かすみ草を2本ください」: 5 roses, and 2 of gypsophila, served by the same person)."""
        later = next((h.start for h in hits if h.start >= chosen.end and h.item != chosen.item), None)
        count = count_of(text, chosen.start, chosen.end, later)
        if later is None:
            # 「ハイボール一杯ください。葵ちゃんの分も、ハイボールで。二杯ね」: a count said alone after it
            count = count_sentence_after(text, chosen.end) or count
        each = each_after(text, chosen.end)      # 「スズランとかすみ草を一つずつ」: that many of every item listed
        count = count or each
        if count is not None:
            served = served.but(count=count.n, counted=count.said, total=count.total, more=count.more)
        also: list[tuple[str, int, str | None, bool]] = []
        after, joining = chosen, True
        for hit in sorted((h for h in hits if h.end <= chosen.start), key=lambda h: -h.start):
            if hit.item == after.item or hit.item == chosen.item or hit.item in {a[0] for a in also}:
                after = hit if hit.item == after.item and hit.start < after.start else after
                continue                               # another word for the same item (赤い薔薇, 薔薇)
            if _SO_FAR.search(text[sentence_start(text, hit.start):hit.start]):
                joining = False
                continue                               # 「まだハイボール2杯だよ！…ウーロン茶もらおっかな」: told, had
            if _SAID_INSTEAD.search(text[hit.end:after.start]):
                joining = False
                continue                               # 「水割りを一杯……いや、ハイボールにします」: said instead
            joining = joining and joined(text[hit.end:after.start])
            found = count_of(text, hit.start, hit.end, after.start) or (each if joining else None)
            # (an item ordered by its own cue in a sentence before, 「ナポリタンお願い。あとおでんも」, is of the order)
            if not joining and (found is None or not found.total) and not self._ordered(text, hit.end):
                continue           # only a new total said of an item earlier in the line (「かすみ草は二本でいい」)
            other = self._served(hit.item, people, addressee, responder, text[hit.start:hit.end])
            if other.kind != "item" or other.server != served.server:
                joining = False
                continue
            also.insert(0, (hit.item, found.n if found else 1, found.said if found else None,
                            bool(found and found.total)))
            after = hit
        return served.but(also=tuple(also)) if also else served

    def _count_of_earlier(self, text: str, hits: list[_Hit], last_order: str | None, people: list[str],
                          addressee: str | None, responder: str | None, tab: Iterable[str] = ()) -> OrderFound | None:
        """「七本にしてくれ」「あと2本」, a sentence with a count that names no item: that many of the item named
        before it in the line (「バラは五本じゃ寂しいな。七本にしてくれ」), else of the item just ordered."""
        found = of_the_last(text)
        if found is None:
            return None
        count, at = found
        if any(h.start >= at for h in hits):
            return None
        before = [h for h in hits if h.end <= at]
        # (one more by the glass is of the last drink, by the plate of the last dish: _again_of)
        item = before[-1].item if before else \
            (self._again_of(count.said or "", last_order, tab) if last_order is not None else None)
        if item is None:
            return None
        served = self._served(item, people, addressee, responder, None)
        return served.but(count=count.n, counted=count.said, total=count.total, more=count.more) \
            if served.kind == "item" else None

    def _listing(self, text: str, missing: str | None, people: list[str], addressee: str | None,
                 responder: str | None) -> OrderFound | None:
        """「どんな花がありますか」 (a word of the menu's `called`) or 「まず何があるんだ？」 (no item, no place, nobody
        named): what the menu holds, of that kind, from whoever here has a menu (kind ask, with its group)."""
        asked = _WHAT_IS_SOLD.search(text)
        asks = asked is not None
        if asked is not None and missing is not None and missing in asked.group(0):
            missing = None                       # 「メニューってありますか？」: the word is part of the question
        called = self._called.get(nfkc(missing)) if missing is not None else \
            next((v for w, v in self._called.items() if w in text), None) if asks else None
        if called is None and (missing is not None or not asks or
                               any(p in text for p in self._places) or any(n in text for n in self.names) or
                               self._asks_of_other(text, asked)):
            return None
        server = self._server_for_missing(people, addressee, responder, prefer_menu=True)
        if server is None or server not in self.menus:
            return None
        server, group = called if called is not None and called[0] in people else (server, self._group(text))
        return OrderFound("ask", None, server, missing, group=group, listing=True)

    def _asks_of_other(self, text: str, asked: re.Match[str] | None) -> bool:
        """Whether 「何がある」「どんなXがある」 asks of a thing other than what is sold: the noun the question is
        about — the one 「どんな」 takes, or the topic marked just before the question (「映写室って、…」) — is
        neither a word of the menu nor of the shop, the day or a kind of thing sold (shop.menu_subject)."""
        if asked is None:
            return False
        tokens = analyse(text).tokens
        about = [t for t in tokens if asked.start() <= t.start < asked.end() and t.is_noun and t.is_content]
        topic = [t for i, t in enumerate(tokens[:-1]) if t.end <= asked.start() and t.is_noun and t.is_content
                 and _TOPIC_MARK.match(tokens[i + 1].surface)]
        # (「おすすめの映画ある？」: the noun the question's おすすめ takes with の is what it asks about)
        after = [t for i, t in enumerate(tokens[1:], 1) if _OF_PARTICLE.fullmatch(tokens[i - 1].surface) and
                 tokens[i - 1].start == asked.end() and t.is_noun and t.is_content]
        words = {w for ws in self._words.values() for w in ws}
        return any(not t.is_adverbial and not _MENU_SUBJECT.match(t.surface) and
                   not _MENU_SUBJECT.match(t.normalised) and t.surface not in words and nfkc(t.surface) not in words
                   for t in [*about, *topic[-1:], *after[:1]])

    def _asked_after(self, text: str, people: list[str], addressee: str | None, responder: str | None,
                     ordered: Iterable[str], offered: str | None = None) -> OrderFound | None:
        """「ナポリタンまだ？」「俺のナポリタンはいつ来るんだ」: an item ordered is here (kind coming); one not
        ordered yet is ordered now.  「注文まだ？」「さっき頼みました」: the last item ordered (or, when the
        order went unheard, the one just offered)."""
        already = _ALREADY.search(text)
        ordered = list(ordered)
        status = _STATUS.search(text) or _STATUS_ORDERED.search(text)
        if status is None and not already:
            return None
        last_asked = False
        if status is not None and not already:
            # asked of the item in the sentence that asks it: the 出てくる of 「鉄板で出てくるやつ」 after a story
            # about another town's ナポリタン asks nothing of the one ordered here
            end = sentence_end(text, max(status.start(), status.end() - 1))
            last_asked = not text[end:].strip(" 　。.!！?？…")
            text = text[sentence_start(text, status.start()):end] + self._item_told_after(text[end:], ordered)
            if not _STATUS.search(text):
                hits = self._hits(TextForms.of(text))
                if not hits or hits[-1].item not in ordered:
                    return None
        hits = self._hits(TextForms.of(text))
        if hits:
            item = hits[-1].item
        elif (_STATUS_ORDER.search(text) or already or (last_asked and _names_nothing(text))) and ordered:
            item = ordered[-1]      # (「もうすぐですか？」「まだかな？」 last and alone: what was ordered last)
        elif already and offered is not None:
            item = offered
        else:
            return None
        served = self._served(item, people, addressee, responder, None)
        if served.kind == "item" and item in ordered:
            return served.but(kind="coming")
        return served if served.kind == "item" else None

    def bare_item(self, text: str, item: str) -> bool:
        """Whether the line is only the item named (「スズラン」「スズランです」), with no word of ordering, count or
        more."""
        normalised = nfkc(text)
        hits = [h for h in self._hits(TextForms.of(normalised)) if h.item == item]
        return len(hits) == 1 and not normalised[:hits[0].start].strip(" 　、,") and \
            bool(_BARE.match(normalised[hits[0].end:]))

    def _item_told_after(self, rest: str, ordered: list[str]) -> str:
        """The sentence after a status question when it only names the item ordered (「…作ってくださっているんでしょう？
        ケチャップ多めのナポリタン。」): what the question asked after, said as an afterthought; else nothing."""
        following = rest[:sentence_end(rest, 0)]
        hits = self._hits(TextForms.of(following))
        if len(hits) != 1 or hits[0].item not in ordered or _ASKS_FIRMLY.search(following) or \
                not _BARE.match(following[hits[0].end:]):
            return ""
        return following

    def _about(self, text: str, people: list[str], addressee: str | None, responder: str | None,
               last_order: str | None) -> OrderFound | None:
        """「銘柄は何だ」「サントリーか？」 about the item named or just ordered: the item's `about` lines — not where
        the item is ordered with a word of what it is (「じゃあそのダルマの水割り、一杯くれ」)."""
        forms = TextForms.of(text)
        hits = self._hits(forms)
        if any(self._ordered(text, h.end) or orders_by_count(text, h.end) for h in hits):
            return None
        named = {h.item for h in hits}
        for (owner, item_id), _words in self._words.items():
            item = self.item(owner, item_id)
            if item is None or item.about is None or not item.about.words or not item.about.lines:
                continue
            if (item_id in named or item_id == last_order) and self.matcher.hits(forms, item.about.words) and \
                    owner in people:
                return OrderFound("about", item_id, owner)
        return None

    def _whole_item(self, thing: str) -> bool:
        """Whether `thing` names a menu item itself (its id or words), not a part of one (大根 of おでん)."""
        word = nfkc(thing)
        return any(word == nfkc(w) for (owner, item_id), words in self._words.items() for w in words
                   if nfkc(w) not in self._parts.get((owner, item_id), ()))

    def _without(self, text: str, people: list[str], addressee: str | None, responder: str | None,
                 recent: str | None, ordered: Iterable[str]) -> OrderFound | None:
        """「ピーマン抜いて」「ナポリタン、玉ねぎなしで」「氷なしで」: a change to the dish (the item named, else
        the one just served), acknowledged as `{extra}` (「ピーマン抜きね」); the thing taken out is never ordered."""
        for match in _WITHOUT.finditer(text):
            before = _WORD_BEFORE_WITHOUT.search(text[:match.start()])
            if before is None:
                continue
            tokens = analyse(before.group(1)).tokens
            if not tokens or not tokens[-1].is_noun or tokens[-1].end != len(before.group(1)):
                continue
            nouns: list[Token] = []
            for token in reversed(tokens):
                if not token.is_noun:
                    break
                nouns.insert(0, token)
            thing = "".join(t.surface for t in nouns)
            if thing in self.names or _POINTING_OR_WHAT.fullmatch(thing) or \
                    (not _ICE.fullmatch(thing) and not self._edible(nouns)):
                continue
            if self._whole_item(thing):
                continue          # 「ひまわり抜いてください」: a whole item of the bill taken off (bill.py), no dish changed
            word = _WITHOUT_WORD[match.group("how")]
            rest = text[:match.start() - len(thing)] + "　" * (len(thing) + match.end() - match.start()) + \
                text[match.end():]
            hits = [h for h in self._hits(TextForms.of(rest)) if h.item != thing]
            item = hits[-1].item if hits else recent
            if item is None:
                return None
            served = self._served(item, people, addressee, responder, None)
            if served.kind != "item":
                return None
            if hits and item not in ordered:
                return served.but(style=thing + word, named=text[hits[-1].start:hits[-1].end])
            return served.but(kind="extra", named=thing + word)
        return None

    def _extra(self, text: str) -> str | None:
        """What a request about the order just served asks for (タバスコ, 粉チーズ), or None."""
        match = _EXTRA_SWAP.search(text) or _EXTRA.search(text)
        if match is None:
            return None
        thing = match.group("thing")
        tokens = analyse(thing).tokens
        if match.re.pattern == _EXTRA.pattern and _PARTICLE_END.match(text[match.end("thing"):]) and \
                not self._edible(tokens):
            return None     # 「昭和歌謡な」 only says: with no verb, only a thing to eat or put on it is asked for
        if not tokens or not (tokens[-1].is_noun or tokens[-1].pos[:2] == (TAG.suffix, TAG.noun_like)) or \
                _POINTING_OR_USUAL.fullmatch(thing) or \
                nfkc(thing) in self.names or any(thing in ws for ws in self._words.values()) or \
                self.named(thing) or _COUNT.search(thing) or \
                any(t.pos[:1] in ((TAG.verb,), (TAG.adjective,)) for t in tokens):
            return None
        return thing

    def _group(self, text: str) -> str | None:
        """drink or food: what a request names (飲み物, お酒; 食べ物, つまみ), or None."""
        drink, food = _DRINK_WORD.search(text), _FOOD_WORD.search(text)
        if drink and (not food or drink.start() < food.start()):
            return "drink"
        return "food" if food else None

    def _again_of(self, cue: str, last: str, tab: Iterable[str]) -> str:
        """What one more is of: the last item ordered, or, where the counter says a drink (もう一杯) or a dish
        (もう一皿), the last one ordered of that kind (「葵さんに、もう一杯」 after a ナポリタン is her drink again)."""
        kind = "drink" if _BY_GLASS.search(cue) else "food" if _BY_PLATE.search(cue) else None
        if kind is None:
            return last
        kinds = {item_id: item.kind for (owner, item_id) in self._words
                 if (item := self.item(owner, item_id)) is not None}
        if kinds.get(last) in (kind, None):
            return last
        return next((i for i in reversed(list(tab)) if kinds.get(i) == kind), last)

    def group_of(self, word: str) -> str | None:
        """The kind (drink, food) of an item not served, from the items nearest it in meaning."""
        table = word_meaning()
        best, group = 0.0, None
        for (owner, item_id), words in self._words.items():
            item = self.item(owner, item_id)
            if item is None or item.kind is None:
                continue
            for w in words:
                near = table.cosine(word, w) if table is not None else 0.0
                if near > best:
                    best, group = near, item.kind
        return group if best >= 0.2 else self._group(word) or "drink"

    def listed(self, server: str, group: str | None) -> str:
        """The items of `server`'s menu of that kind, for {menu}: 「ビール、水割り、ウーロン茶」."""
        return "、".join(self.listed_items(server, group))

    def listed_items(self, server: str, group: str | None) -> list[str]:
        """The ids of the items {menu} names for `server`'s menu and that kind."""
        menu = self.menus.get(server)
        kept = [i for i in menu.items if group is None or i.kind == group] if menu else []
        if group is None and any(i.kind != "service" for i in kept):
            kept = [i for i in kept if i.kind != "service"]    # what one can have, not what is done for one
        if not kept and menu:
            kept = list(menu.items)
        if any(i.price is not None for i in kept):
            kept = [i for i in kept if i.price is not None]     # what is sold, not the water that comes free
        return [i.id for i in kept]

    def _modifier(self, text: str, start: int) -> str | None:
        """「焼酎の水割り」: a thing near food or drink in meaning named for the item, that no menu holds."""
        before = _MODIFIER_BEFORE.search(text[:start])
        if before is None:
            return None
        tokens = [t for t in analyse(before.group(1)).tokens if t.is_noun]
        if not tokens:
            return None
        word = tokens[-1].surface
        if any(word in ws for ws in self._words.values()) or nfkc(word) in self.names or \
                _POLITE_LEAD.sub("", word) in _FOOD_ANCHORS or word in _FOOD_ANCHORS or _SAID_OF_ITEM.fullmatch(word):
            return None          # 「おつまみのきんぴら」: the kind the item is of, not a thing that is not here
        return word if self._near_food(tokens[-1].normalised or word) >= NEAR_FOOD else None

    def _edible(self, tokens) -> bool:
        """Whether a thing named might be eaten or put on food: near food in meaning (七味, 粉チーズ), or written
        in katakana (マヨネーズ, タバスコ: most condiments' names, which the meaning table often does not
        place near food)."""
        nouns = [t for t in tokens if t.is_noun]
        if word_meaning() is None or not nouns:
            return True
        return all(_KATAKANA.fullmatch(t.surface) for t in nouns) or \
            max(self._near_food(t.normalised or t.surface) for t in nouns) >= NEAR_FOOD

    def _near_food(self, form: str) -> float:
        """How near a word is in meaning to food and drink (the menu's words and the anchors); 0 without a table."""
        table = word_meaning()
        return max((table.cosine(form, a) for a in self._anchors), default=0.0) if table is not None else 0.0

    def _declined(self, text: str, people: list[str], addressee: str | None,
                  responder: str | None) -> OrderFound | None:
        """「おごりません」「おごるほどお金ない」「おごるって言ってない」: a treat turned down (or only talked of),
        answered graciously by the one it was about."""
        if not any(turned_down(text, m.end()) for m in _TREAT.finditer(text)):
            return None              # (「おごってよ」 asks to be treated: no treat to turn down)
        named = self._named_treated(text)
        who = named if named in people else (addressee if addressee in people else
                                             (responder if responder in people else None))
        server = who if who in self.menus else self._server_for_missing(people, addressee, responder)
        return OrderFound("declined", None, server, None, treated=who) if server is not None else None

    def _treat(self, normalised: str, treated: str, found: OrderFound | None, people: list[str],
               addressee: str | None, responder: str | None) -> OrderFound | None:
        """「一杯おごります」「ママにも水割りを」: thanks from the one treated, and the item on the tab — the one named,
        else what the one treated has when treated (the menu's `treated_to`)."""
        server = treated if treated in self.menus and self.menus[treated].treat else \
            (found.server if found is not None else self._server_for_missing(people, addressee, responder))
        if server is None:
            return None
        item = found.item if found is not None and found.kind in ("item", "again") else None
        if found is None and (hits := self._hits(TextForms.of(normalised))):
            item = hits[-1].item     # 「葵ちゃんのウーロン茶は俺のおごりなんで」: the drink named is the treat
        if item is None and treated in self.menus:
            item = self.menus[treated].treated_to
        return OrderFound("treat", item, server, found.named if found else None, treated=treated)

    def _named_treated(self, text: str) -> str | None:
        named = None
        for person, names in self.people_names.items():
            for name in names:
                n = nfkc(name)
                if n and any(_TREATED_AFTER_NAME.match(text[m.end():]) for m in re.finditer(re.escape(n), text)):
                    named = person
        return named

    def _person_ends_at(self, text: str, end: int) -> bool:
        """Whether someone is named right before `end` (「ママにも一杯」「あなたにも」), not a thing or a time (「その前に
        一杯もらっていい？」 treats nobody)."""
        before = _TREAT_PARTICLES.sub("", text[:end])
        honorific = f"(?:{word_class('honorifics').alternation})?"
        for names in self.people_names.values():
            for name in names:
                n = nfkc(name)
                if n and re.search(re.escape(n) + honorific + r"$", before):
                    return True
        tokens = analyse(before).tokens if before.strip() else ()
        return bool(tokens) and tokens[-1].pos[:1] == (TAG.pronoun,)

    def _treated(self, text: str, people: list[str], addressee: str | None, responder: str | None) -> str | None:
        """The character the player treats (「一杯おごります」「ママにも水割りを」), or None.  Words of treating
        that turn it down, report it, suppose it or ask to be treated treat nobody (undone.py)."""
        # (「ハイボールも一杯しか」: one more of an item, or only one of it, treats nobody)
        after_item = {h.end for h in self._hits(TextForms.of(text))}
        match = next((m for m in _TREAT.finditer(text) if not treats_not(text, m.end()) and
                      not (_TO_SOMEONE.fullmatch(m.group(0)[0]) and (m.start() in after_item or
                                                                     not self._person_ends_at(text, m.start()) or
                                                                     _RECEIVED.match(text[m.end():])))), None)
        if match is None and _TREAT.search(text) is not None:
            return None
        named = self._named_treated(text)
        if match is None and not (named and _TREAT_NAMED_END.search(text)
                                  and any(self.matcher.hits(TextForms.of(text), ws)
                                          for ws in self._words.values())):
            return None
        if named is not None and named in people:
            return named
        return addressee if addressee in people else (responder if responder in people else None)

    def _ordered(self, text: str, end: int, *, bare: bool = True) -> bool:
        """An ordering cue right after the item, with nothing else named in between.  `bare`: the item
        alone (「ビール！」「ナポリタンで」) counts; not for a word that is only near food (「乾杯！」)."""
        rest = text[end:sentence_end(text, end)]
        match = _CUE.search(rest)
        if match is None or _WH.search(rest) or _OF_A_THING_BEFORE.match(rest):
            return False          # (「俺の花束は？ひまわり十二本の」: what a thing named before is of, no order)
        if _BARE.match(rest) and _RECOGNISED_AFTER.match(text[end:]):
            return False          # 「ナポリタン！そうそう、昼は喫茶店でしたな」: remembered, not asked for
        before = text[:sentence_start(text, end)]
        if (_ALSO_BARE.match(rest) or _BARE.match(rest)) and re.search(r"[？?]\s*$", before) and \
                not _MUSING.search(before):
            return False          # 「お通しはいくらなんですか？あとウーロン茶も」「…はどうですか？ひまわりとかすみ草で。」:
            #                        the question goes on, no order (「どれにしようかな？ひまわりで！」 muses, then orders)
        if _BARE.match(rest) and _QUANTITY_ASKED.search(before):
            return False          # 「在庫は今何本くらいありますか？かすみ草で。」: what the question is of, no order
        if (self._price_said(rest) and not _WORTH.match(rest)) or count_claimed(rest):
            return False          # 「おでんは一皿六百円なのですね」「ハイボールは三杯だと思う」: said of it, no order
        if not bare and _BARE.match(rest):
            return False
        between = rest[:match.start()]
        if _OTHER_ACT_ASKED.search(between):
            return False          # 「スズランとバラも教えてください」: telling is asked for, not the flowers
        if _SUPPOSED_AFTER_CUE.match(rest[match.end():]):
            return False          # 「配達をお願いすると3,300円になりますよね」: supposed, not asked
        if _COUNT.fullmatch(match.group(0)) and (_COUNT_AS_MEASURE.match(rest[match.end():]) or
                                                 _COUNT_ASKED_OF.match(rest[match.end():]) or
                                                 _HAD_AFTER_COUNT.match(rest[match.end():])):
            return False          # 「ナポリタン一皿で3時間粘るような連中」「ひまわり一本って合いますか？」「…三つ
            #                        いただきましたけれど」: no order
        if not_ordered(between, rest[match.end():]) or turned_down(rest, match.end()) or \
                _describes_noun(rest, match.end()):
            return False          # 「ナポリタンだけ撮る」「水割りしか頼んでない」「一つずつなら」「…頼む人」: no order
        # (the other items of the same order, and what joins them, are no other thing named: 「かすみ草を一束、
        # スズランと一緒にお願いします」)
        between = _ORDER_JOINED.sub(lambda m: "　" * len(m.group(0)), between)
        if (worth := _WORTH.match(between)) is not None:
            between = "　" * worth.end() + between[worth.end():]     # 「…を1000円分ください」: its worth
        for hit in self._hits(TextForms.of(between)):
            between = between[:hit.start] + "　" * (hit.end - hit.start) + between[hit.end:]
        tokens = analyse(between).tokens if between.strip() else ()
        for token in tokens:
            if token.is_noun and token.pos[1:2] not in ((TAG.numeral,),) and TAG.may_count not in token.pos \
                    and not _LEAD_WORDS.fullmatch(token.surface):
                return False
        return True

    @staticmethod
    def _price_said(rest: str) -> bool:
        """Whether what follows an item names a sum with no request in it (「…は一皿六百円なのですね」)."""
        return bool(_AMOUNT_ANY.search(rest)) and not _ASKS_FOR.search(rest)

    def _served(self, item: str, people: list[str], addressee: str | None, responder: str | None,
                named: str | None) -> OrderFound:
        if addressee is not None and addressee in people and self.serves(addressee, item):
            return OrderFound("item", item, addressee, named)
        ordered_people = ([responder] if responder in people else []) + [p for p in people if p != responder]
        for person in ordered_people:
            if self.serves(person, item):
                return OrderFound("item", item, person, named)
        server = self._server_for_missing(people, addressee, responder) or (addressee or responder or people[0])
        return OrderFound("missing", None, server, named)

    def _server_for_missing(self, people: list[str], addressee: str | None, responder: str | None,
                            prefer_menu: bool = False) -> str | None:
        ordered_people = [p for p in (addressee, responder) if p in people] + list(people)
        with_menu = [p for p in ordered_people if p in self.menus]
        if prefer_menu:
            serving = [p for p in with_menu if self.menus[p].items]
            if serving:
                return serving[0]
        return with_menu[0] if with_menu else None

    def _unknown_item(self, text: str) -> str | None:
        """A word near food or drink in meaning, with an ordering cue after it, that no menu holds."""
        table = word_meaning()
        if table is None:
            return None
        tokens = analyse(text).tokens
        for i, token in enumerate(tokens):
            if not token.is_noun or token.pos[1:2] == (TAG.numeral,):
                continue
            if i > 0 and tokens[i - 1].pos[1:2] == (TAG.numeral,) and TAG.may_count in token.pos:
                continue          # 「一皿お願いできます？」: the counter of a count, no thing asked for
            form = token.normalised or token.surface
            if WH.fullmatch(nfkc(token.surface)):
                continue          # 「全部でおいくらですか？」: a wh-word asks, it names no thing (not the roe)
            if nfkc(token.surface) in self.names or form in _FOOD_ANCHORS or nfkc(token.surface) in self.spoken or \
                    _NOT_SOLD.match(nfkc(token.surface)):
                continue
            # 「日本酒ひとつ」: a word and its suffix (日本 + 酒) are one thing
            surface, end = token.surface, token.end
            if i + 1 < len(tokens) and _MIXED.fullmatch(tokens[i + 1].surface) and tokens[i + 1].start == end:
                # 「ソーダ割り」「お湯割り」: how a drink is made, named as one drink (near drink by its first word)
                surface, end = surface + tokens[i + 1].surface, tokens[i + 1].end
            elif i + 1 < len(tokens) and tokens[i + 1].pos[:2] == (TAG.suffix, TAG.noun_like) and tokens[i + 1].start == end:
                surface, end = surface + tokens[i + 1].surface, tokens[i + 1].end
                form = surface
            elif i + 1 < len(tokens) and tokens[i + 1].start == end and _KANA.fullmatch(token.surface) and \
                    _fragment(tokens, i + 1):
                # a kana word the analyser does not know, cut as a known one and a glued kana (ちくわ|ぶっ): one word
                glued = _GLUED_SMALL_TSU.sub("", tokens[i + 1].surface)
                surface, end = surface + glued, tokens[i + 1].start + len(glued)
            elif token.pos[1:2] == (TAG.proper_noun,):
                continue
            near = self._near_food(form)
            if _MIXED_END.search(surface) and i > 0 and _POLITE_PREFIX.fullmatch(tokens[i - 1].surface) and \
                    tokens[i - 1].end == token.start:
                surface = tokens[i - 1].surface + surface          # (お湯割り)
            # the thing alone as the line's first clause is ordered (「熱燗。ぬる燗でな」); else a cue must follow
            # (only a thing clearly food or drink: 「乾杯！」 is near drink in meaning, and no order)
            alone = not text[:token.start].strip() and _BARE.match(text[end:]) is not None and near >= NEAR_ALONE
            if near >= NEAR_FOOD and self._ordered(text, end, bare=alone):
                return surface
            # a drink's name the meaning table does not know: a run of katakana words asked for (カシスオレンジ
            # ってある？), or one word ordered outright (モヒートください)
            run = [token]
            while i + len(run) < len(tokens) and tokens[i + len(run)].is_noun and \
                    tokens[i + len(run)].start == run[-1].end and _KATAKANA.fullmatch(tokens[i + len(run)].surface):
                run.append(tokens[i + len(run)])
            if all(_KATAKANA.fullmatch(t.surface) for t in run) and self._ordered(text, run[-1].end, bare=False) and \
                    (len(run) > 1 or (_STRONG_CUE.match(text[run[-1].end:]) and
                                      (near > 0 or table.row(run[0].surface) is None))):
                # (a known word far from food in meaning is asked for, not ordered: 「ヒントください」)
                return text[run[0].start:run[-1].end]
        return None
