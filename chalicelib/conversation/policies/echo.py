"""What the player talked about, taken up in the character's voice (「ゴルフ？　私は詳しくないけど」); never to a
question (a question is never taken up as news), and only a thing of the sentence the line ends on — what it is
about: 「お通しはいらねえや。腹はいっぱいなんだ」 takes up no お通し — that is not an item of the menu (the shop's
own, no news: 「じゃあひまわり5本にします」)."""
from __future__ import annotations

from ...answers import Answer
from ...interpret.text import nfkc
from ..answering import Deliberation
from ..facts import sentences


def echo(d: Deliberation) -> Answer | None:
    if d.asking or d.word() is None:
        return None
    word = _taken_up(d)
    if word is None:
        d.context["echo_not_about"] = d.word()
        return None
    if nfkc(word) in d.said_by_characters:
        # (「店じまいですか」 after the florist said her shop closes: her own word, no news to take up)
        d.context["echo_not_news"] = word
        return None
    echoed = d.conv._echo(d.free.speaker, word, d.state, d.turn, d.variety)
    if echoed is not None:
        d.context["echo"] = word
    return echoed


def _taken_up(d: Deliberation) -> str | None:
    """The likeliest thing of the line's last sentence that is not an item of the menu."""
    said = sentences(d.focus.text)
    last = said[-1] if said else d.focus.text
    items = {nfkc(item) for item in d.conv.names.items}
    return next((word for word in d.conv._echo_words(d.focus) if word in last and nfkc(word) not in items), None)
