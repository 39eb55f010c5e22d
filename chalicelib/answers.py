"""Authored answers when no model speaks: knowledge lines, reactions, fallbacks.

When the rules ask for free conversation and no generation model is
configured (the embedded default), or the model failed, a character still
answers in their own words, from the most specific authored line that fits:

1. **knowledge**: the player asked about what a knowledge entry covers (the
   input is its intent, or the text names its `words`): one of the entry's
   `lines`, said by the addressed character, or by someone present who has
   such lines when the addressed one has none;
2. **reaction**: the dialogue act of the text (`interpret.acts`) has a
   reaction in the speaker's `reactions`;
3. **fallback**: the speaker's fallback lines, last.

Every line carries its expression (neutral when the author gave none).  Which
line of a set is said follows the set's variation mode, with its history in
the game state (`scenario.variation`), so the choice is deterministic and
stored with the turn.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .interpret.acts import NO_ACT, ActRecogniser
from .interpret.cues import SceneNames
from .interpret.owners import place_owned_words, said_of_person
from .interpret.text import TextForms, WordMatcher, find_names, make_matcher, nfkc
from .scenario import FreeTalk, GameRules, GameState, PlayerInput
from .scenario.loader import NEUTRAL, CompiledKnowledge
from .scenario.variation import fallback_key, knowledge_key, pick, reaction_key, remember
from .turn_record import AnswerSource

# Acts aimed at a person: when the text names someone present, that person reacts.
_ABOUT_SOMEONE = {"称賛", "暴言", "本人", "感謝", "謝罪"}
SILENCE = "……"


@dataclass(frozen=True)
class Answer:
    speaker: str
    text: str
    expression: str
    source: AnswerSource                # knowledge, reaction or fallback
    ref: str | None                     # which set and line: "reaction/赤尾妙子/挨拶#2"
    act: str                            # the dialogue act recognised (なし when none)
    variation: dict[str, tuple[int, ...]] = field(default_factory=dict)   # the sets' new histories

    def to_dict(self) -> dict:
        return {"speaker": self.speaker, "text": self.text, "expression": self.expression, "source": self.source,
                "ref": self.ref, "act": self.act}


class Answerer:
    def __init__(self, rules: GameRules, names: SceneNames | None = None, *,
                 matcher: WordMatcher | None = None, recogniser: ActRecogniser | None = None) -> None:
        self.rules = rules
        self.scenario = rules.scenario
        self.names = names or SceneNames.of(rules.scenario)
        self.recogniser = recogniser or ActRecogniser(self.names)
        self.matcher = matcher or make_matcher()
        # Only entries with authored lines can answer.
        self._with_lines = {c: tuple(k for k in entries if k.entry.lines)
                            for c, entries in self.scenario.knowledge.items()}
        # Words an intent ties to a place (店の名前): said of a person (お名前) they name another topic.
        self._owned = place_owned_words(self.scenario)

    def answer(self, free_talk: FreeTalk, state: GameState, text: str, *, turn: int | None = None) -> Answer:
        """The answer for a free-conversation request of a step from `state`."""
        turn = state.turn + 1 if turn is None else turn
        forms = TextForms.of(text)
        act = self.recogniser.recognise(text).act
        speaker = free_talk.speaker
        found = self._knowledge(free_talk, state, forms, turn)
        if found is None and act != NO_ACT:
            # 「葵ちゃんかわいいね」 said to the room: the one it is about reacts.
            about = self._named_present(forms.nfkc, state.place) if free_talk.speaker == \
                self.rules.responder(state.place) and act in _ABOUT_SOMEONE else None
            found = self._reaction(about or speaker, act, state, turn)
        if found is None:
            found = self._fallback(speaker, state, turn)
        who, said, expression, source, ref, variation = found
        return Answer(who, said, expression, source, ref, act, variation)

    def _named_present(self, text: str, place: str) -> str | None:
        """The one character present whom the text names, if exactly one."""
        named = set()
        for person in self.rules.people(place):
            names = [nfkc(n) for n in self.names.characters.get(person, ())]
            if find_names(text, names):
                named.add(person)
        return named.pop() if len(named) == 1 else None

    # ---- knowledge

    def _knowledge(self, free_talk: FreeTalk, state: GameState, forms: TextForms, turn: int):
        intent = free_talk.intent
        people = [free_talk.speaker] + [p for p in self.rules.people(state.place) if p != free_talk.speaker]
        for person in people:
            entries = self._fitting_entries(person, intent, state, forms)
            for entry in entries:
                key = knowledge_key(person, entry.index)
                said = self._say(key, entry.entry.mode, entry.entry.lines, state, turn)
                if said is not None:
                    index, variation = said
                    line = entry.entry.lines[index]
                    return (person, line.text, line.expression or NEUTRAL, AnswerSource.KNOWLEDGE, f"{key}#{index + 1}",
                            variation)
        return None

    def _fitting_entries(self, person: str, intent: str | None, state: GameState,
                         forms: TextForms) -> list[CompiledKnowledge]:
        """Entries of `person` that answer this input, best first: for an
        intent, its entries whose condition holds (those naming words in the
        text first, then the least used); for なし, entries whose words the
        text names and whose condition holds for their own intent."""
        entries = self._with_lines.get(person, ())
        if not entries:
            return []
        shown = state.shown
        named = [k for k in entries if k.entry.words and self._names(forms, k)]
        if intent is None:
            return [k for k in named if k.condition.holds_for_intent(shown) or not k.condition.inputs]
        wanted = PlayerInput.intent(intent)
        held = [k for k in entries if intent in k.intents and k.condition.holds(wanted, shown, None, False, False)]
        uses = {k.index: len(state.variation.get(knowledge_key(person, k.index), ())) for k in held}
        return sorted(held, key=lambda k: (k not in named, uses[k.index], k.index))

    def _names(self, forms: TextForms, entry: CompiledKnowledge) -> bool:
        """Whether the text names one of the entry's words in the sense the interpreter reads it: a word
        its intent ties to a place, said of a person (お名前, 葵の名前), does not count."""
        owned = frozenset().union(*(self._owned.get(str(PlayerInput.intent(i)), ()) for i in entry.intents))
        return any(not (hit.word in owned and said_of_person(forms.nfkc, hit.start, self.names))
                   for hit in self.matcher.hits(forms, entry.entry.words))

    # ---- reactions and fallbacks

    def _reaction(self, speaker: str, act: str, state: GameState, turn: int):
        reaction = self.scenario.reactions.get(speaker, {}).get(act)
        if reaction is None:
            return None
        key = reaction_key(speaker, act)
        said = self._say(key, reaction.mode, reaction.lines, state, turn)
        if said is None:
            return None
        index, variation = said
        line = reaction.lines[index]
        return speaker, line.text, line.expression or NEUTRAL, AnswerSource.REACTION, f"{key}#{index + 1}", variation

    def _fallback(self, speaker: str, state: GameState, turn: int):
        fallbacks = self.scenario.characters[speaker].fallbacks
        key = fallback_key(speaker)
        said = self._say(key, "cycle", fallbacks, state, turn)
        if said is None and fallbacks:
            # one fallback, just said: it answers again rather than nobody
            said = (0, {key: remember(state.variation.get(key, ()), 0, 1)})
        if said is None:
            return speaker, SILENCE, NEUTRAL, AnswerSource.FALLBACK, None, {}
        index, variation = said
        chosen = fallbacks[index]
        return speaker, chosen.text, chosen.expression or NEUTRAL, AnswerSource.FALLBACK, chosen.id, variation

    @staticmethod
    def _say(key: str, mode, lines: Sequence, state: GameState, turn: int):
        history = state.variation.get(key, ())
        index = pick(len(lines), mode, history, f"{key}/{turn}")
        if index is None or not lines[index].text.strip():
            return None
        return index, {key: remember(history, index, len(lines))}
