"""The authored answer to a line nothing scripted answers: policies propose, one arbiter chooses.

When the rules ask for free conversation and no model speaks, each **policy** (``policies/``: one module per
kind of answer — the tab, a pick, a reply to a question, a reaction, what a character knows, a recall, a form's
answer, an honest "I don't know", an echo, chatter, the fallback) looks at the same `Deliberation` — the line as
read once (its act, focus, what it asks), the game and the conversation so far — and proposes an `Answer` with
what it rests on, or nothing.  Policies know nothing of each other.

The **arbiter** asks them in their priority order (``policies.ORDER``: the tab first, then repairs and replies,
answers, social lines, filler) and takes the first proposal that stands on its own.  A proposal that rests on
weak evidence — a word the line shares with an entry that is not what the line is about — does not stand on
its own: the arbiter goes on, and a later honest answer (the character saying, in their voice, that they do not
know or follow) wins over it; only when nothing else is proposed is the weak guess said.  Every policy asked is
in the turn's debug record (`context.deliberation`): what it proposed and why it won or lost.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any

from ..answers import Answer
from ..dialogue_acts import ACT
from ..interpret.acts import NO_ACT, ActFound
from ..interpret.belonging import Own, read_own
from ..interpret.ja import analyse
from ..interpret.text import nfkc
from ..scenario import FreeTalk, GameState, Step
from ..stage.records import AskedQuestion, ConversationMemory
from .facts import is_fact, is_question, nouns_of
from .focus import Focus
from .own import about_self
from .variety import Variety


class Strength(StrEnum):
    """What a proposal rests on."""
    FIRM = "firm"        # what the line is about, asked or said (its head, whom it asks about, the topic)
    WEAK = "weak"        # a word shared with the line that is not what it is about
    HONEST = "honest"    # no answer to give, said in the character's voice (an honest "I don't know")


@dataclass(frozen=True)
class Proposal:
    answer: Answer
    strength: Strength = Strength.FIRM
    why: str = ""


@dataclass
class Deliberation:
    """Everything the policies read for one answer, worked out once (lazily, so a turn the first policy
    answers pays for nothing else)."""
    # the conversation whose parts the policies use (typed loosely: turn.py imports this module, not back)
    conv: Any
    step: Step
    state: GameState
    text: str                   # the line as read
    answer_text: str            # what the answer is read against (a clarified line: both parts)
    mem: ConversationMemory
    question: AskedQuestion | None
    variety: Variety
    turn: int
    context: dict[str, Any]
    addressed: bool
    free: FreeTalk
    found_act: ActFound
    focus: Focus
    present: set[str] = field(default_factory=set)
    # set by a policy for those after it: an answer to the question was read (its asker answers)
    answering: bool = False
    # the thing the line is about, for an echo (None once it proved to be the speaker's own word)
    echo_word: str | None = None
    echo_word_read: bool = False

    @property
    def act(self) -> str:
        return self.found_act.act

    @cached_property
    def asking(self) -> bool:
        return is_question(self.text) or self.act in (ACT.question, ACT.about_self)

    @cached_property
    def owned(self) -> Own:
        """Where the line tells of the player's own life (belonging.py), in the focus's text."""
        return read_own(self.focus.text)

    @cached_property
    def self_told(self) -> bool:
        """The player tells of themselves, as the subject (「僕も休みは喫茶店めぐりが趣味なんです」): a knowledge line
        that shares a word with it is about someone else's life."""
        return not self.asking and self.free.intent is None and (
            self.act == ACT.own_life and about_self(self.text) or self.act == NO_ACT and self.owned.told)

    @cached_property
    def own(self) -> bool:
        """The player tells of their own life, themselves or their kin (「息子が反抗期で困ってる」): their story."""
        return self.self_told or (not self.asking and self.free.intent is None and self.act == NO_ACT and
                                  self.owned.kin)

    @cached_property
    def said_by_characters(self) -> str:
        """Every line the characters said in this game, as one normalised text (what they told is no news to
        them)."""
        texts = [self.conv.book.text(ref) for ref in self.mem.said]
        texts += [spoken.text for spoken in self.mem.spoken]
        return nfkc("\n".join(t for t in texts if t))

    @cached_property
    def of_own_words(self) -> frozenset[str]:
        """The things a question names that the one answering told of in this game, in a line of theirs that
        says something (a scripted or knowledge line, not a reaction): an honest "I don't know" of them would
        contradict what they said (「私がチラシ配るんですか？」 after 葵 asked the player to hand out her flyers).
        A frame is no such thing (店, 人, 一人, 今日: not what was told)."""
        if not self.asking:
            return frozenset()
        start, end = self.focus.sentence or (0, len(self.focus.text))
        things = {t.normalised or t.lemma for t in analyse(nfkc(self.focus.text[start:end])).tokens
                  if t.is_common_noun and not t.is_adverbial and not t.is_numeral}
        asked = {noun for noun in nouns_of(self.focus.text[start:end]) if len(noun) > 1 and noun in things}
        if not asked:
            return frozenset()
        told: set[str] = set()
        for ref in self.mem.said:
            if is_fact(ref):
                told |= {n for s in self.conv.facts.of(ref) if s.speaker == self.free.speaker for n in s.nouns}
        return frozenset(asked & told - self.conv.facts.names)

    def word(self) -> str | None:
        if not self.echo_word_read:
            self.echo_word = self.conv._echo_word(self.focus, self.state)
            self.echo_word_read = True
        return self.echo_word

    def make(self, found, **extra) -> Answer:
        return self.conv.answerer.make(found, self.act, **extra)


Policy = Callable[[Deliberation], "Proposal | Answer | None"]


@dataclass
class Considered:
    policy: str
    outcome: str          # answered, weak, honest, nothing
    ref: str | None = None
    why: str = ""         # the evidence it rests on, as the policy said it

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "outcome": self.outcome, **({"ref": self.ref} if self.ref else {}),
                **({"why": self.why} if self.why else {})}


def arbitrate(d: Deliberation, policies: tuple[tuple[str, Policy], ...]) -> tuple[Answer, list[Considered]]:
    """The first proposal in order that is not a weak guess; the weak guess only when nothing else is proposed
    (the fallback always proposes, so a weak guess beats nothing but the fallback)."""
    considered: list[Considered] = []
    weak: Proposal | None = None
    for name, policy in policies:
        got = policy(d)
        if got is None:
            considered.append(Considered(name, "nothing"))
            continue
        proposal = got if isinstance(got, Proposal) else Proposal(got)
        if proposal.strength == Strength.WEAK:
            considered.append(Considered(name, "weak", proposal.answer.ref, proposal.why))
            weak = weak or proposal
            continue
        if weak is not None and name == "fallback":
            break
        considered.append(Considered(name, "answered", proposal.answer.ref, proposal.why))
        if weak is not None:
            considered.append(Considered("arbiter", f"a weak guess ({weak.why or weak.answer.ref}) lost to {name}"))
        return proposal.answer, considered
    assert weak is not None, "the fallback always answers"
    considered.append(Considered("arbiter", f"only a weak guess: {weak.why or weak.answer.ref}"))
    return weak.answer, considered
