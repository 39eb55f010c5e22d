"""Clarify: when two topics fit a line alike, the character asks which one, naming both.

As Rasa CALM's `Clarify` command: rather than guess, the character asks 「お店の音楽のこと？　それとも看板の
こと？」 in the scenario's words (each intent's `name`, else 「<id>のこと」) and the next turn settles it.  Asked when

- the interpreter's two best intent options are close: both at least ``FLOOR`` and the lead under
  ``MARGIN`` (a line that names two topics as strongly, or neither clearly), or
- the line names a word the scenario declares ambiguous (`clarify.ambiguous`: 看板 → 店名と看板, メニュー)
  and nothing else in it points at one of those topics.

Never for a move or 離脱, nor when a rule decided the input (an example matched, a move was explicit).  A
scenario turns it off with ``"clarify": {"ask": false}`` (the better guess is then taken, as before).

The next turn answers it when it names one option (its name, id or one of its words) or points at one
(最初の / 前者 → the first, 後の方 / 後者 → the second); the clarified turn is then played as that topic, with
both lines read for knowledge words.  A turn that does neither is read on its own.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..interpret.lexicon import compiled
from ..interpret.options import Interpretation, InterpretChoices
from ..interpret.text import TextForms, make_matcher, nfkc
from ..scenario import CompiledScenario, PlayerInput

FLOOR = 0.75       # both options at least this: each named by a listed word (≈ 1.0; a variant 0.85), not
                   #     by a shared n-gram or a word only near in meaning
MARGIN = 0.12      # ... and the lead of the best under this
DEFAULT_LINE = "{1}？　それとも{2}？"
# The next turn pointing at the first option, the second, or both (最初の / 前者, 後の方 / 後者, 両方).
_FIRST = compiled("conversation", "clarify_first")
_SECOND = compiled("conversation", "clarify_second")
_BOTH = compiled("conversation", "clarify_both")
# Rules that decided the input themselves: nothing to ask.
_DECIDED = frozenset({"example_match", "explicit_move", "same_place", "farewell", "agreement", "invitation"})


@dataclass(frozen=True)
class Options:
    inputs: tuple[PlayerInput, PlayerInput]
    why: str                       # "close" or "ambiguous:<word>"


class Clarifier:
    def __init__(self, scenario: CompiledScenario) -> None:
        self.scenario = scenario
        self.settings = scenario.scenario.clarify
        self.matcher = make_matcher()

    def name(self, intent_id: str) -> str:
        intent = self.scenario.intents[intent_id]
        return intent.name or f"{intent.id}のこと"

    def should_ask(self, text: str, interpretation: Interpretation, offered: InterpretChoices,
                   candidates: InterpretChoices | None = None) -> Options | None:
        """`offered`: the options the classifier saw (after word narrowing); `candidates`: the call's
        options before word narrowing (an ambiguous word the author declared need not be a listed one)."""
        if not self.settings.ask or interpretation.error:
            return None
        if interpretation.rule in _DECIDED or (interpretation.input.is_move or interpretation.input.is_leave):
            return None
        intents = {o.token: o.input for o in offered if o.is_intent}
        ranked = sorted(((interpretation.scores.get(t, 0.0), t) for t in intents), reverse=True)
        if len(ranked) >= 2:
            (s1, t1), (s2, t2) = ranked[0], ranked[1]
            if s2 >= FLOOR and s1 - s2 < MARGIN and self._named(text, intents[t1]) and self._named(text, intents[t2]):
                return Options((intents[t1], intents[t2]), "close")
        return self._ambiguous(text, candidates or offered, interpretation)

    def _named(self, text: str, option: PlayerInput) -> bool:
        """Whether the line names the topic by one of its listed words (a topic scored on shared letters or
        meaning alone is a guess, not a second meaning of the line)."""
        words = self.scenario.intents[option.target_id].words
        return bool(words) and bool(self.matcher.hits(TextForms.of(text), words))

    def _ambiguous(self, text: str, offered: InterpretChoices, interpretation: Interpretation) -> Options | None:
        if not self.settings.ambiguous:
            return None
        forms = TextForms.of(text)
        offered_ids = [o.input.target_id for o in offered if o.is_intent]
        for word, named in self.settings.ambiguous.items():
            hits = self.matcher.hits(forms, (word,))
            if not hits:
                continue
            options = [i for i in named if i in offered_ids]
            if len(options) < 2:
                continue
            spans = [(h.start, h.end) for h in hits]
            # something else in the line settles it: another listed word of one of the topics
            settled = [i for i in options
                       if any(not any(a <= h.start < b for a, b in spans)
                              for h in self.matcher.hits(forms, self.scenario.intents[i].words)
                              if nfkc(h.word) != nfkc(word))]
            if len(settled) == 1:
                continue
            first = interpretation.input.target_id if interpretation.input.is_intent and \
                interpretation.input.target_id in options else options[0]
            second = next(i for i in options if i != first)
            return Options((PlayerInput.intent(first), PlayerInput.intent(second)), f"ambiguous:{word}")
        return None

    def resolve(self, text: str, options: list[str]) -> PlayerInput | None:
        """The option the player's answer picks, or None."""
        inputs = [PlayerInput.parse(o) for o in options]
        normalised = nfkc(text)
        forms = TextForms.of(text)
        named = []
        for option in inputs:
            if not option.is_intent:
                continue
            intent = self.scenario.intents.get(option.target_id)
            if intent is None:
                continue
            words = [w for w in (intent.name, intent.id, *intent.words) if w]
            if self.matcher.hits(forms, words):
                named.append(option)
        if len(named) == 1:
            return named[0]
        if len(inputs) >= 2:
            if _FIRST.search(normalised) and not _SECOND.search(normalised):
                return inputs[0]
            if _SECOND.search(normalised) and not _FIRST.search(normalised):
                return inputs[1]
            if _BOTH.search(normalised) or len(named) == 2:
                return inputs[0]
        return None
