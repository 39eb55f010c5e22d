"""Every line a character can say, by reference: what the conversation remembers is references, not texts.

A reference names one authored or scripted line, so the memory of a game stays small and a line's text is
always the scenario's own:

| reference | line |
|---|---|
| ``line/A03`` | a scripted line of a scene |
| ``knowledge/赤尾妙子/3#2`` | the second line of the character's fourth knowledge entry |
| ``reaction/赤尾妙子/挨拶#1`` | a reaction line |
| ``fallback/赤尾妙子-拒1`` | a fallback line |
| ``menu/赤尾妙子/ビール#1``, ``menu/赤尾妙子/ask#1``, ``…/missing#1``, ``…/prices#1``, ``…/bill#1`` | menu lines |
| ``recall/赤尾妙子#1``, ``clarify/赤尾妙子#1``, ``chatter/赤尾妙子#1``, ``echo/赤尾妙子#1`` | a character's line sets |
| ``arrival/店内#2``, ``ending/店内#1``, ``ending/E2/店内#1`` | a place's lines (a closing line of one of its `endings`) |
| ``line/A04>yes#1`` | a reply (yes / no / other) to the question the line before ``>`` asked |
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..faces import NEUTRAL
from ..scenario import CompiledScenario
from ..scenario.conditions import Effect, parse_effect
from ..scenario.loader import MENU_LINE_SETS
from ..scenario.model import Character, Replies


@dataclass(frozen=True)
class BookLine:
    ref: str
    speaker: str | None        # None for a line any speaker may say (a reply's speaker is the asker's)
    text: str
    expression: str
    replies: Replies | None = None
    secret_from: tuple[str, ...] = ()    # not said while one of these characters is present
    effects: tuple[Effect, ...] = ()     # what saying it does (a reply's フラグ: or 表情: effects)


def place_line_ref(fired_id: str) -> str:
    """The reference of a place line the rules fired (``店内/arrival#2`` → ``arrival/店内#2``)."""
    place, _, rest = fired_id.partition("/")
    kind, _, n = rest.partition("#")
    return f"{kind}/{place}#{n}"


def fired_ref(line_id: str, scripted: bool) -> str:
    return f"line/{line_id}" if scripted else place_line_ref(line_id)


class LineBook:
    def __init__(self, scenario: CompiledScenario) -> None:
        self.scenario = scenario
        self._lines: dict[str, BookLine] = {}
        for line in scenario.lines.values():
            self._put(f"line/{line.id}", line.speaker, line.text, None, line.model.replies)
        for character in scenario.scenario.characters:
            self._put_character(character)
        for place in scenario.scenario.places:
            for n, place_line in enumerate(place.arrival.lines if place.arrival else (), 1):
                self._put(f"arrival/{place.id}#{n}", place_line.speaker, place_line.text, place_line.expression,
                          place_line.replies)
            for ending in scenario.endings.get(place.id, ()):
                for n, (place_line, _) in enumerate(ending.lines, 1):
                    self._put(place_line_ref(f"{ending.line_prefix}#{n}"), place_line.speaker, place_line.text,
                              place_line.expression, place_line.replies)

    def _put_character(self, character: Character) -> None:
        """Every line of a character's own sets."""
        c = character.id
        for i, entry in enumerate(character.knowledge):
            for n, spoken in enumerate(entry.lines, 1):
                self._put(f"knowledge/{c}/{i}#{n}", c, spoken.text, spoken.expression, spoken.replies,
                          spoken.secret_from)
        for reaction in character.reactions:
            for n, spoken in enumerate(reaction.lines, 1):
                self._put(f"reaction/{c}/{reaction.act}#{n}", c, spoken.text, spoken.expression,
                          spoken.replies, spoken.secret_from)
        for fallback in character.fallbacks:
            self._put(f"fallback/{fallback.id}", c, fallback.text, fallback.expression, None)
        for name in ("recall", "clarify", "chatter", "echo", "unsure"):
            line_set = getattr(character, name)
            for n, spoken in enumerate(line_set.lines if line_set else (), 1):
                self._put(f"{name}/{c}#{n}", c, spoken.text, spoken.expression, spoken.replies,
                          spoken.secret_from)
        for name, _, lines in character.forms.line_sets() if character.forms is not None else ():
            for n, spoken in enumerate(lines, 1):
                self._put(f"forms/{c}/{name}#{n}", c, spoken.text, spoken.expression, spoken.replies,
                          spoken.secret_from)
        if character.menu is not None:
            for item in character.menu.items:
                for n, spoken in enumerate(item.lines, 1):
                    self._put(f"menu/{c}/{item.id}#{n}", c, spoken.text, spoken.expression, spoken.replies)
            for kind in MENU_LINE_SETS:
                for n, spoken in enumerate(getattr(character.menu, kind), 1):
                    self._put(f"menu/{c}/{kind}#{n}", c, spoken.text, spoken.expression, spoken.replies)

    def _put(self, ref: str, speaker: str | None, text: str, expression: str | None,
             replies: Replies | None, secret_from: Sequence[str] = ()) -> None:
        self._lines[ref] = BookLine(ref, speaker, text, expression or NEUTRAL, replies, tuple(secret_from))

    def get(self, ref: str) -> BookLine | None:
        line = self._lines.get(ref)
        if line is not None or ">" not in ref:
            return line
        asked, _, reply = ref.partition(">")
        question = self._lines.get(asked)
        if question is None or question.replies is None:
            return None
        kind, _, n = reply.partition("#")
        options = getattr(question.replies, kind, None) if kind in ("yes", "no", "other") else None
        if not options or not n.isdigit() or not 1 <= int(n) <= len(options):
            return None
        chosen = options[int(n) - 1]
        # The effects were checked when the scenario loaded.
        return BookLine(ref, question.speaker, chosen.text, chosen.expression or NEUTRAL, None,
                        effects=tuple(parse_effect(e) for e in chosen.effects))

    def text(self, ref: str) -> str | None:
        line = self.get(ref)
        return line.text if line is not None else None

    def __iter__(self) -> Iterator[BookLine]:
        return iter(self._lines.values())
