"""Words of ordering, treating or paying that do not do it.

An order, a treat or a payment costs the player money, so it is taken only from a sentence that does it.
The same words also turn it down (「おごりません」「奢れないっす」「おごるほどお金ない」), report it
(「おごるって言ってない」「水割りしか頼んでない」), suppose it (「おごってくれるなら」「一つずつなら」), ask for
the opposite (「おごってよ」: the player wants to be treated) or make the item the object of another verb
(「ナポリタンだけ撮る」).  These helpers read the words after a cue, within its sentence.
"""
from __future__ import annotations

import re

from .. import lazyre
from ..interpret.asking import sentence_start
from ..interpret.counts import reduces, zero_said
from ..interpret.lexicon import compiled

# Said to a treat turned down when the scenario has no `declined` lines.
DEFAULT_DECLINED = "いいのいいの、気にしないで。"
# The sentence a cue stands in ends at these marks.
_CLAUSE_END = lazyre.compile(r"[。！？!?\n]")
# A verb's negation right after its stem (奢らない, おごりません, 奢れない, おごってない, 奢ってもないっす).
_NEGATED = lazyre.compile(r"^[らりるれろっ]?(?:れ|せ|させ)?(?:て|で)?(?:も|は)?(?:い|あげ|やれ|あげられ)?"
                      r"(?:ない|ねえ|ねー|ねぇ|ません|なかった|ず(?:に)?|ぬ|ん(?:よ|わ|で|$))"
                      r"(?!\s*(?:[？?]|か(?!ら)|かな|の\s*[？?]|でしょ))")     # (「もらえないかな」 asks politely)
# 「おごるほどお金ない」「おごる余裕ない」「おごる金なんかない」: not enough to do it.
_NOT_ENOUGH = lazyre.compile(r"^[らりるれろっ]?(?:ほど|ような|余裕|金|お金|気)[^。！？!?、,]{0,10}?(?:ない|ねえ|ません|なかった)")
# 「おごるって言ってない」「おごるなんて言った？」: the words reported, not said now.
_REPORTED = lazyre.compile(r"^[らりるれろっ]?(?:って|とは|なんて|とか|と)(?:一言も|全然|別に|まだ)?(?:言っ|言わ|いっ|いわ|言う)")
# 「おごってくれるなら」「おごったら」「頼むなら」: supposed.
_SUPPOSED = lazyre.compile(r"^[らりるれろっ]?(?:て|で)?(?:くれる|もらえる|もらう|あげる)?(?:た|だ)?"
                       r"(?:なら|ならば|たら|だら|れば|ば(?:[、,\s]|$)|としたら)")
# 「おごってよ」「おごってくれる？」「奢ってください」: the player asks to be treated.
_ASKS_TO_BE = lazyre.compile(r"^(?:っ?(?:て|で))?(?:くれ|くださ|下さ|ちょうだい|ほしい|欲しい|もらえ|もらい|もらお)")


def clause_after(text: str, end: int) -> str:
    """The words after `end` up to the end of their sentence."""
    stop = _CLAUSE_END.search(text, end)
    return text[end:stop.start() if stop else len(text)]


def turned_down(text: str, end: int) -> bool:
    """Whether the verb whose cue ends at `end` is negated, reported, supposed or told as done before, not done
    now."""
    rest = clause_after(text, end)
    return bool(_NEGATED.match(rest) or _NOT_ENOUGH.match(rest) or _REPORTED.match(rest) or _SUPPOSED.match(rest)
                or compiled("undone", "done_before").match(rest) or compiled("undone", "decision_denied").match(rest))


def treats_not(text: str, end: int) -> bool:
    """A treat cue ending at `end` that treats nobody: turned down, reported, supposed, or asking to be treated."""
    rest = clause_after(text, end)
    if text[:end].endswith("て") and re.match(r"^(?:よ|ー|〜|~|[!！]|$)", rest) or \
            re.match(r"^っ?て(?:よ|ー|〜|~|[!！]|$)", rest):
        return True          # 「おごってよ」「奢って！」
    # (wished but kept from it, 「おごりたいけど金欠」; promised for another day, 「いつか絶対おごります」; the
    # treat spoken of as on the bill or not, 「おごりは入ってないんですね」)
    start = sentence_start(text, end)
    return turned_down(text, end) or bool(_ASKS_TO_BE.match(rest)) or \
        bool(compiled("undone", "wished_not_done").match(rest) or compiled("undone", "said_of_bill").match(rest)) or \
        bool(compiled("undone", "some_day").search(text, start, max(start, end - 1)))


# What the item is said with instead of being ordered: ordered before (頼んだ, 頼んでない, 注文した, 食べた),
# supposed (〜なら, 〜たら), only that (しか), or the object of another verb (撮る, 見る, 話す).
_REPORTED_ORDER = lazyre.compile(r"(?:頼|たの)(?:んだ|んで|みました|みません|まない|まなかった)|注文(?:した|して|しました|しません|しない)"
                             r"|(?:食べ|飲ん|飲み|食っ)(?:た|だ|て(?:ない|ません))|(?:いただ|頂)(?:きました|いた)|もらった"
                             r"|しか|なら(?![、,\s]*(?:ください|お願い))|たら(?!ず)")
_OTHER_VERB = lazyre.compile(r"撮|写|映|見(?:る|て|せ|た)|描|話|聞|言|思|覚え|知|教え|訊|尋ね|説明")


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


_AFTER_CUE = lazyre.compile(r"しか|(?:頼|たの)(?:んだ|んで(?:ない|ません|る))|注文(?:した|して(?:ない|ません))"
                        r"|^\s*(?:だけ|ずつ|ぐらい|くらい)?\s*(?:なら|ならば|だったら|たら|ない|ません|なかった|じゃない|ではない)")


_TREAT_WORD = lazyre.compile(r"おご|奢|ごちそう|ご馳走")


def is_treat_word(word: str) -> bool:
    """Whether an entry's word is one of treating (おごる, 奢ります, ごちそうします)."""
    return bool(_TREAT_WORD.search(word))


def treat_undone(text: str, start: int, end: int) -> bool:
    """Whether a listed word found at `start`–`end` of `text` is a word of treating that treats nobody
    (「おごってよ」 asks to be treated: an entry that thanks for a treat must not answer it)."""
    return bool(_TREAT_WORD.match(text, start)) and treats_not(text, end)
