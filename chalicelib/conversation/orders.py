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
from dataclasses import dataclass
from typing import Literal

from ..interpret.ja import analyse, word_meaning
from ..interpret.text import TextForms, make_matcher, nfkc
from ..scenario import CompiledScenario

OrderKind = Literal["item", "again", "ask", "missing"]

_PAYING = re.compile(r"会計|お?勘定|おあいそ|お代|支払|払(?:う|い|います|える)|いくら|レシート|領収書")
# Cues that order whatever is named right before them.
_CUE = re.compile(
    r"ください|下さい|くださ|ちょうだい|頂戴|お願い|おねがい|もらえ|もらお|もらい|もらう|いただけ|頂け|いただき|頂き|頼む|頼み|頼も"
    r"|たのむ|たのも|(?:ひと|一|1|ふた|二|2|みっ|三|3)(?:つ|杯|本|皿|人前)|追加|おかわり|お代わり"
    r"|^\s*(?:で|を)?\s*(?:[。！!…]|$)|^\s*(?:で|を|も)\s*(?:お願い|頼む|よろしく|いい|[！!。]|$)"
    r"|^\s*(?:に|で)(?:する|します|しよう|しよっかな|しようかな)|^\s*(?:が|を)?\s*(?:いい|良い)(?:な|です)?\s*[。!！]*$"
    r"|飲みたい|食べたい|飲もう|食べよう|飲もっかな|食べよっかな|飲む(?:よ|わ)?\s*[。！!]*$|食べる(?:よ|わ)?\s*[。！!]*$"
    r"|(?:ある|あります|あり|ない|ありますか)(?:\s*[？?]|か|かな|の)|持ってきて|出して|作って|入れて|つけて|くれる|くれない"
    r"|(?:まだ)?(?:できる|できます|作れる|頼める|食べられる|飲める)(?:\s*[？?]|か|の)")
# 「じゃあそれで」「それください」: the item just named.
_THAT_ONE = re.compile(r"^(?:じゃあ|じゃ|では|なら|それなら|うん)?[、,\s]*(?:それ|そっち|これ)(?:で|を|に|も)?\s*"
                       r"(?:お願い|ください|下さい|ちょうだい|頂戴|する|します|しよう|いい|[。！!]|$)")
_AGAIN = re.compile(r"おかわり|お代わり|もう一杯|もういっぱい|もう一本|もう1杯|同じ(?:の|もの|やつ)|もう一つ|もうひとつ|もう1つ|もう一皿")
_ANYTHING = re.compile(r"何か(?:飲|食|つま)|なにか(?:飲|食|つま)|飲み物|食べ物|おつまみ|つまみ|何か(?:ちょうだい|ください|頼)"
                       r"|注文(?:いい|お願い|したい|させて|を)|オーダー")
_FOOD_ANCHORS = ("飲み物", "食べ物", "料理", "酒", "ドリンク", "つまみ")
_BARE = re.compile(r"^\s*(?:で|を|も)?\s*(?:[。！!…]|$)")
# A question about the item (いつからある？ どんな味？ 何が入ってる？) is not an order of it.
_WH = re.compile(r"いつ|何|なに|なん|どう|どんな|どれ|どこ|誰|だれ|なぜ|いくら")
NEAR_FOOD = 0.4


@dataclass(frozen=True)
class OrderFound:
    kind: OrderKind
    item: str | None             # menu item id (None for ask / missing)
    server: str                  # character id who answers
    named: str | None = None     # the player's words for it (debug)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "item": self.item, "server": self.server, "named": self.named}


@dataclass(frozen=True)
class _Hit:
    item: str
    owner: str
    start: int
    end: int


class Orders:
    def __init__(self, scenario: CompiledScenario, names: Iterable[str] = ()) -> None:
        self.scenario = scenario
        self.menus = scenario.menus
        self.matcher = make_matcher()
        self.names = {nfkc(n) for n in names if n}
        self._words = {(c, item.id): tuple(dict.fromkeys([item.id, *item.words]))
                       for c, menu in self.menus.items() for item in menu.items}
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

    def _hits(self, forms: TextForms) -> list[_Hit]:
        found = []
        for (owner, item), words in self._words.items():
            for hit in self.matcher.hits(forms, words):
                found.append(_Hit(item, owner, hit.start, hit.end))
        # the longest mention wins where two overlap (生ビール over 生)
        found.sort(key=lambda h: (h.start, -(h.end - h.start)))
        kept: list[_Hit] = []
        for h in found:
            if kept and h.start < kept[-1].end and h.item != kept[-1].item:
                continue
            kept.append(h)
        return kept

    def read(self, text: str, people: list[str], addressee: str | None, responder: str | None, *,
             last_order: str | None = None, offered: str | None = None, offer_yes: bool = False,
             offer_open: bool = False, mentioned: str | None = None) -> OrderFound | None:
        """The order in `text`, said where `people` are (addressee and responder among them), or None.
        `offer_open`: a character just offered something (何か飲む？ 何にする？), so an item named at all is
        an order; `offered`: the item they offered; `offer_yes`: the line says yes to the offer."""
        if not self.menus or not people:
            return None
        forms = TextForms.of(text)
        normalised = forms.nfkc
        if _PAYING.search(normalised):
            return None
        hits = self._hits(forms)
        ordered = [h for h in hits if self._ordered(normalised, h.end)]
        if not ordered and (offer_yes or offer_open) and hits and not re.search(r"[？?]\s*$", normalised):
            ordered = hits[:1]                     # 「何か飲む？」「じゃあビール」
        if ordered:
            chosen = ordered[-1]
            return self._served(chosen.item, people, addressee, responder, normalised[chosen.start:chosen.end])
        if hits:
            return None                            # an item talked about, not ordered
        if _THAT_ONE.search(normalised) and mentioned:
            # 「じゃあそれで」: the item just named (by the player or by the one serving)
            return self._served(mentioned, people, addressee, responder, None)
        if _AGAIN.search(normalised) and last_order:
            served = self._served(last_order, people, addressee, responder, None)
            return OrderFound("again", served.item, served.server, None) if served.kind == "item" else served
        if offer_yes and offered:
            return self._served(offered, people, addressee, responder, None)
        missing = self._unknown_item(normalised)
        if missing is not None:
            server = self._server_for_missing(people, addressee, responder)
            return OrderFound("missing", None, server, missing) if server else None
        if (_ANYTHING.search(normalised) and (_CUE.search(normalised) or "?" in normalised or "？" in normalised)) \
                or offer_yes:
            server = self._server_for_missing(people, addressee, responder, prefer_menu=True)
            return OrderFound("ask", None, server, None) if server else None
        return None

    def _ordered(self, text: str, end: int, *, bare: bool = True) -> bool:
        """An ordering cue right after the item, with nothing else named in between.  `bare`: the item
        alone (「ビール！」「ナポリタンで」) counts; not for a word that is only near food (「乾杯！」)."""
        clause_end = len(text)
        for mark in "。！？!?\n":
            i = text.find(mark, end)
            if i != -1:
                clause_end = min(clause_end, i + 1)
        rest = text[end:clause_end]
        match = _CUE.search(rest)
        if match is None or _WH.search(rest):
            return False
        if not bare and _BARE.match(rest):
            return False
        between = rest[:match.start()]
        tokens = analyse(between).tokens if between.strip() else ()
        for token in tokens:
            if token.is_noun and token.pos[1:2] not in (("数詞",),) and "助数詞可能" not in token.pos \
                    and token.surface not in ("あと", "後", "とりあえず", "まず", "一つ", "ひとつ"):
                return False
        return True

    def _served(self, item: str, people: list[str], addressee: str | None, responder: str | None,
                named: str | None) -> OrderFound:
        if addressee in people and self.serves(addressee, item):   # type: ignore[arg-type]
            return OrderFound("item", item, addressee, named)       # type: ignore[arg-type]
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
        for token in analyse(text).tokens:
            if not token.is_noun or token.pos[1:2] in (("固有名詞",), ("数詞",)):
                continue
            form = token.normalised or token.surface
            if nfkc(token.surface) in self.names or form in _FOOD_ANCHORS:
                continue
            near = max((table.cosine(form, a) for a in self._anchors), default=0.0)
            if near >= NEAR_FOOD and self._ordered(text, token.end, bare=False):
                return token.surface
        return None
