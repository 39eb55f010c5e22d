"""Choices a character settles with the player (which photo to put up: the door or the counter).

Knowledge entries that share a `choice` are its options (「ドアのほうね。……決まり！」「カウンターね！……決まり！」).
An option is taken only from a line that chooses: not from a question or an offer that names it (「ドアの写真、
今度僕が撮り直しましょうか」).  Once one option was said the choice is settled: another option named later
(「カウンターの写真もいいよね」) does not undo it, and a question which was chosen (「結局どっちにしたの？」) is
answered with the chosen option's line again.  The player may change their mind in so many words (「やっぱり紺に
します」「生成りじゃなくて紺です」: lexicon `choices`): the other option is taken, and the first forgotten.  The game's state already remembers it: an entry's line said is
in the variation history (`knowledge/<person>/<index>`), so nothing else is stored.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..interpret.asking import is_question
from ..interpret.lexicon import compiled
from ..interpret.text import nfkc
from ..scenario import GameState
from ..scenario.loader import CompiledKnowledge
from ..scenario.variation import knowledge_key
from .focus import taken_back

# 「撮り直しましょうか」「今度撮ろうか」: an offer to do something, no choice
_OFFERING = compiled("conversation", "choices_offering")
# 「結局どっちにしたの？」「どれに決まった？」「何にした？」: which option was taken
_WHICH = compiled("conversation", "choices_which")


# Saying which is taken: 〜にします, 〜で決定, 〜を選ぶ, 〜のほうが好き, 〜がいい, 〜推し, 〜に一票, 〜かな.
CHOOSING = compiled("conversation", "choices_choosing")


def chosen(entries: Iterable[CompiledKnowledge], state: GameState, choice: str) -> CompiledKnowledge | None:
    """The option of `choice` already said in this game, if one."""
    for entry in entries:
        if entry.entry.choice == choice and state.variation.get(knowledge_key(entry.character, entry.index)):
            return entry
    return None


def closed(entry: CompiledKnowledge, entries: Iterable[CompiledKnowledge], state: GameState, text: str,
           changing: bool = False) -> bool:
    """Whether an option entry may not answer this line (what it means, without what it took back: `changing`
    when it took something back): its choice was settled by another option and the player does not change
    their mind to this one, or the line does not choose (a question, an offer)."""
    if entry.entry.choice is None:
        return False
    taken = chosen(entries, state, entry.entry.choice)
    if taken is not None and taken.index != entry.index and not changes_to(entry, text, changing):
        return True
    normalised = nfkc(text).strip()
    # 「赤富士にしよう」 chooses (〜にしよう): the option's words pick it, whatever topic the line was read as
    return is_question(normalised) or bool(_OFFERING.search(normalised)) and not CHOOSING.search(normalised)


def changes_to(entry: CompiledKnowledge, text: str, changing: bool = False) -> bool:
    """Whether the line changes the player's mind to this option (「やっぱり紺にします」「生成りじゃなくて紺です」): a
    change cue or a choosing one (or `changing`: the line took something back, read without it), and the option
    named."""
    normalised = nfkc(text)
    if not (changing or compiled("choices", "change_of_mind").search(normalised) or
            compiled("choices", "firm_choice").search(normalised)):
        return False          # (「紺がいいです！紺でお願いします」 chooses in so many words: a change too)
    meant, _ = taken_back(normalised)        # (「生成りじゃなくて紺」: 紺, not the 生成り taken back)
    given_up = compiled("choices", "given_up")
    return any(w in meant and not given_up.match(meant, meant.index(w) + len(w))
               for w in (nfkc(word) for word in entry.entry.words if word))


def given_up(entries: Iterable[CompiledKnowledge], state: GameState, entry: CompiledKnowledge) -> dict[str, tuple]:
    """The variation to forget when `entry` is said for a choice another option had settled: that option is
    no longer the one taken (it may be taken again later)."""
    if entry.entry.choice is None:
        return {}
    taken = chosen(entries, state, entry.entry.choice)
    if taken is None or taken.index == entry.index and taken.character == entry.character:
        return {}
    return {knowledge_key(taken.character, taken.index): ()}


def asked_again(entries: Iterable[CompiledKnowledge], state: GameState, text: str, *,
                topic: bool = False) -> str | None:
    """The reference of the chosen option's line when the line asks which was chosen (and was read as no
    other `topic`), or names another option of a settled choice (「カウンターの写真もいいよね」 after the door
    was chosen), else None."""
    normalised = nfkc(text).strip()
    options = [e for e in entries if e.entry.choice is not None]
    which = not topic and is_question(normalised) and bool(_WHICH.search(normalised))
    if not which and (compiled("choices", "change_of_mind").search(normalised) or
                      compiled("choices", "firm_choice").search(normalised)):
        # 「生成りじゃなくて紺です」「紺がいいです！紺でお願いします」: the other option taken, not the choice asked
        # about again
        return None
    for entry in options:
        history = state.variation.get(knowledge_key(entry.character, entry.index))
        if not history:
            continue
        others = [o for o in options if o.entry.choice == entry.entry.choice and o.index != entry.index]
        if which or any(nfkc(word) in normalised for other in others for word in other.entry.words):
            return f"{knowledge_key(entry.character, entry.index)}#{history[-1] + 1}"
    return None
