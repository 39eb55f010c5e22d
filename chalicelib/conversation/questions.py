"""A character's question, and the player's answer to it.

A line whose last sentence asks something (ends in ？, or in でしょ/かしら) leaves a question open for the
next turn.  Its kind decides how an answer is read:

- ``invitation``: it invites the player to a reachable place (続きは控え室で話さない？): a yes is that
  move (refinement's `agreement` and `invitation` rules);
- ``offer``: it offers a drink or a dish (何か飲む？, ナポリタン、食べていく？): a yes is an order;
- ``wh``: it asks what, where, who (何を話してたの？): any answer that is not a question back answers it;
- ``request``: it asks the player to do something (手伝ってくれない？): 「いいよ」「大丈夫」 say yes;
- ``yes_no``: anything else (あなたはどう思う？ included): yes, no or neither.

The player's answer is read without a model, on cue words: yes (うん, いいと思う, 賛成, もちろん …), no
(いや, 反対, やめたほうが, 思わない …) or other (わからない, どっちでも, 内緒 …), in the sense the question
gives them: 「いいです」「大丈夫」「結構」 decline an offer but grant a request; 「いや、やるって」 (いや correcting,
then the thing asked for) and 「手伝うのはいいよ」 say yes.  A line of several sentences is answered by the
first that answers (「手伝うのはいいよ。何すればいいの？」: yes, and a question of its own).  A question back,
or a line that is about something else at length, is not an answer.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from .. import lazyre
from ..interpret.asking import asks_without_mark, offers_two_answers
from ..interpret.lexicon import compiled
from ..interpret.text import nfkc

Kind = Literal["invitation", "offer", "wh", "request", "yes_no"]
Polarity = Literal["yes", "no", "other"]

# (each shape below is a pattern of the lexicon table questions.json, with its examples)
# 「…でしょ。」「…かしら。」 ask; 「…んだよね。」 only says (a question mark asks in any case)
_ASKING_END = compiled("questions", "asking_end")
_WH = compiled("questions", "asks_what")
_OFFER = compiled("questions", "offer")
_REQUEST_END = compiled("questions", "request_end")
_SENTENCE = lazyre.compile(r"[^。！？!?]*[。！？!?]+|[^。！？!?]+$")

_NO = compiled("questions", "answer_no")
# (listening said as one's own will is a yes too: 「伺います」「聞きますよ」「理由があるなら伺いますけど」)
_YES = compiled("questions", "answer_yes")
_OTHER = compiled("questions", "answer_other")
_LEADING_ANSWER = compiled("questions", "leading_answer")     # 「ぜひ聞かせて」: a yes, then asking to be told
# 「いいんじゃない？」「アリでしょ？」: an opinion said as a question.
_TAG_QUESTION = compiled("questions", "tag_question")
_STRONG_YES = compiled("questions", "strong_yes")
# Saying one will do it (after a correcting いや): やるって, やるよ, 行くって, 選ぶって.
_DOING = compiled("questions", "doing")
_QUESTION_BACK = compiled("questions", "question_back")
# 「いや、やるって」「いやいや、手伝うよ」: いや taking back a misreading, then the answer itself.
_CORRECTING = compiled("questions", "correcting")
# What after a leading いや still refuses or turns down (「いや、いい」「いや、結構」「いや、やめとく」「いや、苦手かな」);
# anything else after it (「いや、さっき頼みましたよ」「いや、だから…」) corrects or restates: いや alone is no answer.
_SPOKEN_AFTER = compiled("questions", "spoken_after")
_REFUSING = compiled("questions", "refusing")
# 「いいよ」「大丈夫」「全然OK」「それくらいなら別にいいよ」: fine — a yes to a request, a no to an offer.
_FINE = compiled("questions", "fine")
_NOT_FINE = compiled("questions", "not_fine")
# What makes 「いい」 to an offer a yes after all (いいね, いただく, お願い).
_KEEN = compiled("questions", "keen")


# A question that proposes a change (「もうちょっと明るくしたら…と思わない？」「ドア、変えてみない？」): a liking for
# things as they are (「僕は今の薄暗い感じが好き」「このままがいい」) answers it no, whatever 好き or いい it holds.
_PROPOSES = compiled("questions", "proposes")
_AS_IT_IS = compiled("questions", "as_it_is")


# 「あなたはどう思う？」 right after a change was talked of (「このお店、少し変えようと思ってるの」「変えるって…」)
_OPINION = compiled("questions", "opinion_asked")
_CHANGE = compiled("questions", "change_talked")
# 「何も出ないよ？」: a tag that only teases; 「…と思わない？」: an opinion asked, not a request
_TEASING_TAG = compiled("questions", "teasing_tag")
_THINK_NOT_TAG = compiled("questions", "think_not_tag")
# (an opening うん, はい …: agreeing before a liking for things as they are; a yes before a cue of doubt)
_AGREEING_OPENING = compiled("questions", "agreeing_opening")
_YES_OPENING = compiled("questions", "yes_opening")


def proposes_change(text: str, said_with: str = "") -> bool:
    """Whether the line asks the player to agree to a change (a liking for things as they are answers no):
    itself, or an opinion asked right after a change was talked of (`said_with`: the lines said with it)."""
    sentence = last_sentence(nfkc(text))
    return bool(_PROPOSES.search(sentence)) or bool(_OPINION.search(sentence) and
                                                    _CHANGE.search(nfkc(f"{said_with} {text}")))


def offered_in(text: str, item_named: Callable[[str], str | None]) -> str | None:
    """The item a character's line offers: named in the sentence that asks (「ナポリタン、食べていく？」), or in a
    bare sentence right before it (「ナポリタン？　食べてく？」); none where the line only asks agreement
    (「ビール六百円、ナポリタン八百円。良心価格でしょ？」 offers nothing: a yes to it orders nothing)."""
    said = [s.strip() for s in _SENTENCE.findall(nfkc(text)) if s.strip(" 　…")]
    asking = [i for i, sentence in enumerate(said) if re.search(r"[？?]", sentence)]
    if not asking:
        return item_named(text)
    at = asking[-1]
    if _TAG_QUESTION.search(said[at]):
        return None
    found = item_named(said[at])
    if found is None and at > 0 and re.fullmatch(r"\S{1,12}[？?。、]?", said[at - 1]):
        found = item_named(said[at - 1])
    return found


def last_sentence(text: str) -> str:
    found = [s.strip() for s in _SENTENCE.findall(text) if s.strip(" 　…")]
    return found[-1] if found else text.strip()


def asks(text: str) -> bool:
    """Whether a line ends by asking the player something (not 「何も出ないよ？」: a tag that only teases)."""
    sentence = last_sentence(nfkc(text))
    return bool(_ASKING_END.search(sentence)) and not _TEASING_TAG.search(sentence)


def question_kind(text: str, *, invited: bool = False, offered: bool = False) -> Kind:
    sentence = last_sentence(nfkc(text))
    if invited:
        return "invitation"
    if offered or _OFFER.search(sentence):
        return "offer"
    if _REQUEST_END.search(sentence) and not _THINK_NOT_TAG.search(sentence):
        return "request"    # 「どれを載せるか一緒に選んでくれる？」: a request, answered yes or no
    if _WH.search(sentence):
        return "wh"
    return "yes_no"


def polarity(text: str, kind: Kind | str = "yes_no", *, change: bool = False) -> Polarity | None:
    """How the player's line answers a question of `kind`; None when it is not an answer (a question back).
    Negation wins over a yes cue in the same sentence (いいと思わない); of several sentences, the first that
    answers does.  `change`: the question proposes a change (`proposes_change`)."""
    normalised = nfkc(text).strip()
    if not normalised or offers_two_answers(normalised):
        return None          # (「やるの？やらないの？」 asks which: no yes, no no)
    pieces = [p.strip() for p in _SENTENCE.findall(normalised) if p.strip(" 　…")] or [normalised]
    if len(pieces) > 1:
        for piece in pieces:
            if _asks_back(piece) and not _LEADING_ANSWER.match(piece) and not _TAG_QUESTION.search(piece):
                continue
            found = _polarity(piece, kind, change)
            if found is not None and found != "other":
                return found
    return _polarity(normalised, kind, change)


# Where a line's clauses part (「そのままでいいと思うけど、葵さんはどう思う？」: an opinion, then a question).
_CLAUSE = compiled("questions", "clause")


def only_asks_back(text: str) -> bool:
    """Whether every clause of the player's line asks the character something back (「どう変えたいの？」「色は
    そのままで小窓とか？」): it takes no stance of its own, whatever words of one it holds (not 「いいんじゃない？」,
    an opinion put as a question, nor 「そのままでいいと思うけど、どう思う？」)."""
    normalised = nfkc(text).strip()
    clauses = [c.strip() for c in _CLAUSE.findall(normalised) if c.strip(" 　…、,。")]
    return bool(clauses) and all(_asks_back(c) and not _LEADING_ANSWER.match(c) and not _TAG_QUESTION.search(c)
                                 for c in clauses)


def _asks_back(text: str) -> bool:
    """A question back: a question mark after a question particle, or a wh-question said bluntly (「なんで好きなんだ」)."""
    return bool(_QUESTION_BACK.search(text)) or asks_without_mark(text)


def _polarity(normalised: str, kind: Kind | str, change: bool = False) -> Polarity | None:
    if _asks_back(normalised) and not _LEADING_ANSWER.match(normalised) \
            and not _TAG_QUESTION.search(normalised):
        return None          # a question back (マスターは好きなの？), unless it opens with a yes or a no
    if change and kind in ("yes_no", "request") and _AS_IT_IS.search(normalised) and \
            not _AGREEING_OPENING.match(normalised):
        return "no"          # 「僕は今の薄暗い感じが好き」 to 「明るくしたら…と思わない？」: things as they are
    correcting = _CORRECTING.match(normalised)
    if correcting:
        rest = correcting.group("rest")
        if not _NO.search(rest) and (_STRONG_YES.search(rest) or _DOING.search(rest) or _polarity(rest, kind, change) == "yes"):
            return "yes"     # 「いや、やるって」: いや takes back a misreading, not the request
    spoken = _SPOKEN_AFTER.match(normalised)
    if spoken and not _NO.search(spoken.group("rest")) and not _REFUSING.search(spoken.group("rest")):
        # 「いや、さっき頼みましたよ」「いや、だから今のままがいいって」: いや corrects or restates; what follows
        # answers (or answers nothing), not the いや
        return _polarity(spoken.group("rest"), kind, change)
    fine = _FINE.search(normalised)
    if fine and not _NOT_FINE.search(normalised):
        if kind == "offer" and not _KEEN.search(normalised):
            return "no"      # 「大丈夫です」「いいです」「結構」 to 何か飲む？: no, thank you
        if kind != "offer" or _KEEN.search(normalised):
            return "yes"     # 「いいよ」「全然大丈夫」 to a request or a question: yes
    if _NO.search(normalised):
        return "no"
    if _STRONG_YES.search(normalised):
        return "yes"                 # 「うーん、私はちょっと賛成かも」: the hesitation is not the answer
    if _OTHER.search(normalised) and not _YES_OPENING.match(normalised):
        return "other"
    if _YES.search(normalised):
        return "yes"
    if kind == "wh" and len(normalised) <= 40:
        return "other"
    return None
