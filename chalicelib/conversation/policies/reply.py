"""The player's answer to a character's open question: the asker's reply line (questions.py)."""
from __future__ import annotations

from dataclasses import replace

from ...answers import Answer
from ...dialogue_acts import ACT
from ...interpret.acts import NO_ACT
from ..answering import Deliberation
from ..mention import reports_other
from ..questions import polarity

# Dialogue acts a reply to a question can have (the rest do something else: greet, thank, order, insult).
ANSWERING_ACTS = ACT.group("answering") | {NO_ACT}


def answer_to_question(d: Deliberation) -> Answer | None:
    """Only when the line is about nothing else and does nothing else (a greeting, thanks or the bill is no
    answer); 「ママ、葵さんはいやだって」 passes on 葵's no — news for ママ, not the player's answer."""
    question, act = d.question, d.act
    if question is None or d.free.intent is not None or question.speaker not in d.present or \
            not (act in ANSWERING_ACTS or act in ACT.group("courtesy")) or \
            reports_other(d.focus.text, d.conv.focus_reader, d.focus.called) is not None:
        return None
    pol = polarity(d.text, question.kind, change=question.change)
    if act not in ANSWERING_ACTS and pol not in ("yes", "no"):
        pol = None       # 「ごめん、無理かな」 answers; 「ごめんね」 alone apologises
    if pol == "other" and question.turn < d.state.turn and question.kind != "wh":
        pol = None       # only the very next line answers a yes/no question with neither yes nor no
    if pol is None:
        return None
    d.answering = not d.context.get("fact")
    found = d.conv._reply(question, pol, d.state, d.turn, d.variety)
    if found is not None and not d.context.get("fact"):
        d.context["reply"] = {"to": question.ref, "as": pol}
        return d.make(found)
    if d.answering and question.speaker != d.free.speaker:
        # an answer the asker has no reply line for is still theirs to take (「うーん、どうかな」 to 葵's
        # question: 葵 reacts, not the one who answers by default)
        d.free = replace(d.free, speaker=question.speaker)
    return None
