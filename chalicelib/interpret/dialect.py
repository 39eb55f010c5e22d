"""Common Kansai forms read as the standard ones the cues are written for.

Cue patterns (yes and no, orders, permission to go, questions back) are written in standard Japanese; a player
who says 「入ってええ？」「直さへんの？」「なんぼ？」「おおきに」 means 入っていい, 直さないの, いくら, ありがとう.
``standard(text)`` rewrites a few frequent forms whose standard reading is not in doubt, before a line is read
(the player's own words are logged as they were written).  Forms that could be standard Japanese too are left
alone: ええ at the head of a line is the standard "yes" (「ええ、そうです」); ちゃう (違う / じゃない) is ambiguous.
"""
from __future__ import annotations

import re

from .. import lazyre

# (pattern, replacement), applied in order on normalised text
_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple((lazyre.compile(p), r) for p, r in (
    (r"おおきに", "ありがとう"),
    (r"なんぼ", "いくら"),
    (r"(?:^|(?<=[、,。!！？?\s]))ほな(?=[、,\s]|[^ぁ-ん])", "じゃあ"),
    (r"(?:^|(?<=[、,。!！？?\s]))せや(?:な|ね)?(?=[、,!！。\s]|$)", "そうだね"),
    # 帰らなあかん, 行かなあかん: must (before あかん alone); 帰らんと, 行かんと: must, said short
    (r"(?<=[かさたなはまやらわがざだばぱ])なあかん", "なきゃ"),
    (r"(?<=[かたまらがば])んと(?=[、,。!！?？\s…]|$|な|あかん|いかん|まずい)", "ないと"),
    (r"なんでやねん", "なんでだよ"),
    (r"あかん", "だめ"),
    (r"ほんまに", "本当に"), (r"ほんま(?=[？?!！。、,]|$)", "本当"),
    (r"めっちゃ", "すごく"),
    # 直さへん, 知らへん, 食べへん: the negative
    (r"(?<=[あかさたなはまやらわがざだばぱえけせてねへめれげぜでべぺ])へんかった", "なかった"),
    (r"(?<=[あかさたなはまやらわがざだばぱえけせてねへめれげぜでべぺ])へん(?=[のかなでよねわ？?。、,!！\s]|$)", "ない"),
    (r"(?<=[あかさたなはまらわがざだばぱ])ひん(?=[のかなでよねわ？?。、,!！\s]|$)", "ない"),
    # いい: 入ってええ？ ええ雰囲気 ええよ (not ええ、 at the head: the standard yes)
    (r"(?<=[てで]も)ええ", "いい"),
    (r"(?<![ぁ-ん])ええ(?!っ?と(?!こ))(?=[よかなやんのわでし一-龯]|[？?!！。]|$)", "いい"),
    (r"(?<=[ぁ-ん])ええ(?!っ?と)(?=[？?!！。]|よ|か|な|わ|の|やん|$)", "いい"),
    (r"(?<=[^\s、,。])やねん", "なんだ"),
    (r"やんか(?=[？?!！。]|$)", "じゃないか"),
    (r"(?<=[^\s、,。])やん(?=[？?!！。、,\s]|$)", "じゃん"),
    (r"(?<=[^\s、,。])やで(?=[？?!！。、,\s]|$)", "だよ"),
    (r"(?<=[^\s、,。])やろ(?=[？?!！。、,\s]|$|か)", "だろ"),
    (r"(?<=[^\s、,。])やけど", "だけど"),
    (r"(?<=[^\s、,。])やな(?=[？?!！。、,\s]|$|あ)", "だな"),
    (r"(?<=ん)や(?=[？?!！。、,\s]|$)", "だ"),
    (r"思てんの", "思ってるの"), (r"思てる", "思ってる"), (r"思てん", "思ってる"),
    (r"言うてた", "言ってた"), (r"言うてる", "言ってる"),
    # しよかな, 変えよかな: the volitional
    (r"(?<=[しえべせけめれげねてい])よかな", "ようかな"),
    (r"(?<=[しえべせけめれげねてい])よか(?=[？?。!！]|$)", "ようか"),
    (r"任しとき", "任せて"),
))


def standard(text: str) -> str:
    """`text` (normalised) with common Kansai forms read as standard Japanese."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
