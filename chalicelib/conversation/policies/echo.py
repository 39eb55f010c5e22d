"""What the player talked about, taken up in the character's voice (「ゴルフ？　私は詳しくないけど」); never to a
question (a question is never taken up as news)."""
from __future__ import annotations

from ...answers import Answer
from ...interpret.text import nfkc
from ..answering import Deliberation


def echo(d: Deliberation) -> Answer | None:
    word = d.word()
    if word is None or d.asking:
        return None
    if nfkc(word) in d.said_by_characters:
        # (「店じまいですか」 after the florist said her shop closes: her own word, no news to take up)
        d.context["echo_not_news"] = word
        return None
    echoed = d.conv._echo(d.free.speaker, word, d.state, d.turn, d.variety)
    if echoed is not None:
        d.context["echo"] = word
    return echoed
