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

The conversation layer (chalicelib/conversation) puts its own answers around
these (a reply to a character's question, a line recalled, an order) and
calls the layers one by one; ``answer`` is the three in this order.

Every line carries its expression (neutral when the author gave none).  Which
line of a set is said follows the set's variation mode, with its history in
the game state (`scenario.variation`), so the choice is deterministic and
stored with the turn.  A knowledge line is said once per game unless its
entry is `repeatable`; with a `Variety` policy no line is said again within a
window of turns, nor more than twice a game, unless nothing else fits.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from . import lazyre
from .dialogue_acts import ACT
from .interpret.acts import NO_ACT, ActFound, ActRecogniser
from .interpret.asking import is_question
from .interpret.cues import SceneNames, unstretched
from .interpret.ja import analyse
from .interpret.owners import place_owned_words, said_of_person
from .interpret.senses import compound_head, in_another_word
from .interpret.text import TextForms, WordHit, WordMatcher, find_names, fold, make_matcher, nfkc
from .scenario import FreeTalk, GameRules, GameState, PlayerInput
from .scenario.loader import NEUTRAL, CompiledKnowledge
from .scenario.variation import fallback_key, knowledge_key, pick, reaction_key, remember
from .turn_record import AnswerSource

# A line's sentences, each with its end mark (a question's ？ kept).
_SENTENCES = lazyre.compile(r"[^。！？!?]*[。！？!?]+|[^。！？!?]+$")

# Acts aimed at a person: when the text names someone present, that person reacts.
_ABOUT_SOMEONE = ACT.group("about_someone")
SILENCE = "……"


class Freshness(Protocol):
    """What a wider policy lets a set say now (conversation.variety.Variety implements it)."""

    def fresh(self, ref: str) -> bool: ...

    def least_said(self, refs: Sequence[str]) -> str | None: ...


class _Anything:
    """Every line is fresh: no wider policy."""

    def fresh(self, ref: str) -> bool:
        return True

    def least_said(self, refs: Sequence[str]) -> str | None:
        return refs[0] if refs else None


ANYTHING: Freshness = _Anything()


@dataclass(frozen=True)
class Answer:
    speaker: str
    text: str
    expression: str
    source: AnswerSource                # knowledge, reaction, fallback or a conversation layer's kind
    ref: str | None                     # which set and line: "reaction/赤尾妙子/挨拶#2"
    act: str                            # the dialogue act recognised (なし when none)
    variation: dict[str, tuple[int, ...]] = field(default_factory=dict)   # the sets' new histories
    refs: tuple[str, ...] = ()          # every line reference said (a recall says its sentence's too)
    flags: tuple[str, ...] = ()         # flags the answer sets (an order)
    faces: dict[str, str] = field(default_factory=dict)   # faces its lines' effects set (a reply's 表情:)
    detail: dict = field(default_factory=dict)   # what the conversation layer decided (order item, options…)
    effects: tuple[str, ...] = ()       # what saying it did to the story, as the format writes it (once applied)

    def to_dict(self) -> dict:
        return {"speaker": self.speaker, "text": self.text, "expression": self.expression, "source": self.source,
                "ref": self.ref, "act": self.act, **({"detail": self.detail} if self.detail else {}),
                **({"effects": list(self.effects)} if self.effects else {})}


# (speaker, text, expression, source, ref, variation)
Found = tuple[str, str, str, str, str | None, dict]


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

    def answer(self, free_talk: FreeTalk, state: GameState, text: str, *, turn: int | None = None,
               variety: Freshness = ANYTHING) -> Answer:
        """The answer for a free-conversation request of a step from `state`."""
        turn = state.turn + 1 if turn is None else turn
        found_act = self.recogniser.recognise(text)
        found = self.knowledge(free_talk, state, text, turn, variety)
        if found is None:
            found = self.reaction(free_talk, state, text, found_act, turn, variety)
        if found is None:
            found = self.fallback(free_talk.speaker, state, turn, variety)
        return self.make(found, found_act.act)

    @staticmethod
    def make(found: Found, act: str, **extra) -> Answer:
        who, said, expression, source, ref, variation = found
        return Answer(who, said, expression, source, ref, act, variation,  # type: ignore[arg-type]
                      refs=(ref,) if ref else (), **extra)

    def act(self, text: str) -> ActFound:
        return self.recogniser.recognise(text)

    def named_present(self, text: str, place: str) -> str | None:
        """The one character present whom the text names, if exactly one."""
        named = set()
        for person in self.rules.people(place):
            names = [nfkc(n) for n in self.names.characters.get(person, ())]
            if find_names(text, names):
                named.add(person)
        return named.pop() if len(named) == 1 else None

    # ---- knowledge

    def knowledge(self, free_talk: FreeTalk, state: GameState, text: str, turn: int,
                  variety: Freshness = ANYTHING, *, only_speaker: bool = False) -> Found | None:
        """`only_speaker`: the player addressed the speaker by name; nobody else answers for them."""
        forms = TextForms.of(unstretched(nfkc(text)))        # かんぱーい names 乾杯's かんぱい
        intent = free_talk.intent
        people = [free_talk.speaker] + ([] if only_speaker else
                                        [p for p in self.rules.people(state.place) if p != free_talk.speaker])
        for person in people:
            for entry in self.fitting_entries(person, intent, state, forms):
                found = self.knowledge_line(person, entry, state, turn, variety)
                if found is not None:
                    return found
        return None

    def knowledge_line(self, person: str, entry: CompiledKnowledge, state: GameState, turn: int,
                       variety: Freshness = ANYTHING, only: int | None = None, again: bool = False) -> Found | None:
        """A line of one knowledge entry that may be said now (`only`: that line or none; `again`: however
        recently it was said — an option taken again by a change of mind)."""
        key = knowledge_key(person, entry.index)
        used = set(state.variation.get(key, ()))

        def allowed(i: int) -> bool:
            if only is not None and i != only:
                return False
            return (said_again(entry, i) or i not in used) and (again or variety.fresh(f"{key}#{i + 1}"))
        said = self._say(key, entry.entry.mode, entry.entry.lines, state, turn, allowed)
        if said is None:
            return None
        index, variation = said
        line = entry.entry.lines[index]
        return person, line.text, line.expression or NEUTRAL, AnswerSource.KNOWLEDGE, f"{key}#{index + 1}", variation

    def fitting_entries(self, person: str, intent: str | None, state: GameState,
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
            # its condition, read as if the input were its own intent (an entry of no intent: its other terms)
            return [k for k in named if k.condition.holds_for_intent(shown)]
        wanted = PlayerInput.intent(intent)
        held = [k for k in entries if intent in k.intents and k.condition.holds(wanted, shown, None, False, False)]
        uses = {k.index: len(state.variation.get(knowledge_key(person, k.index), ())) for k in held}
        return sorted(held, key=lambda k: (k not in named, uses[k.index], k.index))

    def entries_of(self, person: str) -> tuple[CompiledKnowledge, ...]:
        return self._with_lines.get(person, ())

    def owned_words(self, intent: str) -> frozenset[str]:
        """The intent's words its own texts tie to a place (店の名前)."""
        return self._owned.get(str(PlayerInput.intent(intent)), frozenset())

    def _names(self, forms: TextForms, entry: CompiledKnowledge) -> bool:
        """Whether the text names one of the entry's words in the sense the interpreter reads it: a word
        its intent ties to a place, said of a person (お名前, 葵の名前), does not count."""
        owned = frozenset().union(*(self._owned.get(str(PlayerInput.intent(i)), ()) for i in entry.intents))
        return any(not (hit.word in owned and said_of_person(forms.nfkc, hit.start, self.names))
                   for hit in self.word_hits(forms, entry))

    def word_hits(self, forms: TextForms, entry: CompiledKnowledge, recent: TextForms | None = None) -> list[WordHit]:
        """The entry's words found in the text in the entry's own sense: none while the entry has a `subject`
        that neither the text nor `recent` (the exchange just before it) names (元気 is about 先代 only when
        先代 was talked about); and not a word that only modifies the noun glued after it (看板 of 看板猫)."""
        if not entry.entry.words or not self.subject_named(entry, forms, recent):
            return []
        hits = self.matcher.hits(forms, entry.entry.words)
        own = self._own_text(entry)
        # (nor a word inside another word: the 手 of 手伝おうか is no hand — senses.py)
        return [h for h in hits if (any(o.start <= h.start and o.end > h.end for o in hits) or
                                    self._own_compound(entry, compound_head(forms.nfkc, h.start, h.end)))
                and not (forms.nfkc[h.start:h.end] == nfkc(h.word) and _inside_a_token(forms, h.start, h.end)
                         and in_another_word(forms, h.start, h.end, own))]

    @staticmethod
    def _own_text(entry: CompiledKnowledge) -> str:
        """What the entry says, folded: a compound it uses itself keeps the sense of the word inside it."""
        return fold(" ".join([entry.entry.info, *entry.entry.words, *(line.text for line in entry.entry.lines)]))

    @staticmethod
    def _own_compound(entry: CompiledKnowledge, head: str | None) -> bool:
        """Whether a compound's head noun is one the entry itself speaks of (ホラー映画 for an entry on films:
        still about films; 看板猫 for the sign's entry: a cat, another thing); True with no compound."""
        if head is None:
            return True
        own = " ".join([entry.entry.info, *entry.entry.words, *(line.text for line in entry.entry.lines)])
        return head in own

    def subject_named(self, entry: CompiledKnowledge, forms: TextForms, recent: TextForms | None = None) -> bool:
        """Whether the text, or `recent`, names the entry's subject (an entry without one: always)."""
        subject = entry.entry.subject
        return not subject or bool(self.matcher.hits(forms, subject)) or \
            (recent is not None and bool(self.matcher.hits(recent, subject)))

    # ---- reactions and fallbacks

    def reacting(self, free_talk: FreeTalk, state: GameState, text: str, act: str) -> str:
        """Who reacts: 「葵ちゃんかわいいね」 said to the room is reacted to by the one it is about."""
        if free_talk.speaker == self.rules.responder(state.place) and act in _ABOUT_SOMEONE:
            return self.named_present(nfkc(text), state.place) or free_talk.speaker
        return free_talk.speaker

    def reaction(self, free_talk: FreeTalk, state: GameState, text: str, found_act: ActFound, turn: int,
                 variety: Freshness = ANYTHING, word: str | None = None) -> Found | None:
        """`word`: the thing the line is about, for a reaction line that holds {word} (lines that hold it are
        said only with one)."""
        if found_act.act == NO_ACT:
            return None
        speaker = self.reacting(free_talk, state, text, found_act.act)
        acts = (ACT.paying, found_act.act) if found_act.paying else (found_act.act,)
        for act in acts:
            found = self.reaction_of(speaker, act, state, turn, variety, word)
            if found is not None:
                return found
            if act in self.scenario.reactions.get(speaker, {}):
                return None         # the set exists and has nothing fresh: the next layer answers
        return None

    def reaction_of(self, speaker: str, act: str, state: GameState, turn: int,
                    variety: Freshness = ANYTHING, word: str | None = None) -> Found | None:
        reaction = self.scenario.reactions.get(speaker, {}).get(act)
        if reaction is None:
            return None
        key = reaction_key(speaker, act)
        said = self._say(key, reaction.mode, reaction.lines, state, turn,
                         lambda i: variety.fresh(f"{key}#{i + 1}") and
                         (word is not None or "{word}" not in reaction.lines[i].text))
        if said is None:
            return None
        index, variation = said
        line = reaction.lines[index]
        text = line.text.replace("{word}", word) if word is not None else line.text
        return speaker, text, line.expression or NEUTRAL, AnswerSource.REACTION, f"{key}#{index + 1}", variation

    def fallback(self, speaker: str, state: GameState, turn: int, variety: Freshness = ANYTHING) -> Found:
        fallbacks = self.scenario.characters[speaker].fallbacks
        key = fallback_key(speaker)
        said = self._say(key, "cycle", fallbacks, state, turn, lambda i: variety.fresh(f"fallback/{fallbacks[i].id}"))
        history = state.variation.get(key, ())
        if said is None and fallbacks:
            # nothing fresh: the one said least, longest ago (not the one just said when there is a choice)
            last = history[-1] if history else None
            options = [f"fallback/{f.id}" for i, f in enumerate(fallbacks) if i != last or len(fallbacks) == 1]
            chosen_ref = variety.least_said(options) or options[0]
            index = next(i for i, f in enumerate(fallbacks) if f"fallback/{f.id}" == chosen_ref)
            said = (index, {key: remember(history, index, len(fallbacks))})
        if said is None:
            return speaker, SILENCE, NEUTRAL, AnswerSource.FALLBACK, None, {}
        index, variation = said
        chosen = fallbacks[index]
        return speaker, chosen.text, chosen.expression or NEUTRAL, AnswerSource.FALLBACK, f"fallback/{chosen.id}", variation

    def line_set(self, key: str, mode, lines: Sequence, state: GameState, turn: int, ref_prefix: str,
                 variety: Freshness = ANYTHING, *, once: bool = False,
                 usable: Callable[[int], bool] | None = None) -> tuple[int, dict] | None:
        """A line of any varying set (menu lines, chatter, recall and clarify lead-ins), fresh by `variety`
        (`once`: each line once per game, like a knowledge entry; `usable`: which lines may be said at all)."""
        used = set(state.variation.get(key, ())) if once else set()
        return self._say(key, mode, lines, state, turn,
                         lambda i: i not in used and variety.fresh(f"{ref_prefix}#{i + 1}") and
                         (usable is None or usable(i)))

    @staticmethod
    def _say(key: str, mode, lines: Sequence, state: GameState, turn: int,
             allowed: Callable[[int], bool] | None = None):
        history = state.variation.get(key, ())
        index = pick(len(lines), mode, history, f"{key}/{turn}", allowed)
        if index is None or not lines[index].text.strip():
            return None
        return index, {key: remember(history, index, len(lines))}


def _inside_a_token(forms: TextForms, start: int, end: int) -> bool:
    """Whether a word found at start..end lies inside one longer word of the analyser's (手 in 手伝おうか)."""
    return any(t.start <= start and end <= t.end and (t.start, t.end) != (start, end)
               for t in analyse(forms.nfkc).tokens)


def said_again(entry: CompiledKnowledge, index: int) -> bool:
    """Whether the entry's line may be said again once said: a repeatable entry's, unless the line asks the player
    something (「花束ね。どなたに贈るの？」 is asked once; an echo of a word, 「月下美人？」, asks nothing)."""
    return entry.entry.repeatable and not asks_the_player(entry.entry.lines[index].text)


def asks_the_player(text: str) -> bool:
    """Whether a line asks the player something: a question of its own beyond an opening echo of a word."""
    said = [s for s in _SENTENCES.findall(nfkc(text)) if s.strip()]
    return any(is_question(s) and len(s.strip(" 　？?")) > 6 for s in said)
