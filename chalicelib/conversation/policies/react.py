"""Reactions to what the line does (answers.py: the character's `reactions` by dialogue act)."""
from __future__ import annotations

from ...answers import Answer
from ...dialogue_acts import ACT
from ...interpret.acts import ActFound
from ...interpret.lexicon import compiled
from ..answering import Deliberation, Proposal, Strength
from ..facts import is_question, sentences


def _reaction(d: Deliberation, word: str | None = None, act: ActFound | None = None) -> Answer | None:
    found = d.conv.answerer.reaction(d.free, d.state, d.text, act or d.found_act, d.turn, d.variety, word=word)
    return d.make(found) if found is not None else None


def sad_news(d: Deliberation) -> Answer | None:
    """「女房は三年前に死んだんだ」: sympathy first — not a topic's line, not an echo, never a cheerful reply."""
    return _reaction(d) if d.act == ACT.sad_news else None


def praise_of_someone(d: Deliberation) -> Answer | None:
    """「妙子さんか。いい名前じゃん」: praise of someone here is for them to take, before any topic's line."""
    return _reaction(d) if d.act == ACT.praise and d.focus.about and not is_question(d.text) else None


def to_the_act(d: Deliberation) -> Answer | None:
    """What the line does (greets, thanks, disagrees…): not the stock "I don't know" while there is a thing to
    take up; the player's own life is taken up after what a character knows of it."""
    echoing = d.word() is not None and not d.asking
    if d.act == ACT.question and d.of_own_words:
        d.context["own_words"] = sorted(d.of_own_words)
        return None       # (their 質問 reaction would say they do not know what they told themselves)
    if (d.act != ACT.question or not echoing) and d.act != ACT.own_life:
        return _reaction(d)
    return None


def own_life(d: Deliberation) -> Answer | None:
    """The player's own life, family or past (「女房とよく来たもんだ」): an engaged reaction, remembered when told
    again (「僕、カメラマンなんです」 a second time)."""
    if not (d.act == ACT.own_life or d.own) or d.asking or _says_what_they_will_do(d.focus.text):
        return None
    told = d.conv._told(d.free.speaker, d.text, d.focus, d.state, d.mem, d.turn, d.variety) if d.own else None
    if told is not None:
        return told
    # (a line of the player's own family or life that no act names — 「息子が反抗期で困ってる」 — is taken up as
    # their story: the 身の上 reaction)
    act = d.found_act if d.act == ACT.own_life else ActFound(ACT.own_life, "own")
    return _reaction(d, word=d.conv._echo_word(d.focus, d.state) if d.own else None, act=act)


def _says_what_they_will_do(text: str) -> bool:
    """Whether the line ends saying what the player will do or wants (「でも、書いてみようかな」「毎週買いに来ますね」):
    a plan or a promise, which a reaction to a life story (「いろいろあったのね」) does not answer."""
    said = sentences(text)
    return bool(compiled("plans", "own_intent").search((said[-1] if said else text).strip()))


def unanswerable(d: Deliberation) -> Proposal | None:
    """A question nothing here answers: the character's honest 質問 reaction (「さあ、どうだったかしら」)."""
    if d.act != ACT.question:
        return None
    if d.of_own_words:
        # (they told of it themselves: not "I don't know" but, in their voice, that they do not follow — which a
        # weak guess still loses to)
        d.context["own_words"] = sorted(d.of_own_words)
        lost = d.make(d.conv.answerer.fallback(d.free.speaker, d.state, d.turn, d.variety))
        return Proposal(lost, Strength.HONEST, f"not following ({', '.join(sorted(d.of_own_words))} told by them)")
    answer = _reaction(d)
    return Proposal(answer, Strength.HONEST, "an honest don't-know") if answer is not None else None
