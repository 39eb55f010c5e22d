"""What every prompt to a model shares, whatever it asks: the player's text neutralised so it stays one
quoted line, and the context budget.

The budget (`fit_prompt`) keeps ``reserve`` tokens for the answer and, when the prompt is too long, renders
it again without its examples.  Tokens are counted by the model's own tokenizer when it has one
(`ChoiceModel.count_tokens`), else by characters.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .. import lazyre

DEFAULT_CONTEXT_LIMIT = 8192
ANSWER_RESERVE = 64          # tokens kept for the answer
# A byte-level BPE token covers at least one byte and a Japanese character is
# three (four for emoji) bytes in UTF-8, so N characters are at most 4N tokens (+ the chat
# template's own tokens): when that fits, no tokenizer call is needed.
MAX_TOKENS_PER_CHAR = 4
TEMPLATE_OVERHEAD = 64
MAX_TEXT_CHARS = 400         # longer player text is cut in the prompt (the game keeps all of it)

_NEWLINES = lazyre.compile(r"[\r\n\u2028\u2029\u0085\v\f\x1c\x1d\x1e]+")
_QUOTES = str.maketrans({"「": "『", "」": "』", "｢": "『", "｣": "』", "＃": "#"})
# Chat-template markers (<|im_end|> …) typed by a player must stay text, never become role tokens.
_CHAT_MARKERS = lazyre.compile(r"<\||\|>")


def neutralise(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """The player's text as it goes into the prompt: one line, its 「」 turned
    into 『』 so it cannot close the quote it sits in, cut to `limit`."""
    single = _NEWLINES.sub(" ", text).translate(_QUOTES).strip()
    single = _CHAT_MARKERS.sub(lambda m: m.group(0).replace("|", "｜"), single)
    single = re.sub(r"^#+", "", single).strip()
    if len(single) > limit:
        single = single[:limit] + "…"
    return single


@dataclass(frozen=True)
class PromptFit:
    system: str
    user: str
    tokens: int
    examples_dropped: bool
    fits: bool
    counted_by: str          # "tokenizer" or "characters"


Counter = Callable[[str, str], int]


def count_or_chars(counter: Counter | None, system: str, user: str) -> tuple[int, str]:
    """Tokens of instructions + prompt by the backend's tokenizer; the
    character count of ``system + "\n" + user`` when there is none or it fails."""
    if counter is not None:
        try:
            value = counter(system, user)
            if isinstance(value, int) and value >= 0:
                return value, "tokenizer"
        except Exception:   # a tokenizer failure must not stop the call
            pass
    return len(system) + 1 + len(user), "characters"


def fit_prompt(render: Callable[[bool], tuple[str, str]], counter: Counter | None,
               context_limit: int, reserve: int = ANSWER_RESERVE) -> PromptFit:
    """Render with examples; when instructions + prompt exceed the limit less
    the answer reserve, render again without examples."""
    limit = max(0, context_limit - reserve)
    system, user = render(True)
    chars = len(system) + 1 + len(user)
    if counter is not None and chars * MAX_TOKENS_PER_CHAR + TEMPLATE_OVERHEAD <= limit:
        # cannot exceed: skip the (possibly remote) tokenizer
        return PromptFit(system, user, chars, False, True, "characters (bound)")
    used, how = count_or_chars(counter, system, user)
    if used <= limit:
        return PromptFit(system, user, used, False, True, how)
    system, user = render(False)
    used, how = count_or_chars(counter, system, user)
    return PromptFit(system, user, used, True, used <= limit, how)
