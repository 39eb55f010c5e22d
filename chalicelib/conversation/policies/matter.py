"""The player's own matter asked about (「就活きつくて。ママ、どう思う？」), and how the one spoken to is
(「ママ、元気？」): answered by the form's lines before anything of the characters' own world (forms.py)."""
from __future__ import annotations

from ...answers import Answer
from ...interpret.lexicon import compiled
from ..answering import Deliberation
from ..forms import read_form


def own_matter(d: Deliberation) -> Answer | None:
    advice = read_form(d.text)
    if advice is None and d.mem.player_last and compiled("plans", "back_to_matter").search(d.text):
        # 「ママだったら、こういう時どうします？」: the matter is the one the player told in their last line
        advice = read_form(f"{d.mem.player_last}。{d.text}")
    if advice is None or not (advice.form == "advice" or advice.form == "wellbeing" and
                              d.conv._calls_only(advice.cue, d.free.speaker)):
        return None
    # (「先代は元気？」 asks of someone else: what they know answers it, not this)
    return d.conv._form(d.text, d.focus, d.free.speaker, advice.cue if advice.form == "advice" else None, d.act,
                        d.state, d.turn, d.variety, d.context, advice)
