"""Follow-ups on what was just said: a pointer (「それって…」), a short follow-up, the speaker's own word."""
from __future__ import annotations

from ...answers import Answer
from ...interpret.lexicon import compiled
from ...interpret.text import nfkc
from ...scenario import PlayerInput
from ..answering import Deliberation

# A pointer at the head of the line (「それって…」, 「その…」): about what was just said.
_POINTER = compiled("conversation", "follow_pointer")


def pointer(d: Deliberation) -> Answer | None:
    """「それって怖い映画ですか？」 right after 葵 named a film: about that, not a topic guessed from a word."""
    free = d.free
    if free.intent is None or not _POINTER.match(nfkc(d.text).strip()) or \
            d.conv._names_topic(d.text, PlayerInput.intent(free.intent)):
        return None
    followed = d.conv._follow_up_entry(d.text, d.state, d.mem, d.turn, d.variety, free.speaker, pointer=True)
    if followed is not None:
        d.context["followed"] = followed.ref
    return followed


def follow_up(d: Deliberation) -> Answer | None:
    """A short follow-up on what was just answered (「えー、教えてくれないんですか」「本当に？」)."""
    followed = d.conv._follow_up_entry(d.text, d.state, d.mem, d.turn, d.variety, d.free.speaker)
    if followed is not None:
        d.context["followed"] = followed.ref
    return followed


def own_word(d: Deliberation) -> Answer | None:
    """「ポスターか。見せてくれよ」 right after 葵 said she makes posters: her own word is no news to her — the
    entry she spoke from goes on (or is recalled), else nothing is echoed."""
    word, last = d.word(), d.mem.last
    if word is None or last is None or last.speaker != d.free.speaker or nfkc(word) not in nfkc(last.text):
        return None
    followed = None if d.asking else d.conv._follow_up_entry(d.text, d.state, d.mem, d.turn, d.variety,
                                                             d.free.speaker, pointer=True)
    if followed is not None:
        d.context["followed"] = followed.ref
        return followed
    d.echo_word = None
    return None
