"""An honest answer in the character's voice to a question about someone here that nothing authored answers
(「うーん……まだ決めてないんだ」): the character's `unsure` lines."""
from __future__ import annotations

from ...dialogue_acts import ACT
from ...interpret.acts import NO_ACT
from ...interpret.asking import asks_if_known
from ..answering import Deliberation, Proposal, Strength
from ..mention import asked_about
from ..recalling import _asking_sentences


def _unsure_fits(d: Deliberation) -> bool:
    """Their `unsure` lines say they have not decided yet: not an answer to whether they know or remember
    something (「おじいさまのこと覚えていますか」: interpret/asking.py), which their 質問 reaction answers, nor of a thing they
    told of themselves (「さっき店を変えるって言ってたけど、どう変えたいのよ」: answering.py's `of_own_words`)."""
    focus = d.focus
    start, end = focus.sentence or (0, len(focus.text))
    return not asks_if_known(focus.text[start:end]) and not d.of_own_words


def _honest(answer) -> Proposal | None:
    return Proposal(answer, Strength.HONEST, "an honest answer of not knowing yet") if answer is not None else None


def about_self(d: Deliberation) -> Proposal | None:
    """Their plans, their past, what they think (also a question put to them that names someone else only in
    a case role: 「ママに伝えたことある？」 asks what they did — mention.py)."""
    speaker, focus = d.free.speaker, d.focus
    if not (d.asking and d.act in (ACT.question, NO_ACT) and (speaker in focus.about or focus.you or
                                                    d.conv._mentions_only(focus, speaker, d.present))) \
            or not _unsure_fits(d):
        return None
    return _honest(d.conv._unsure(speaker, d.word(), d.state, d.turn, d.variety))


def about_other(d: Deliberation) -> Proposal | None:
    """A question about someone else here, asked of this character (「葵ちゃん、ママって独身なのか？」): the one
    asked about answers honestly (named in the sentence that asks: 「じゃあママで。そちらの方は？」 to 葵 asks
    nothing about ママ)."""
    speaker, focus = d.free.speaker, d.focus
    if not (d.asking and d.act in (ACT.question, ACT.about_self, NO_ACT) and speaker not in focus.about and not focus.you) \
            or not _unsure_fits(d):
        return None
    if focus.view and focus.called == speaker:
        return None           # 「葵ちゃんはどう思う？ママさん説得するには…」: their own view is asked, not ママ's
    asked = _asking_sentences(focus.text)
    people_here = tuple(d.conv.rules.people(d.state.place))
    read = d.conv.focus_reader.read(asked, people_here) if asked != focus.text else focus
    others = [p for p in asked_about(read.text, d.conv.focus_reader, read.about, read.head) if p != speaker and p in people_here]
    proposal = _honest(d.conv._unsure(others[0], d.word(), d.state, d.turn, d.variety)) if others else None
    if proposal is not None:
        d.context["about_other"] = others[0]
    return proposal
