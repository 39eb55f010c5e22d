"""A character's question, and the player's answer to it.

A line whose last sentence asks something (ends in ？, or in でしょ/かしら) leaves a question open for the
next turn.  Its kind decides how an answer is read:

- ``invitation``: it invites the player to a reachable place (続きは控え室で話さない？): a yes is that
  move (refinement's `agreement` and `invitation` rules);
- ``offer``: it offers a drink or a dish (何か飲む？, ナポリタン、食べていく？): a yes is an order;
- ``wh``: it asks what, where, who (何を話してたの？): any answer that is not a question back answers it;
- ``yes_no``: anything else (あなたはどう思う？ included): yes, no or neither.

The player's answer is read without a model, on cue words: yes (うん, いいと思う, 賛成, もちろん …), no
(いや, 反対, やめたほうが, 思わない …) or other (わからない, どっちでも, 内緒 …).  A question back, or a
line that is about something else at length, is not an answer.
"""
from __future__ import annotations

import re
from typing import Literal

from ..interpret.text import nfkc

Kind = Literal["invitation", "offer", "wh", "yes_no"]
Polarity = Literal["yes", "no", "other"]

# 「…でしょ。」「…かしら。」 ask; 「…んだよね。」 only says (a question mark asks in any case)
_ASKING_END = re.compile(r"(?:[？?]|でしょ(?:う)?|かしら)\s*[。…]*\s*$")
_WH = re.compile(r"何|なに|なん|どこ|誰|だれ|いつ|どんな|どれ|どっち|どちら|なんで|なぜ|どうして|どう(?!思|かな)")
_OFFER = re.compile(r"飲む|飲んで|飲み物|食べ(?:る|て|ていく|てく)|何にする|いかが|どうぞ|作ろうか|出そうか|もう一杯")
_REQUEST_END = re.compile(r"(?:てくれる|てくれない|でくれる|でくれない|てもらえる|ませんか|ない)\s*[？?]\s*$")
_SENTENCE = re.compile(r"[^。！？!?]*[。！？!?]+|[^。！？!?]+$")

_NO = re.compile(r"^(?:いや|いいや|いえ|いいえ|ううん|うーん、?いや|まさか|全然)(?:[、,。！!\s]|$)|反対|だめ|ダメ|駄目|嫌だ|いやだ|やだ|無理"
                 r"|違う|ちがう|思わない|思いません|そうでもない|そんなことない|やめ(?:た|て)?(?:ほう|方)|しない(?:ほう|方)"
                 r"|変えない(?:ほう|方|で)|いらない|要らない|結構です|遠慮|今はいい|大丈夫です|飲まない|食べない|行かない"
                 r"|つまらな|眠くな|ない(?:かな|と思う)$")
_YES = re.compile(r"^(?:うん|はい|ええ|おう|そう|そうそう|うんうん|もちろん|ぜひ|是非|いいね|いいよ|いいですよ|オッケー|おっけー|ok"
                  r"|了解|りょうかい|喜んで|よろこんで|当然|たしかに|確かに|だね|だよね|ですね)(?:[、,。！!\s~ー]|$)"
                  r"|賛成|いいと思|良いと思|いいんじゃない|いいじゃん|アリ|あり(?:だ|じゃ)|そう思う|手伝う|手伝います|やろう|やる(?:よ|!|！|$)"
                  r"|変え(?:よう|ちゃおう|たら|てみ|ましょう)|選ぶ|選ぼう|見せて|飲む|飲みたい|食べる|食べたい|お願い|頂く|いただく"
                  r"|もらう|もらおう|好き|合う|合ってる|素敵|楽しみ|賛成|また来|絶対来|来ます|来るよ")
_OTHER = re.compile(r"わから|分から|わかんな|知らな|どっちでも|どちらでも|どうだろ|どうかな|微妙|迷う|迷って|うーん|さあ|なんとも"
                    r"|内緒|ないしょ|秘密|ひみつ|別に|べつに|色々|いろいろ|ちょっとね|まあね|場合による|半々|少しなら|ちょっとなら")
_LEADING_ANSWER = re.compile(r"^(?:うん|はい|ええ|いや|いいえ|ううん|もちろん|ぜひ|そうだね|そうね|いいよ|いいね)(?:[、,。！!\s]|$)")
# 「いいんじゃない？」「アリでしょ？」: an opinion said as a question.
_TAG_QUESTION = re.compile(r"(?:じゃない|じゃん|よね|でしょ|だろ|だろう)\s*[？?]\s*$")
_STRONG_YES = re.compile(r"賛成|いいと思|良いと思|いいんじゃない|そう思う|やろう|手伝う|手伝います")
_QUESTION_BACK = re.compile(r"[？?]\s*$|(?:の|か|かな|かしら)\s*[？?]")


def last_sentence(text: str) -> str:
    found = [s.strip() for s in _SENTENCE.findall(text) if s.strip(" 　…")]
    return found[-1] if found else text.strip()


def asks(text: str) -> bool:
    """Whether a line ends by asking the player something."""
    return bool(_ASKING_END.search(last_sentence(nfkc(text))))


def question_kind(text: str, *, invited: bool = False, offered: bool = False) -> Kind:
    sentence = last_sentence(nfkc(text))
    if invited:
        return "invitation"
    if offered or _OFFER.search(sentence):
        return "offer"
    if _WH.search(sentence) and not _REQUEST_END.search(sentence):
        return "wh"         # not 「どれを載せるか一緒に選んでくれる？」: a request, answered yes or no
    return "yes_no"


def polarity(text: str, kind: Kind = "yes_no") -> Polarity | None:
    """How the player's line answers a question of `kind`; None when it is not an answer (a question back).
    Negation wins over a yes cue in the same line (いいと思わない)."""
    normalised = nfkc(text).strip()
    if not normalised:
        return None
    if _QUESTION_BACK.search(normalised) and not _LEADING_ANSWER.match(normalised) \
            and not _TAG_QUESTION.search(normalised):
        return None          # a question back (マスターは好きなの？), unless it opens with a yes or a no
    if _NO.search(normalised):
        return "no"
    if _STRONG_YES.search(normalised):
        return "yes"                 # 「うーん、私はちょっと賛成かも」: the hesitation is not the answer
    if _OTHER.search(normalised) and not re.match(r"^(?:うん|はい|もちろん)", normalised):
        return "other"
    if _YES.search(normalised):
        return "yes"
    if kind == "wh" and len(normalised) <= 40:
        return "other"
    return None
