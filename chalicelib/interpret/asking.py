"""Whether a player's line asks something: one reading shared by the conversation layer (facts, focus,
questions, turn).

A line asks when it has a question mark, ends on a question particle (の, か, かしら, っけ, ですか, ますか, なの),
asks to be told (教えて, 聞かせて, 知りたい, って何), or holds a wh-word and ends the way a casual or blunt question
ends without a question mark: 「なんで喝采が一番好きなんだ」「何作ってんだ」「銘柄は何だ」「どこ行くんだよ」「誰だい」
「何がいいかな」 — also with an afterthought after a comma (「何の作業してんだ、ここで」).  A line that says it is
asking again (「名前を聞いてるんだよ」「だから名前って言ってんだ」) asks too.  Not a wh-word: 何か, 何でも, 何も,
誰か, いつも (some, any, always), nor the なん of 「そうなんだ」, nor a back-channel (「そっか」「そうですか」).  かな
alone muses (「好きかな」); with a wh-word it asks.  `wonders` reads a wondering aloud (「明日雨降るかな」), which the
dialogue-act recogniser counts as a question when the player is not musing about their own life.
"""
from __future__ import annotations

import re

from .. import lazyre
from .lexicon import compiled, pattern
from .text import nfkc

# (each shape below is a pattern of the lexicon table questions.json, with its examples)
# A wh-word (not 何か/何でも/何も/いつも/どこか: some, any, always; not the なん of そうなんだ, こんなん).
WH = compiled("questions", "wh_word")
_MARK = lazyre.compile(r"[？?]")
_PARTICLE_END = compiled("questions", "particle_end")
# A question particle, then an afterthought after a comma (「どう思ってるんですか、葵さんの計画」: the word order
# turned round, the question proper first).
# (the afterthought names something, not a sentence of its own with a predicate: 「そうですか、わかりました」)
_PARTICLE_THEN_AFTERTHOUGHT = compiled("questions", "particle_then_afterthought")
_TELL_ME = compiled("questions", "tell_me")
# How a casual question ends after a wh-word: 〜んだ, 〜のだ, 〜だ, 〜んだよ, 〜だい, 〜かい, 〜かな, 〜ん, 〜の.
_WH_END = compiled("questions", "wh_end")
# An afterthought after the question proper (「何の作業してんだ、ここで」): a few words, no verb ending of its own.
_AFTERTHOUGHT = compiled("questions", "afterthought")
# Saying one is asking (again): 「名前を聞いてるんだよ」「だから名前って言ってんだ」「それを訊いてるの」 — not a
# reason told (「千代さんが取り壊すって言ってんだもんな」).
_ASKING_AGAIN = compiled("questions", "asking_again")
# A bare topic asked about (「で、名前は」「あんたは」「ママは」) or the one spoken to's something (「あんたの名前」).
_BARE = compiled("questions", "bare_topic")
_SENTENCE = lazyre.compile(r"[^。！？!?\n]*[。！？!?\n]+|[^。！？!?\n]+$")
# A back-channel (「そっか」「そうか」「あ、そうですか」): the news taken in, not asked about, without a question mark.
_BACKCHANNEL = compiled("questions", "backchannel")
# Wondering aloud (「明日雨降るかな」「ママは来るかしら」): a verb or adjective, then かな or かしら; with いい or 良い
# before it (「来てもいいかな」) it asks leave.
_WONDER = compiled("questions", "wonder")
_LEAVE = compiled("questions", "leave")
# 「そうかな」「そうかしら」: doubt of what was said, not wondering
_DOUBT = compiled("questions", "doubt")
# 「なんだ、そういうことか」: だ and a mark after an opening wh-word; the marks a sentence may end with
_SIGH = compiled("questions", "sigh")
_TRAILING_MARKS = compiled("questions", "trailing_marks")


def _wh_asks(sentence: str) -> bool:
    """A wh-word, then the ending of a casual question (an afterthought after a comma allowed)."""
    # (「なんだ、そういうことか」「何だ、お前か」: a sentence opening on なんだ is a sigh, not a question)
    found = [m for m in WH.finditer(sentence) if not (m.start() == 0 and _SIGH.match(sentence[m.end():]))]
    if not found:
        return False
    tail = _AFTERTHOUGHT.search(sentence)
    body = sentence[:tail.start()] if tail and not WH.search(sentence[tail.start():]) else sentence
    body = _TRAILING_MARKS.sub("", body)
    if not body:
        return False
    ends = [m for m in re.finditer(rf"(?:{_WH_END.pattern})$", body)]
    if any(m.start() > found[0].start() for m in ends):
        return True
    # 「何だ」「誰だい」: the wh-word itself, then the ending; or the sentence ending on the wh-word, a counter
    # or a range after it (「ママっていくつ」「葵ちゃん何歳」「それいつから」: a question typed without its mark)
    after = pattern("acts", "wh_tail")      # a counter, a range, なの after it
    return bool(re.search(rf"(?:{WH.pattern})(?:(?:{_WH_END.pattern})|{after})$", body))


def is_question(text: str) -> bool:
    """Whether the line asks something (of its sentences, any)."""
    normalised = nfkc(text).strip()
    if not normalised:
        return False
    if _MARK.search(normalised) or _TELL_ME.search(normalised) or _ASKING_AGAIN.search(normalised) or \
            compiled("acts", "asked_indirectly").search(normalised):
        return True               # (「お名前をまだ伺ってませんでしたね」: asked as not asked yet)
    found = [s.strip(" 　。！!\n…") for s in _SENTENCE.findall(normalised)]
    found = [s for s in found if s]
    if found and _BACKCHANNEL.match(found[-1]):
        found.pop()               # 「そっか」 after news takes it in (with a question mark it asks, above)
    if found and (_PARTICLE_END.search(found[-1]) or _BARE.match(found[-1]) or
                  _PARTICLE_THEN_AFTERTHOUGHT.search(found[-1])):
        return True               # the line ends on a question particle (not 「そうか。ビールください」)
    return any(_wh_asks(sentence) for sentence in found)


def offers_two_answers(text: str) -> bool:
    """Whether the line asks which of two answers, one the other's negation or set against it with それとも
    (「やるの？やらないの？」「日曜でいいってこと？それとも…」, lexicon `acts.alternative`): no yes or no answers it,
    it agrees to nothing, and it is no may-I or shall-I."""
    return compiled("acts", "alternative").search(nfkc(text)) is not None


def asks_without_mark(text: str) -> bool:
    """A wh-word question without a question mark, or saying one is asking (「何作ってんだ」「名前を聞いてるんだよ」):
    a question back, never an answer, even where a line ending on の or か could be one."""
    normalised = nfkc(text).strip()
    return bool(_ASKING_AGAIN.search(normalised)) or any(
        _wh_asks(s.strip(" 　。！!\n…")) for s in _SENTENCE.findall(normalised) if s.strip(" 　。！!\n…"))


def asks_again(text: str) -> bool:
    """Whether the line says it is asking (again) what it asked (「あんたの名前を聞いてるんだよ」)."""
    return bool(_ASKING_AGAIN.search(nfkc(text)))


def wonders(text: str) -> str | None:
    """How a line without a question proper ends on かな or かしら: "leave" asks leave of the listener
    (「毎日来てもいいかな」), "wonder" wonders aloud (「明日雨降るかな」), which a listener may take up — or the
    player muses (「古い建物を撮るのが多いかな」 after telling of their work); None otherwise."""
    ending = nfkc(text).strip().rstrip(" 　。!！…")
    if _DOUBT.search(ending):
        return None
    if compiled("plans", "own_plan").search(ending) and not WH.search(ending):
        return None          # 「LINEだけでも送ってみようかな」: the player's own plan, mused on, asks nothing
    return "leave" if _LEAVE.search(ending) else "wonder" if _WONDER.search(ending) else None


_SENTENCE_MARKS = "。！!？?"


def sentence_start(text: str, at: int) -> int:
    """Where the sentence that position `at` of `text` lies in starts (after the last mark that ends one)."""
    return max(text.rfind(mark, 0, at) for mark in _SENTENCE_MARKS) + 1


def sentence_end(text: str, at: int) -> int:
    """Where the sentence that position `at` of `text` lies in ends (after its mark, or a line break), or the
    text's end."""
    ends = [i for i in (text.find(mark, at) for mark in _SENTENCE_MARKS + "\n") if i != -1]
    return min(ends) + 1 if ends else len(text)


def asks_if_known(sentence: str) -> bool:
    """Whether a sentence that asks asks whether the one asked knows or remembers something (「ラ・ラ・ランド
    知ってる？」「ママも覚えてるだろ？」): a fact of their memory, which their honest "I don't know" answers, not their
    plans (lexicon plans.json `knows_or_remembers`)."""
    return bool(compiled("plans", "knows_or_remembers").search(nfkc(sentence)))
