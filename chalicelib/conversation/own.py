"""What the player tells of their own life (「僕、カメラマンなんです」「僕も休みは喫茶店めぐりが趣味なんです」).

A statement whose subject is the player (僕/私/俺/自分 は/も …, the act 身の上) is about the player's world, not
the characters': a knowledge line that happens to share one of its words (休み → 「日曜はお休み」) does not
answer it; the character takes it up as the player's own story.  What it was about (the noun a character would
take up) is kept in the conversation memory (`ConversationMemory.told`), so that the same thing told again is
not heard as news: the character remembers it (their `told` line, 「{word}だったわね」).
"""
from __future__ import annotations

from ..interpret.asking import is_question
from ..interpret.lexicon import compiled
from ..interpret.text import nfkc

# The player as the subject: 僕は, 私も, 俺って, 自分、 (at the start or after a pause), not 私の店 (ママ's words
# quoted) nor a first person inside a question to someone else.
_FIRST_PERSON = compiled("conversation", "own_first_person")
TOLD_KEPT = 12       # the things told that are remembered (the oldest is forgotten first)


def about_self(text: str) -> bool:
    """Whether the line tells something of the player themselves (and asks nothing)."""
    normalised = nfkc(text).strip()
    return bool(_FIRST_PERSON.search(normalised)) and not is_question(normalised)


# Nouns that frame what is told rather than name it (僕の趣味は…, 休みの日は…): 「趣味だったわね」 would
# remember the frame, not the thing.
# (one word, matched whole)
_FRAMES = compiled("conversation", "own_frames")


def told_again(told: dict[str, int], words: list[str], turn: int) -> str | None:
    """The thing of `words` (the line's nouns, the likeliest first) the player told of themselves on an
    earlier turn, if one; the line's things are remembered as told now."""
    things = [w for w in words if not _FRAMES.fullmatch(nfkc(w))]
    again = next((w for w in things if told.get(nfkc(w), turn) < turn), None)
    for word in things:
        told[nfkc(word)] = turn
    for old in sorted(told, key=told.__getitem__)[:-TOLD_KEPT]:
        del told[old]
    return again
