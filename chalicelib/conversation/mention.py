"""A character named in a case role is talked about, not asked: the one spoken to keeps the turn.

「葵さん、ママに直接言ってみたら？」 tells 葵 to speak to ママ; 「写真ならママもOKしそうじゃない？」 asks 葵 what ママ
would say.  ママ is named in both, but only as someone the sentence's verb reaches (ママに, ママへ, ママと, ママから,
ママを, ママより) or as one more subject of a clause (ママも, ママが): the question is put to the one tapped, called or
talked with, and they answer it — about ママ.  Only a name that is the topic or the owner of what is asked (ママって
独身？, ママは何歳？, ママの趣味は？) makes the line a question about that person, which that person may take
(turn.py's 4b, and its reading of who is addressed).
"""
from __future__ import annotations

from .. import lazyre
from .focus import FocusReader

# what follows a name used in a case role (after an optional honorific): the verb's partner or one more subject
_CASE_ROLE = lazyre.compile(r"^(?:さん|ちゃん|くん|様|さま)?(?:に|へ|と(?!か|って)|から|を|より|も|が)")


def only_mentioned(text: str, reader: FocusReader, person: str) -> bool:
    """Whether `person` is named in `text` (a focus's normalised text) only in case roles, never as the
    topic or the owner of what is asked; False when they are not named at all."""
    spans = [(start, end) for start, end, who in reader.named(text) if who == person]
    return bool(spans) and all(_CASE_ROLE.match(text[end:]) for _, end in spans)


def asked_about(text: str, reader: FocusReader, about: tuple[str, ...]) -> tuple[str, ...]:
    """Of the characters a line is about (Focus.about), those it asks about: not those only mentioned."""
    return tuple(p for p in about if not only_mentioned(text, reader, p))


# the end of a line that passes on what someone said or feels (「…絶対いやだって」「…って言ってたよ」「…らしいよ」)
_REPORTED = lazyre.compile(r"(?:って|と)(?:言って(?:た|ました|る|ます)?|言ってた)?(?:よ|わ|ぞ|さ|ね)?[。.!！…~〜\s]*$"
                       r"|らしい(?:よ|ね|です|ですよ)?[。.!！…~〜\s]*$")
# a name as the one whose words or feelings are passed on
_REPORTER = lazyre.compile(r"^(?:さん|ちゃん|くん|様|さま)?(?:は|が|も|って)")


def reports_other(text: str, reader: FocusReader, called: str | None) -> str | None:
    """The character whose words the line passes on to the one spoken to (「ママ、葵さんはこの店がなくなるのは
    いやだって」: 葵's), else None.  Their yes or no is not the player's answer to a question: the one spoken to
    hears news of someone else."""
    if not _REPORTED.search(text):
        return None
    for _, end, who in reader.named(text):
        if who != called and _REPORTER.match(text[end:]):
            return who
    return None
