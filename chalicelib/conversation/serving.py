"""Serving: an order of a menu item acknowledged and served, a line set of the menu, what an item costs and the
bill. A part of the turn logic (`Conversation` in turn.py takes these methods from `Serving`)."""
from __future__ import annotations

import dataclasses
import re

from .. import lazyre
from ..answers import Answer
from ..dialogue_acts import ACT
from ..interpret.counts import Count, count_of
from ..interpret.lexicon import compiled, mapping, pattern
from ..interpret.money import (
    amounts,
    change_asked,
    handed_amount,
    keeps_change,
    money,
    prices_other_thing,
    without_put_off,
)
from ..interpret.text import nfkc
from ..scenario import GameState, Step
from ..scenario.loader import NEUTRAL
from ..scenario.model import Menu, MenuItem, SpokenLine
from ..scenario.variation import remember
from ..stage.records import AskedQuestion, ConversationMemory
from ..turn_record import AnswerSource
from .bill import (
    DEFAULT_BREAKDOWN,
    DEFAULT_TAKEN_BACK,
    UNIT_PRICE,
    asks_an_amount,
    asks_if_paid,
    cancels,
    disputes,
    fewer_claimed,
    hands_over,
    itemised,
    more_claimed,
    taken_back,
    taking_back,
)
from .facts import is_question, sentences
from .orders import PAID, OrderFound, asks_after_order, asks_firmly, asks_if_possible, style_of
from .parts_of_turn import TurnParts
from .questions import polarity
from .undone import DEFAULT_DECLINED
from .variety import Variety

# How many orders the memory keeps (the bill is what is after `paid` of them).
ORDERS_KEPT = 60
_PRICE = money("price_word")
# a sum said in a line (600円, 1,200円)
# Said when everything had is paid for and the bill or its paying is asked about.
DEFAULT_SETTLED = "お代はもういただいていますよ。"
_RECEIPT = money("receipt")
_BILL = money("bill_word")
_PRICE_FOLLOW_UP = money("price_follow_up")
_AMOUNT_SUPPOSED = money("amount_supposed")
_AMOUNT_ACKNOWLEDGED = money("amount_acknowledged")
_SUM_ALONE = money("sum_alone")
_WHOLE_SUM = money("whole_sum")
# the words the characters put into the menu's lines: what joins parts named, what a treat names none stands for
_SAID_WORDS = mapping("orders", "said_words")
# yes, to a line that served an item and asked about it (「ええ、水割りで」「はい、それで」「うん」)
_YES_TO_IT = compiled("orders", "yes_to_served")
# what asks for one more (「ええ、もう一杯」「うん、おかわり」)
_MORE_IN_WORDS = compiled("shop", "more_in_words")
_MORE = lazyre.compile(pattern("shop", "more_in_words") + "|" + pattern("orders", "more_by_count"))
# 「おかわりのハイボール出してください」: the one just ordered, asked to be brought, unless more is asked for in so many words
_BRING_IT = compiled("shop", "bring_it")
_MENU_NAMED = compiled("shop", "menu_named")
_MORE_ASKED = compiled("shop", "more_asked")


def _asks_how_much(text: str) -> bool:
    """Whether a sentence of the line asks a price (「葵さんの分、いくらですか？一緒に払います」): the sum is not
    known yet, so nothing is paid in that line."""
    return any(is_question(sentence) and _PRICE.search(sentence) for sentence in sentences(nfkc(text)))


def pays(text: str) -> bool:
    """Whether `text` hands money over: a paying word (お釣り, これで, カード, 払います…), or a sum said alone
    (「はい、1800円」「千円で」) — a sum said with something else (「1400円、予算内でよかったです」「1800円だろ。
    財布出すから待て」) pays nothing by itself."""
    normalised = without_put_off(nfkc(text))      # (「配達のときに現金で払いますね」 pays later, not now)
    if money("change_questioned").search(normalised) and handed_amount(normalised) is not None:
        return True           # 「一万円から…お釣りある？」: a sum handed, and its change asked after
    cues = [m.group(0) for m in PAID.finditer(normalised)]
    if not cues or money("paid_later").search(normalised) or money("pays_for_it").search(normalised):
        return False          # (「…払いますよ。今日は持ってこれないんで、配達のときでいい？」: not now)
    if any(not any(money(kind).fullmatch(cue) for kind in ("amount", "large_amount", "kanji_amount")) for cue in cues):
        return True
    return bool(_SUM_ALONE.match(normalised)) or hands_over(text)


def _priced_fill(item: str, price: int, count: Count | None) -> dict[str, str]:
    """The {item} and {price} of a price line: the item's own, or, with a count said, that many and their sum
    (「ひまわり2本」, 700)."""
    if count is None or count.n < 2 or not count.said:
        return {"{item}": item, "{price}": f"{price:,}"}
    return {"{item}": f"{item}{count.said}", "{price}": f"{price * count.n:,}"}


def _not_again(order: OrderFound, tab: set[str]) -> OrderFound | None:
    """An order read from a recount (「最初のビールは入れといて。ビール1、ナポリタン、ハイボールね」) less what the
    tab already holds: only what is not on it is ordered."""
    if order.kind != "item":
        return order
    others = tuple(also for also in order.also if also[0] not in tab)
    if order.item not in tab:
        return dataclasses.replace(order, also=others)
    if not others:
        return None
    (item, count, said, total), rest = others[0], others[1:]
    return dataclasses.replace(order, item=item, count=count, counted=said, total=total, also=rest, named=None,
                               parts=(), more=False, style=None, instead=None)


def _as_on_the_tab(order: OrderFound, tab: list[str]) -> bool:
    """Whether every item of the order is on the tab already, as many as it counts where a count is said (a
    smaller count, 「かすみ草は3本だけでいい」, changes the order)."""
    if order.kind != "item" or order.item is None:
        return False
    wanted = [(order.item, order.count if order.counted else None),
              *((item, count if said else None) for item, count, said, _ in order.also)]
    return all(tab.count(item) == count if count is not None else item in tab for item, count in wanted)


def _left_on_tab(text: str, named: list[str], claimed: dict[str, int], unpaid: list[str], recent: str | None,
                 goods: frozenset[str], ends: dict[int, str]) -> list[str] | None:
    """What the tab holds after the line corrects it (bill.py): fewer said, items taken back, or more goods said
    than the basket holds; None where it corrects nothing."""
    fewer = fewer_claimed(text, claimed, unpaid)
    if fewer == unpaid:
        fewer = None          # (「かすみ草はキャンセル。一本しか買えねえって」: the count said changes nothing, the cancel does)
    left = fewer or taken_back(text, named, unpaid, recent, goods, item_ends=ends)
    if left is None:
        return more_claimed(claimed, unpaid, goods)
    # (「ひまわり十二本にして、かすみ草は二本に減らして」: the goods said up, of those the line does not take down)
    untouched = {item: n for item, n in claimed.items() if left.count(item) == unpaid.count(item)}
    return more_claimed(untouched, left, goods) or left


def _in_the_basket(menu: Menu, item_id: str, mem: ConversationMemory) -> bool:
    """Whether an item is goods (picked into one basket, not poured or cooked each time) and on the unpaid tab."""
    item = next((i for i in menu.items if i.id == item_id), None)
    return item is not None and item.kind == "goods" and item_id in mem.orders[mem.paid:]


class Serving(TurnParts):
    """Orders, the menu's lines and money."""

    def _order(self, text: str, state: GameState, addressee: str | None, mem: ConversationMemory,
               question: AskedQuestion | None) -> OrderFound | None:
        if not self.orders.any:
            return None
        offered = question.item if question is not None and question.kind == "offer" else None
        if offered is not None and offered in mem.orders[mem.paid:] and not self._offers_more(question):
            # 「ナポリタン、食べていく？」 of the one ordered: a yes is to that one, no second
            offered = None
            question = None
        # (a question whether something can be had is no yes to an offer: 「電話で注文もできますか？…お願いしたくて」)
        offer_yes = question is not None and question.kind == "offer" and polarity(text, "offer") == "yes" and \
            not asks_if_possible(nfkc(text))
        people = list(self.rules.people(state.place))
        # (the items of the bill just said back are no choice: 「それでいい」 to it agrees to the sum)
        mentioned = self._item_named(mem.player_last or "") or \
            (self._item_named(mem.last.text) if mem.last is not None and mem.last.turn >= state.turn and
             not self._said_last(mem, state, "/breakdown#", within=0) and
             not self._said_last(mem, state, "/bill#", within=0) else None)
        # money handed over right after the bill or its breakdown: thanks from the one who said it
        billed = max(((turns[-1], ref.split("/")[1]) for ref, turns in mem.said.items()
                      if ref.startswith("menu/") and ref.rsplit("#", 1)[0].endswith(("/bill", "/breakdown")) and turns),
                     default=None)
        if billed is not None and billed[0] < state.turn - 2 and hands_over(text):
            billed = (state.turn, billed[1])     # (money handed in so many words pays a bill said a while ago)
        if billed is not None and billed[0] >= state.turn - 2 and mem.orders[mem.paid:] and pays(text) and \
                not _AMOUNT_SUPPOSED.search(nfkc(text)) and not money("put_on_tab").search(nfkc(text)) and \
                not _asks_how_much(text) and \
                not (_AMOUNT_ACKNOWLEDGED.search(nfkc(text)) and not hands_over(text)) and \
                (not disputes(text, bool(self._items_named(text))) or hands_over(text)) and billed[1] in people and self.scenario.menus[billed[1]].paid:
            return OrderFound("paid", None, billed[1], amount=handed_amount(text), change=change_asked(text),
                              keep_change=keeps_change(text))
        named = self._items_named(text)
        # 「スズランお願いします。500円な、はい」 of what is on the tab: paying for it, not one more
        if pays(text) and named and set(named) <= set(mem.orders[mem.paid:]) and not _MORE_IN_WORDS.search(nfkc(text)) \
                or self._answers_wh(text, named, question):
            return None
        # 「ビール1、ナポリタン、ハイボールね」 right after the bill was itemised: what was had, recounted; nothing
        # on the tab is ordered again unless asked for in so many words (or one more)
        recounting = billed is not None and billed[0] >= state.turn - 2 and bool(named) and \
            not _MORE.search(nfkc(text)) and not asks_firmly(nfkc(text)) and not asks_after_order(nfkc(text))
        if recounting and set(named) <= set(mem.orders[mem.paid:]):
            return None
        # 「ええ、水割りで」 to 「また水割り？　気に入ってくれたのね」, the line that served it: yes to what is served
        asked_of = self._served_asking(mem, state)
        if asked_of is not None and _YES_TO_IT.match(nfkc(text)) and not _MORE.search(nfkc(text)) and \
                set(self._items_named(text)) <= {asked_of}:
            return None
        # 「ハイボールやめてビールにして」: the one on the tab given up, the other ordered in its place
        swap = self.orders.swap(text, mem.orders[mem.paid:])
        if swap is not None and swap.server in people:
            return swap
        # the item served in the last turns: a condiment or a change asked for is about it
        recent = self._recently_served(mem, state)
        found = self.orders.read(text, people, addressee, self.rules.responder(state.place),
                                last_order=mem.orders[-1] if mem.orders else None, offered=offered,
                                offer_yes=offer_yes, offer_open=question is not None and question.kind == "offer",
                                mentioned=mentioned, ordered=mem.orders, recent=recent)
        if found is not None and found.kind == "ask" and found.group is None and addressee is not None and \
                not (addressee in self.scenario.menus and self.scenario.menus[addressee].items) and \
                not _MENU_NAMED.search(nfkc(text)):
            return None           # 「最近観た中でおすすめってありますか？」 to one who serves nothing: theirs, not the menu
        if found is not None and found.kind == "item" and not found.counted and not found.more and not found.also \
                and self._paid_goods(found, mem):
            # 「これでひまわりもらえるな？」「ひまわりや、ひまわり！さっき払たやつ」 of goods already paid for: asked
            # to be handed over, not bought again (a count or a word of more buys more)
            return found.but(kind="coming")
        if found is not None and found.kind == "item" and not found.counted and not found.more and not found.also:
            if (served := self._of_one_served(found, nfkc(text), recent, mem, state)) is not found:
                return served
        if billed is not None and billed[0] >= state.turn - 2 and found is not None and \
                _as_on_the_tab(found, mem.orders[mem.paid:]) and not _MORE_IN_WORDS.search(nfkc(text)) and \
                not asks_firmly(nfkc(text)):
            return None      # 「ハイボール3杯、ナポリタン…うん合ってる」 after the bill: the tab read back, counts and all
        if found is not None and found.kind == "item" and found.item is not None and found.total and found.counted and \
                not found.also and mem.orders[mem.paid:].count(found.item) == found.count:
            return None      # 「ハイボールは一杯だけにしとこ」 with one on the tab: as many as it holds, nothing more
        return _not_again(found, set(mem.orders[mem.paid:])) if recounting and found is not None else found

    def _of_one_served(self, found: OrderFound, normalised: str, recent: str | None, mem: ConversationMemory,
                       state: GameState) -> OrderFound:
        """An item named with no count nor word of more, right after it was served: that one asked after or
        changed, no other (else the order as found)."""
        if found.item == recent and _BRING_IT.search(normalised) and not _MORE_ASKED.search(normalised):
            # 「おかわりのハイボール出してください」 right after it was ordered: that one, asked after, no other
            return found.but(kind="coming")
        if found.style and found.item == recent and asks_if_possible(normalised):
            # 「温かいウーロン茶、できますかね？」 right after it was served: that one made so, no other
            return found.but(kind="adjust")
        if found.parts and found.item == self._recently_served(mem, state, within=0):
            # 「おでんもあるか？」, served, then 「ほな大根と玉子とちくわ」: the parts of the one just served, no other
            return found.but(kind="adjust")
        return found

    def _corrects_tab(self, text: str, mem: ConversationMemory) -> bool:
        """Whether the line counts fewer of items on the tab than it holds, in words of correcting (「ビールは二杯で、
        ナポリタンも一皿のはずなんだけど」)."""
        unpaid = mem.orders[mem.paid:]
        return bool(unpaid) and fewer_claimed(nfkc(text), self.orders.counts_named(text), unpaid) is not None

    def _answers_wh(self, text: str, named: list[str], question: AskedQuestion | None) -> bool:
        """「スズラン」 to 「何の花が知りたいの？」: the item named alone answers the character's question, no order."""
        return question is not None and question.kind == "wh" and len(named) == 1 and \
            self.orders.bare_item(text, named[0])

    def _offers_more(self, question: AskedQuestion | None) -> bool:
        """Whether the line that offered an item offers one more of it (「もう一杯どう？」)."""
        line = self.book.get(question.ref) if question is not None else None
        return line is not None and bool(_MORE_IN_WORDS.search(nfkc(line.text)))

    def _served_asking(self, mem: ConversationMemory, state: GameState) -> str | None:
        """The item served on the last turn by a line that asked about it (「また水割り？　気に入ってくれたのね」:
        a question anywhere in it), if one."""
        for ref, turns in mem.said.items():
            if turns and turns[-1] == state.turn and ref.startswith("menu/"):
                item = ref.rsplit("#", 1)[0].rsplit("/", 1)[-1]
                line = self.book.get(ref)
                if line is not None and item in self.orders.ids and re.search(r"[？?]", line.text):
                    return item
        return None

    @staticmethod
    def _recently_served(mem: ConversationMemory, state: GameState, within: int = 2) -> str | None:
        """The item served in the turn before this one or the `within` turns before that, if any."""
        served_at = max((turns[-1] for ref, turns in mem.said.items() if ref.startswith("menu/") and turns and
                         ref.rsplit("#", 1)[0].rsplit("/", 1)[-1] not in ("bill", "paid", "prices", "ask", "suggest",
                                                                          "missing", "unavailable", "breakdown",
                                                                          "declined")), default=None)
        return mem.orders[-1] if mem.orders and served_at is not None and served_at >= state.turn - within else None

    def _serve(self, order: OrderFound, step: Step, state: GameState, mem: ConversationMemory, turn: int,
               variety: Variety) -> Answer | None:
        menu = self.scenario.menus.get(order.server)
        if menu is None:
            return None
        flags: tuple[str, ...] = ()
        item = self.orders.item(order.server, order.item) if order.item is not None else None
        if item is None and order.kind == "treat" and order.item is not None:
            # 「葵さんにハイボールを。私が払います」: the drink is from the bar's menu, the thanks from the one treated
            item = next((found for server in self.scenario.menus
                         if (found := self.orders.item(server, order.item)) is not None), None)
        if order.item is not None and item is None:
            return None
        if order.kind in ("declined", "paid", "about"):
            return self._not_an_order(order, item, menu, step, mem, turn, variety)
        fill: dict[str, str] = {}
        if item is not None:
            fill["{item}"] = item.id
            flags = (item.flag,) if item.flag else ()
        source = AnswerSource.ORDER if item is not None else AnswerSource.MENU
        kind = self._line_kind(order, item, menu, fill)
        if kind is None:
            assert item is not None          # an item's own line (kind None) only when an item was named
            lines, mode, prefix = item.lines, item.mode, f"menu/{order.server}/{item.id}"
        else:
            lines, mode, prefix = getattr(menu, kind), "cycle", f"menu/{order.server}/{kind}"
            if kind == "unavailable":
                lines = [line for line in lines if "{menu}" in line.text] or lines
        if not lines:
            return None
        if kind in ("suggest", "unavailable"):
            mem.listed, mem.listed_turn = self.orders.listed_items(order.server, order.group), turn
        before, before_refs, also_variation = self._also_served(order, menu, step, turn, variety) \
            if item is not None else ("", [], {})
        # 「赤い薔薇を5本と、かすみ草を2本ください」: a line of the same set not said for the others of the order
        fresh = [i for i in range(len(lines)) if f"{prefix}#{i + 1}" not in before_refs]
        index, variation = self._pick(prefix, mode, lines, step.state, turn, variety,
                                      among=fresh if before_refs and fresh else None)
        text = self._filled(lines[index].text, fill)
        expression = lines[index].expression or NEUTRAL
        refs = [f"{prefix}#{index + 1}"]
        if order.instead and item is not None and menu.unavailable and \
                nfkc(order.instead) not in {nfkc(w) for w in (item.id, *item.words, *item.parts)}:
            # 「焼酎の水割り」「レモンサワー、なければ水割り」: the one not served is said first
            first, first_ref, more = self._not_served_first(order, item, menu, step, turn, variety)
            text = first + text
            refs.insert(0, first_ref)
            variation = {**more, **variation}
        priced = self._service_price(order, item, menu, text, step.state, turn, variety)
        if priced is not None:
            text, refs = text + priced.text, refs + list(priced.refs)
            variation = {**variation, **priced.variation}
        if before:
            # the other items of the order first, in the order said
            text = before + text
            refs[:0] = before_refs
            variation = {**also_variation, **variation}
        if item is not None and order.kind not in ("adjust", "coming", "extra"):
            self._book_order(order, item, menu, mem)
        return Answer(order.server, text, expression, source, refs[-1],
                      ACT.order, variation, refs=tuple(refs), flags=flags,
                      detail={"order": order.to_dict()})

    def _book_order(self, order: OrderFound, item: MenuItem, menu: Menu, mem: ConversationMemory) -> None:
        """The order on the tab: what it swaps out taken off, the others of the order and the item booked."""
        if order.swapped is not None and order.swapped in mem.orders[mem.paid:]:
            # (the last one of what was given up comes off; goods, picked into one basket, all of them)
            given_up = self.orders.item(order.server, order.swapped)
            self._book(mem, menu, order.swapped, 0 if given_up is not None and given_up.kind == "goods" else
                       mem.orders[mem.paid:].count(order.swapped) - 1, total=True)
        for also, n, said, total in order.also:
            if not self._named_again(menu, also, said, False, mem):
                self._book(mem, menu, also, n, total=total or self._in_basket(menu, also, said, False, mem),
                           counted=said is not None)
        if not self._named_again(menu, item.id, order.counted, order.more, mem):
            self._book(mem, menu, item.id, order.count,
                       total=order.total or self._in_basket(menu, item.id, order.counted, order.more, mem),
                       counted=order.counted is not None)

    def _service_price(self, order: OrderFound, item: MenuItem | None, menu: Menu, text: str, state: GameState,
                       turn: int, variety: Variety) -> Answer | None:
        """A service booked (「ラッピングってできますか？」 with flowers on the tab): its price, said with it where its
        own line names none, so an add-on never reaches the bill unannounced."""
        if item is None or order.kind != "item" or item.kind != "service" or not item.price or not menu.prices or \
                amounts(text):
            return None
        return self._menu_line(order.server, "prices", menu.prices, state, turn, variety,
                               {"{item}": item.id, "{price}": f"{item.price:,}"})

    def _not_an_order(self, order: OrderFound, item: MenuItem | None, menu: Menu, step: Step,
                      mem: ConversationMemory, turn: int, variety: Variety) -> Answer | None:
        """A treat turned down (「おごりません」: answered graciously, nothing served nor billed), money handed
        over after the bill, or a question about an item (「銘柄は？」)."""
        if order.kind == "declined":
            lines = menu.declined or [SpokenLine(text=DEFAULT_DECLINED)]
            return self._menu_line(order.server, "declined", lines, step.state, turn, variety, {})
        lines = menu.paid if order.kind == "paid" else (item.about.lines if item and item.about else [])
        if not lines:
            return None
        if order.kind == "paid":
            return self._paid(order, menu, step, mem, turn, variety)
        return self._menu_line(order.server, f"{order.item}/about", lines, step.state, turn, variety,
                               {"{item}": order.item or ""})

    def _line_kind(self, order: OrderFound, item: MenuItem | None, menu: Menu, fill: dict[str, str]) -> str | None:
        """Which of the menu's line sets answers the order (None: the item's own lines); `fill` gains the
        placeholders that set's lines name."""
        if item is not None and order.parts:
            fill["{parts}"] = _SAID_WORDS["parts_joiner"].join(order.parts)
        if order.kind == "treat" and menu.treat:
            # 「一杯おごります」: thanks from the one treated
            fill["{item}"] = item.id if item is not None else _SAID_WORDS["a_drink"]
            return "treat"
        if order.kind == "extra" and order.named and (menu.extras or menu.styles):
            # 「タバスコでいいや」「ケチャップじゃなくて粉チーズな」: what was asked for the order just served
            fill["{extra}"] = fill["{style}"] = order.named
            return "extras" if menu.extras else "styles"
        if order.kind == "coming" and menu.coming:
            # 「ナポリタンまだ？」 after ordering it: here it is
            return "coming"
        if order.style and (item is not None or order.kind == "adjust") and menu.styles:
            # 「水割り、薄めで」: the way asked for, not the item's own line (「うちのは濃いめよ」)
            fill["{style}"] = order.style
            if order.parts:
                fill["{item}"] = fill["{parts}"]         # 「大根と卵、からし多めね」: the parts, not renamed
            return "styles"
        if item is not None and order.counted and order.count > 1 and not order.parts and menu.counted:
            # 「赤い薔薇を5本」: how many, said back
            fill["{count}"] = order.counted
            return "counted"
        if item is not None:
            # 「大根と卵」: the parts asked for, named; else the item's own line
            return "parts" if order.parts and menu.parts else None
        if order.kind == "missing" and order.named and menu.unavailable:
            # 「レモンサワーある？」: not here, and what is
            fill.update({"{item}": order.named, "{menu}": self.orders.listed(order.server, order.group)})
            return "unavailable"
        if order.kind == "ask" and (order.group or order.listing) and menu.suggest:
            fill["{menu}"] = self.orders.listed(order.server, order.group)
            return "suggest"
        return "missing" if order.kind == "missing" else "ask"

    def _paid(self, order: OrderFound, menu: Menu, step: Step, mem: ConversationMemory, turn: int,
              variety: Variety) -> Answer:
        """Money handed over after the bill: less than is owed is told the sum again and nothing is paid; more is
        given its change (the menu's `change` lines, {change}); else thanks (`paid`).  What was paid for is not
        on the next bill."""
        owed = sum(i.price for ordered in mem.orders[mem.paid:] for i in menu.items
                   if i.id == ordered and i.price is not None)
        # (a sum asked back as change, with none handed, says what was handed: 「釣り、八百円くれ」 on 4,200円)
        given = order.amount if order.amount is not None or not order.change else owed + order.change
        if given is not None and 0 < given < owed and menu.bill:
            return self._menu_line(order.server, "bill", menu.bill, step.state, turn, variety, {"{total}": f"{owed:,}"})
        mem.paid = len(mem.orders)
        if given is not None and given > owed > 0 and menu.change and not order.keep_change:
            return self._menu_line(order.server, "change", menu.change, step.state, turn, variety,
                                   {"{change}": f"{given - owed:,}", "{total}": f"{owed:,}"})
        return self._menu_line(order.server, "paid", menu.paid, step.state, turn, variety, {})

    def _also_served(self, order: OrderFound, menu: Menu, step: Step, turn: int,
                     variety: Variety) -> tuple[str, list[str], dict]:
        """The lines for the other items of one order (`order.also`): each one's `counted` line where more than one
        is asked for and the menu has them, else its own line; their text, refs and variation."""
        text, refs, variation = "", [], {}
        for item_id, n, said, _ in order.also:
            item = self.orders.item(order.server, item_id)
            if item is None:
                continue
            counted = bool(said and n > 1 and menu.counted)
            lines = menu.counted if counted else item.lines
            prefix = f"menu/{order.server}/counted" if counted else f"menu/{order.server}/{item.id}"
            if not lines:
                continue
            fresh = [i for i in range(len(lines)) if f"{prefix}#{i + 1}" not in refs]
            index, more = self._pick(prefix, "cycle" if counted else item.mode, lines, step.state, turn, variety,
                                     among=fresh if len(fresh) < len(lines) and fresh else None)
            text += self._filled(lines[index].text, {"{item}": item.id, "{count}": said or ""})
            refs.append(f"{prefix}#{index + 1}")
            variation.update(more)
        return text, refs, variation

    @staticmethod
    def _in_basket(menu: Menu, item_id: str, said: str | None, more: bool, mem: ConversationMemory) -> bool:
        """Whether a count said for goods already in the basket is how many in all: 「赤い薔薇にしよか」 then 「赤い薔薇を
        10本ください」 is ten, not eleven, and an order said again (「ひまわり8本とかすみ草2本のやつ」) or changed
        (「やっぱりひまわりを5本」) is what the basket holds — unless said as more (あと, もう, 追加).  Goods are picked
        into one basket; a drink ordered again is another."""
        return said is not None and not more and _in_the_basket(menu, item_id, mem)

    def _paid_goods(self, found: OrderFound, mem: ConversationMemory) -> bool:
        """Whether an order names goods already paid for and not on the tab since."""
        item = self.orders.item(found.server, found.item) if found.item else None
        return item is not None and item.kind == "goods" and found.item in mem.orders[:mem.paid] and \
            found.item not in mem.orders[mem.paid:]

    @staticmethod
    def _named_again(menu: Menu, item_id: str, said: str | None, more: bool, mem: ConversationMemory) -> bool:
        """Whether goods already in the basket are only named again, alone or beside another item, with no count and
        no word of more (「ばらはやめて、かすみ草とひまわりにするわ。ひまわり二本ください」 with gypsophila picked;
        「スズランにします」 said again while the one ordered is unanswered): what the basket holds of them stays as
        it is.  A drink ordered again is another (goods only: _in_the_basket)."""
        return said is None and not more and _in_the_basket(menu, item_id, mem)

    @staticmethod
    def _book(mem: ConversationMemory, menu: Menu, item_id: str, n: int, *, total: bool = False,
              counted: bool = False) -> None:
        """Put `n` of an item on the bill (or, with `total`, make it `n` in all).  A service (配達, ラッピング) is
        done once for what is still to pay, however often it is asked for — or as many times in all as a count
        said for it (`counted`: 「包みを二つに分けて」 is two wrappings)."""
        unpaid = mem.orders[mem.paid:]
        item = next((i for i in menu.items if i.id == item_id), None)
        if item is not None and item.kind == "service" and counted and n > 1:
            total = True
        elif item is not None and item.kind == "service":
            # (and once a visit: a service already paid for, 「大学まで届けてもらえますか？」 after the bill, is that one)
            n, total = (0 if item_id in mem.orders[:mem.paid] else 1), True
        more = n - unpaid.count(item_id) if total else n
        if more >= 0:
            mem.orders.extend([item_id] * more)
        else:
            for i in range(len(mem.orders) - 1, mem.paid - 1, -1):   # the last ones come off first
                if more and mem.orders[i] == item_id:
                    del mem.orders[i]
                    more += 1
        cut = max(0, len(mem.orders) - ORDERS_KEPT)
        if cut:
            del mem.orders[:cut]
            mem.paid = max(0, mem.paid - cut)

    def _not_served_first(self, order: OrderFound, item: MenuItem, menu: Menu, step: Step, turn: int,
                          variety: Variety) -> tuple[str, str, dict]:
        """The menu's line that the thing asked for instead is not served, its ref and its variation."""
        said_first = [line for line in menu.unavailable if "{menu}" not in line.text] or menu.unavailable
        first_prefix = f"menu/{order.server}/unavailable"
        i, more = self._pick(first_prefix, "cycle", menu.unavailable, step.state, turn, variety,
                             among=[menu.unavailable.index(line) for line in said_first])
        text = self._filled(menu.unavailable[i].text, {"{item}": order.instead or "",
                                                       "{menu}": self.orders.listed(order.server, item.kind)})
        return text, f"{first_prefix}#{i + 1}", more

    def _pick(self, prefix: str, mode: str, lines: list, state: GameState, turn: int, variety: Variety,
              among: list[int] | None = None) -> tuple[int, dict]:
        """The line of a menu's set to say (an order is always acknowledged: else the one said least, longest
        ago); `among`: only those."""
        said = None if among is not None else self.answerer.line_set(prefix, mode, lines, state, turn, prefix,
                                                                     variety)
        if said is None:
            refs = [f"{prefix}#{i + 1}" for i in (among if among is not None else range(len(lines)))]
            index = int((variety.least_said(refs) or refs[0]).rsplit("#", 1)[1]) - 1
            said = (index, {prefix: remember(state.variation.get(prefix, ()), index, len(lines))})
        return said

    @staticmethod
    def _filled(text: str, fill: dict[str, str]) -> str:
        for key, value in fill.items():
            text = text.replace(key, value)
        return text

    def _money(self, text: str, state: GameState, speaker: str, mem: ConversationMemory, turn: int,
               variety: Variety, paying: bool, served: str | None = None) -> Answer | None:
        """「ハイボールっていくら？」: the item's price; paying (お会計, いくら？) after ordering: the bill; a question
        about the bill (内訳は？ 高くない？ いくら？ after it): what was served, priced.  `served`: the item
        ordered in this line's other part (「水割りお願い。あと、いくら？」 asks its price)."""
        normalised = self._bill_asked_apart(nfkc(text))
        # 「で、ひまわりは？」 right after a price was said: that item's price
        asked_price = bool(_PRICE.search(normalised)) or (
            bool(self._items_named(normalised)) and self._said_last(mem, state, "/prices#") and
            bool(_PRICE_FOLLOW_UP.match(self.orders.without_items(normalised))))
        item_named = bool(self._items_named(normalised))
        # 「おでんって一皿600円なんですか？」: a sum checked of an item, with no bill said just before, asks its price
        price_check = item_named and asks_an_amount(normalised) and not _BILL.search(normalised) and \
            not self._said_last(mem, state, "/bill#", within=2) and not self._said_last(mem, state, "/breakdown#", within=2)
        # 「配達ってできますか？」 of an item on the menu: yes, at its price
        # (not of a way of making it: 「ウーロン茶、薄くできる？」 asks for it so, not its price)
        possible = item_named and (asks_if_possible(normalised) or self.orders.asks_after_service(normalised, mem.orders[mem.paid:])) and \
            style_of(normalised)[0] is None
        asked_price = asked_price or price_check or possible
        known = self._tab_sums(mem)
        # 「バラはいりません」 of an item on the bill takes it off
        unwanted = cancels(normalised) and any(i in mem.orders[mem.paid:] for i in self._items_named(normalised))
        # (the counts said of each item, read once: whether they correct the tab, and what they leave on it)
        claimed = self.orders.counts_named(normalised) if item_named and mem.orders[mem.paid:] else {}
        unwanted = unwanted or fewer_claimed(normalised, claimed, mem.orders[mem.paid:]) is not None
        # (change asked for, 「釣り、八百円くれ」, with nothing handed now: the ledger answers — settled, or what is owed)
        paid_asked = asks_if_paid(normalised) or change_asked(normalised) is not None or \
            (handed_amount(normalised) is None and money("change_questioned").search(normalised) is not None)
        billed = any(self._said_last(mem, state, kind, within=0) for kind in ("/bill#", "/breakdown#", "/prices#"))
        disputed = disputes(normalised, item_named, known, billed)
        if not (asked_price or paying or paid_asked or unwanted or disputed):
            return None
        people = list(self.rules.people(state.place))
        servers = [p for p in ([speaker] + people) if p in self.scenario.menus]
        if not servers:
            return None
        if asked_price and not item_named and not paying and prices_other_thing(normalised):
            return None           # 「レコード針のお値段、どのくらい？」: another thing's price, not the tab's
        listed = self._listed_asked(normalised, mem, state) if asked_price and not item_named else []
        unpaid = mem.orders[mem.paid:]
        if unpaid and not price_check and not listed and (unwanted or disputed or
                                                          (asked_price and _WHOLE_SUM.search(normalised)) or (asked_price and self._item_named(normalised) is None and (any(
                ref.startswith("menu/") and "/bill#" in ref for ref in mem.said) or UNIT_PRICE.search(normalised)))):
            # 「内訳は？」「高くない？」, 「いくら？」 after the bill, 「一杯いくら？」: what was served and its prices,
            # not paying;
            # 「2杯目は頼んでない」: what was taken back comes off first
            # (「キャンセル」 alone takes back only what was served the turn before — or goods chosen in the last
            # turns, not yet handed over: 「赤い薔薇30本」, a question, 「一旦キャンセルで」)
            goods = frozenset(i.id for server in servers for i in self.scenario.menus[server].items
                              if i.kind == "goods")
            # (the items are those of the sentence that takes them back; the counts may follow in the next:
            # 「カレー2つは食べてないですよ！1つだけです」)
            back = taking_back(normalised)
            # (「バラはいりません。キャンセルで」: the sentence that cancels names nothing, the one item of the line is
            # what it takes back)
            # (「…は、…分でしたよね？それも外してください」: what is pointed at is the item the line named first)
            named = self._items_named(back) or (lambda whole: whole if len(set(whole)) == 1 else
                                                whole[:1] if money("pointer_taken_back").search(back) else [])(
                self._items_named(normalised))
            # (「スズランやめて、薔薇もう一本にして」: an item said with a count of more is added, not taken back)
            adding = self._added_beside(normalised)
            named = [item for item in named if item not in adding]
            recent = self._recently_served(mem, state, within=0) or \
                (last if (last := self._recently_served(mem, state, within=2)) in goods else None)
            if len(named) == 1 and self._names_part(back, named[0], servers) and named[0] not in back:
                named, recent = [], None     # 「卵はキャンセルで」: a part of the dish taken out, not the dish
            ends = {end: item for item, _, end in self.orders.spans(normalised)}
            left = _left_on_tab(normalised, named, claimed, unpaid, recent, goods, ends)
            removed = [] if left is None else [item for item in dict.fromkeys(unpaid)
                                               if unpaid.count(item) > left.count(item)]
            if not removed and not asked_price and not disputed:
                return None       # 「大根はもう頂いてるので追加はいらないです」: nothing on the tab declined, no bill asked
            if left is not None:
                # 「ひまわりを1本減らして、スズランを1本足して」: what the same line adds goes on beside what it takes off
                mem.orders[mem.paid:] = unpaid = left + [item for item in adding if item not in removed]
            if (broken_down := self._breakdown(servers, unpaid, removed, state, turn, variety)) is not None:
                return broken_down
        named = self._items_named(normalised) or \
            ([served] if served is not None and asked_price and not _BILL.search(normalised) else []) or listed
        if asked_price and named and self._price_said_back_before(normalised):
            return None           # 「ラッピング200円ですね、了解です。で、5000円だと花はどれくらい？」: asks on, of another thing
        if asked_price and named:
            # 「かすみ草とひまわりはいくら？」: each item's price, in the order named
            for server in servers:
                menu = self.scenario.menus[server]
                priced = [i for name in named for i in menu.items if i.id == name and i.price is not None]
                if priced and menu.prices:
                    # (asked whether one can be had: its price, said as an offer of it — turn.py)
                    kind = "possible" if possible and len(priced) == 1 else "prices"
                    # (with a count, 「ひまわり2本でいくら？」: what that many come to)
                    counted = self.orders.counts_said(normalised)
                    each = [self._menu_line(server, kind, menu.prices, state, turn, variety,
                                            _priced_fill(i.id, i.price or 0, counted.get(i.id))) for i in priced]
                    return dataclasses.replace(each[-1], text="".join(a.text for a in each),
                                               refs=tuple(r for a in each for r in a.refs)) if len(each) > 1 \
                        else each[0]
            return None
        if not (paying or paid_asked or _BILL.search(without_put_off(normalised))):
            return None
        return self._bill(servers, mem, state, turn, variety, receipt=bool(_RECEIPT.search(normalised)))

    def _added_beside(self, text: str) -> list[str]:
        """The items a line correcting the tab adds in words of more (counts' `more`: 足して, 追加, あと), each as
        many times as counted."""
        spans = sorted(self.orders.spans(text), key=lambda span: span[1])
        added: list[str] = []
        for i, (item, start, end) in enumerate(spans):
            count = count_of(text, start, end, spans[i + 1][1] if i + 1 < len(spans) else None)
            if count is not None and count.more:
                added += [item] * count.n
        return added

    def _listed_asked(self, text: str, mem: ConversationMemory, state: GameState) -> list[str]:
        """The items a price asked naming none is of: those listed last — but the sum of everything, with something
        on the tab, is the tab's."""
        if mem.orders[mem.paid:] and _WHOLE_SUM.search(text):
            return []
        return self._listed_last(mem, state)

    def _bill_asked_apart(self, text: str) -> str:
        """The sentences that ask for the bill, where items are named only in others that ask neither a price nor
        the bill (「ナポリタンでお給料いいですね。あの、お会計をお願いします。おいくらになりますか？」: the bill, not
        the price of what was talked about); else the whole text."""
        said = sentences(text)
        if len(said) < 2:
            return text
        if any(self.orders.counts_named(s) or cancels(s) or disputes(s) or self.orders.orders_outright(s) for s in said):
            # (a sentence counting the items, 「かすみ草2本とスズラン1本で」, or taking one back, 「ラッピングはいりません」,
            # says what the bill holds)
            return text
        named = [bool(self._items_named(s)) for s in said]
        asks = [bool(_BILL.search(s) or _PRICE.search(s)) for s in said]
        if not any(named) or any(n and a for n, a in zip(named, asks)) or \
                not any(_BILL.search(s) and not n for s, n in zip(said, named)):
            return text
        return "".join(s for s, n in zip(said, named) if not n)

    def _bill(self, servers: list[str], mem: ConversationMemory, state: GameState, turn: int,
              variety: Variety, receipt: bool = False) -> Answer | None:
        """The bill for what is unpaid, from the first server with one; or, everything had paid for, the ledger
        saying so (not a bill promised that never comes)."""
        for server in servers:
            menu = self.scenario.menus[server]
            prices = {i.id: i.price for i in menu.items if i.price is not None}
            total = sum(prices.get(ordered, 0) for ordered in mem.orders[mem.paid:])
            if total > 0 and menu.bill:
                return self._menu_line(server, "bill", menu.bill, state, turn, variety, {"{total}": f"{total:,}"})
            if total == 0 and not receipt and any(prices.get(ordered) for ordered in mem.orders[:mem.paid]):
                # (a receipt asked for after paying is no question of the bill: what is known of receipts answers)
                return self._menu_line(server, "settled", menu.settled or [SpokenLine(text=DEFAULT_SETTLED)], state,
                                       turn, variety, {})
        return None

    def _price_said_back_before(self, text: str) -> bool:
        """Whether the items a line names, with their price, are in a sentence before the one that asks — said
        back — and the sentence that asks names none: what it asks is of another thing."""
        said = sentences(text)
        asking = [i for i, sentence in enumerate(said) if is_question(sentence)]
        if len(said) < 2 or not asking or self._items_named(said[asking[-1]]):
            return False
        return any(self._items_named(sentence) and amounts(sentence) for sentence in said[:asking[-1]])

    def _tab_sums(self, mem: ConversationMemory) -> frozenset[int]:
        """The sums the tab holds: each server's total of what is unpaid, and each unpaid item's price."""
        unpaid = mem.orders[mem.paid:]
        sums: set[int] = set()
        for menu in self.scenario.menus.values():
            prices = {i.id: i.price for i in menu.items if i.price is not None}
            sums |= {prices[item] for item in unpaid if item in prices}
            sums.add(sum(prices.get(item, 0) for item in unpaid))
        return frozenset(sums - {0})

    @staticmethod
    def _listed_last(mem: ConversationMemory, state: GameState) -> list[str]:
        """The items a menu's list named on the turn before this one (「今日あるのは赤い薔薇、かすみ草…」), so
        「それぞれ1本いくら？」 asks their prices."""
        return list(mem.listed) if mem.listed and mem.listed_turn >= state.turn - 1 else []

    def _breakdown(self, servers: list[str], unpaid: list[str], removed: list[str], state: GameState, turn: int,
                   variety: Variety) -> Answer | None:
        """What is on the tab, priced, said by the first server with something on it; else, where all was taken
        back, that it was."""
        for server in servers:
            menu = self.scenario.menus[server]
            items, total = itemised(unpaid, {i.id: i.price for i in menu.items if i.price is not None})
            if total > 0:
                said = self._menu_line(server, "breakdown", menu.breakdown or [SpokenLine(text=DEFAULT_BREAKDOWN)],
                                       state, turn, variety, {"{items}": items, "{total}": f"{total:,}"})
            elif removed:
                said = self._menu_line(server, "taken_back", [SpokenLine(text=DEFAULT_TAKEN_BACK)], state, turn,
                                       variety, {"{item}": "、".join(removed)})
            else:
                continue
            return dataclasses.replace(said, detail={**said.detail, "taken_back": removed}) if removed else said
        return None

    @staticmethod
    def _said_last(mem: ConversationMemory, state: GameState, kind: str, within: int = 1) -> bool:
        """Whether a line of the menu's set `kind` (「/prices#」) was said in the `within` turns before this one."""
        return any(ref.startswith("menu/") and kind in ref and turns and turns[-1] >= state.turn - within
                   for ref, turns in mem.said.items())

    def _menu_line(self, server: str, kind: str, lines: list, state: GameState, turn: int, variety: Variety,
                   filled: dict[str, str]) -> Answer:
        prefix = f"menu/{server}/{kind}"
        said = self.answerer.line_set(prefix, "cycle", lines, state, turn, prefix, variety)
        if said is None:
            refs = [f"{prefix}#{i + 1}" for i in range(len(lines))]
            index = refs.index(variety.least_said(refs) or refs[0])
            said = (index, {prefix: remember(state.variation.get(prefix, ()), index, len(lines))})
        index, variation = said
        line = lines[index]
        spoken = line.text
        for key, value in filled.items():
            spoken = spoken.replace(key, value)
        return Answer(server, spoken, line.expression or NEUTRAL, AnswerSource.MENU, f"{prefix}#{index + 1}", ACT.order,
                      variation, refs=(f"{prefix}#{index + 1}",), detail=dict(filled))

    def _item_named(self, text: str) -> str | None:
        return next(iter(self.orders.named(text)), None)

    def _names_part(self, text: str, item_id: str, servers: list[str]) -> bool:
        """Whether `text` names a part of the item (卵 of おでん)."""
        return any(part in text for server in servers
                   if (item := self.orders.item(server, item_id)) is not None for part in item.parts)

    def _items_named(self, text: str) -> list[str]:
        return self.orders.named(text)
