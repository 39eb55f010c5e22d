"""Words of ordering, treating or paying that do not do it.

An order, a treat or a payment costs the player money, so it is taken only from a sentence that does it.
The same words also turn it down (「おごりません」「奢れないっす」「おごるほどお金ない」), report it
(「おごるって言ってない」「水割りしか頼んでない」), suppose it (「おごってくれるなら」「一つずつなら」), ask for
the opposite (「おごってよ」: the player wants to be treated) or make the item the object of another verb
(「ナポリタンだけ撮る」).  These helpers read the words after a cue, within its sentence.
"""
from __future__ import annotations

from .. import lazyre
from ..interpret.asking import sentence_start
from ..interpret.counts import reduces, zero_said
from ..interpret.lexicon import compiled

# Said to a treat turned down when the scenario has no `declined` lines.
DEFAULT_DECLINED = "いいのいいの、気にしないで。"
# The sentence a cue stands in ends at these marks.
_CLAUSE_END = lazyre.compile(r"[。！？!?\n]")
# A verb's negation right after its stem (奢らない, おごりません, 奢れない, おごってない, 奢ってもないっす).
# (「もらえないかな」 asks politely: a question after the negation is no negation)
_NEGATED = compiled("conversation", "undone_negated")
# 「おごるほどお金ない」「おごる余裕ない」「おごる金なんかない」: not enough to do it.
_NOT_ENOUGH = compiled("conversation", "undone_not_enough")
# 「おごるって言ってない」「おごるなんて言った？」: the words reported, not said now.
_REPORTED = compiled("conversation", "undone_reported")
# 「おごってくれるなら」「おごったら」「頼むなら」: supposed.
_SUPPOSED = compiled("conversation", "undone_supposed")
# 「おごってよ」「おごってくれる？」「奢ってください」: the player asks to be treated.
_ASKS_TO_BE = compiled("conversation", "undone_asks_to_be")
# 「おごってよ」「奢って！」: a て, then only よ, a long mark, an exclamation or the end
_TE_END = compiled("conversation", "undone_te_end")
_TE_ASKING_END = compiled("conversation", "undone_te_asking_end")
_TE_ASKING = compiled("conversation", "undone_te_asking")


def clause_after(text: str, end: int) -> str:
    """The words after `end` up to the end of their sentence."""
    stop = _CLAUSE_END.search(text, end)
    return text[end:stop.start() if stop else len(text)]


def turned_down(text: str, end: int) -> bool:
    """Whether the verb whose cue ends at `end` is negated, reported, supposed, told as done before or going on
    (「もう作ってくれてるのかな」), not asked for now."""
    rest = clause_after(text, end)
    return bool(_NEGATED.match(rest) or _NOT_ENOUGH.match(rest) or _REPORTED.match(rest) or _SUPPOSED.match(rest)
                or compiled("undone", "done_before").match(rest) or compiled("undone", "decision_denied").match(rest)
                or compiled("undone", "ongoing").match(rest)
                or bool(_TE_END.search(text[:end]) and compiled("undone", "ongoing_after_te").match(rest)))


def treats_not(text: str, end: int) -> bool:
    """A treat cue ending at `end` that treats nobody: turned down, reported, supposed, or asking to be treated."""
    rest = clause_after(text, end)
    if _TE_END.search(text[:end]) and _TE_ASKING_END.match(rest) or _TE_ASKING.match(rest):
        return True          # 「おごってよ」「奢って！」
    # (wished but kept from it, 「おごりたいけど金欠」; promised for another day, 「いつか絶対おごります」; the
    # treat spoken of as on the bill or not, 「おごりは入ってないんですね」)
    start = sentence_start(text, end)
    return turned_down(text, end) or bool(_ASKS_TO_BE.match(rest)) or \
        bool(compiled("undone", "wished_not_done").match(rest) or compiled("undone", "said_of_bill").match(rest)) or \
        bool(compiled("undone", "some_day").search(text, start, max(start, end - 1)))


# What the item is said with instead of being ordered: ordered before (頼んだ, 頼んでない, 注文した, 食べた),
# supposed (〜なら, 〜たら), only that (しか), or the object of another verb (撮る, 見る, 話す).
_REPORTED_ORDER = compiled("conversation", "undone_reported_order")
_OTHER_VERB = compiled("conversation", "undone_other_verb")


def not_ordered(between: str, after_cue: str) -> bool:
    """Whether an item named is not ordered: the words between it and the cue, and after the cue in the same
    sentence, say it was ordered before, suppose it, or make it the object of another verb."""
    if _REPORTED_ORDER.search(between) or _OTHER_VERB.search(between) or zero_said(between) or reduces(between):
        return True          # (「ひまわりは0本でお願いします」: none of it, the bill takes it off)
    if compiled("later", "put_off").match(between):
        return True          # 「ナポリタンは今度にします」: put off for another time
    if compiled("undone", "had_now").search(between):
        return True          # 「大根はもう頂いてるので追加はいらないです」: had already, not asked for again
    if compiled("undone", "declined").match(between):
        return True          # 「お通しは付けないでください」「きんぴらは下げてください」: declined, the cue asks that
    if compiled("undone", "reason_clause").search(between):
        return True          # 「ビール飲んでるから、ここでゆっくりさせてもらう」: the cue is another clause's
    # (after the cue, only what takes the whole back: 「ハイボールください、さっき飲んだのと同じで」 orders; a count
    # that is taken off, 「かすみ草1本減らして」, orders nothing: the bill takes it off)
    # (「バラに一本だけ混ぜたら変かな」: the count supposed, to weigh it)
    # (「追加はいらないです」: the ordering word declined)
    return bool(_AFTER_CUE.search(after_cue)) or reduces(after_cue) or bool(compiled("undone", "declined").match(after_cue)) or \
        bool(compiled("undone", "weighed").search(after_cue))


_AFTER_CUE = compiled("conversation", "undone_after_cue")


_TREAT_WORD = compiled("conversation", "undone_treat_word")


def is_treat_word(word: str) -> bool:
    """Whether an entry's word is one of treating (おごる, 奢ります, ごちそうします)."""
    return bool(_TREAT_WORD.search(word))


def treat_undone(text: str, start: int, end: int) -> bool:
    """Whether a listed word found at `start`–`end` of `text` is a word of treating that treats nobody
    (「おごってよ」 asks to be treated: an entry that thanks for a treat must not answer it)."""
    return bool(_TREAT_WORD.match(text, start)) and treats_not(text, end)
