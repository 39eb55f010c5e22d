"""A character named in a case role is talked about, not asked: the one spoken to keeps the turn.

「葵さん、ママに直接言ってみたら？」 tells 葵 to speak to ママ; 「写真ならママもOKしそうじゃない？」 asks 葵 what ママ
would say.  ママ is named in both, but only as someone the sentence's verb reaches (ママに, ママへ, ママと, ママから,
ママを, ママより) or as one more subject of a clause (ママも, ママが): the question is put to the one tapped, called or
talked with, and they answer it — about ママ.  Only a name that is the topic or the owner of what is asked (ママって
独身？, ママは何歳？, ママの趣味は？) makes the line a question about that person, which that person may take
(turn.py's 4b, and its reading of who is addressed).
"""
from __future__ import annotations

from ..interpret.lexicon import compiled
from .focus import FocusReader

# what follows a name used in a case role (after an optional honorific): the verb's partner or one more subject
_CASE_ROLE = compiled("conversation", "mention_case_role")
# a name's が and a short clause with no break in it, ending where a noun is modified (好きな, 作った, 行く)
_SUBJECT_CLAUSE = compiled("acts", "subject_clause")


def only_mentioned(text: str, reader: FocusReader, person: str, head: tuple[int, int] | None = None) -> bool:
    """Whether `person` is named in `text` (a focus's normalised text) only in case roles, never as the
    topic or the owner of what is asked; False when they are not named at all.  `head`: the span of the noun
    the question is about — a name whose が-clause modifies it (「ママが好きな映画は？」) owns it, as ママの would."""
    spans = [(start, end) for start, end, who in reader.named(text) if who == person]
    return bool(spans) and all(_CASE_ROLE.match(text[end:]) and not _owns_head(text, end, head) for _, end in spans)


def _owns_head(text: str, end: int, head: tuple[int, int] | None) -> bool:
    """Whether the name ending at `end` is the subject of a short clause that modifies the head noun."""
    if head is None or head[0] <= end:
        return False
    return _SUBJECT_CLAUSE.match(text[end:head[0]]) is not None


def asked_about(text: str, reader: FocusReader, about: tuple[str, ...],
                head: tuple[int, int] | None = None) -> tuple[str, ...]:
    """Of the characters a line is about (Focus.about), those it asks about: not those only mentioned."""
    return tuple(p for p in about if not only_mentioned(text, reader, p, head))


# the end of a line that passes on what someone said or feels (「…絶対いやだって」「…って言ってたよ」「…らしいよ」)
_REPORTED = compiled("conversation", "mention_reported")
# a name as the one whose words or feelings are passed on
_REPORTER = compiled("conversation", "mention_reporter")


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
