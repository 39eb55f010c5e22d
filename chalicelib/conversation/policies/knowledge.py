"""A line of what a character knows (entries.py): the entry that fits the line best — for a topic, its
entries; else the entries whose words the line names.  For a question it does not answer for sure, a sentence
said before or known by someone here may answer it better (recalling.py)."""
from __future__ import annotations

import re
from dataclasses import replace

from ... import lazyre
from ...answers import Answer
from ...interpret.ja import analyse
from ...interpret.ja.tokens import TAG
from ...interpret.lexicon import compiled, pattern
from ...interpret.text import TextForms, nfkc
from ...turn_record import AnswerSource
from ..answering import Deliberation, Proposal, Strength
from ..choices import given_up
from ..entries import speaks_of
from ..facts import is_question, sentences
from ..forms import read_form
from ..mention import asked_about
from .common import asks_leave

# The topic particle right after an entry's word (「休みの日はだいたい釣りしてます」): the word only sets the scene.
_TOPIC_AFTER_WORD = compiled("conversation", "knowledge_topic_after_hit")
_POINTS_BACK = compiled("questions", "points_back")
# What stands between a place's name and a property tied to places (お店の名前, お店って名前).
_PLACE_OWNER_TAIL = pattern("conversation", "knowledge_place_owner_tail")


def knowledge(d: Deliberation) -> Answer | Proposal | None:
    conv, focus, free = d.conv, d.focus, d.free
    # (whose entries fit is read from whom the line asks about, not from a name only mentioned: 「ママとも映画の
    # 話する？」 to 葵 asks of 葵's films, not of ママ's — mention.py)
    asked = asked_about(focus.text, conv.focus_reader, focus.about, focus.head)
    if asked and _of_a_place(conv, focus.text):
        # 「ママ、このお店の名前、なんていうんでしたっけ」: the name asked is the shop's, not the one spoken to's
        asked = ()
    found, fitting = conv._knowledge(free, d.state, d.answer_text, focus if asked == focus.about else
                                     replace(focus, about=asked), d.turn, d.variety, only=d.addressed, mem=d.mem,
                                     changing=bool(d.context.get("taken_back")))
    if found is not None and fitting is not None and not d.asking and free.intent is None and \
            fitting.hit is not None and not focus.in_phrase(fitting.hit.start, fitting.hit.end) and \
            _TOPIC_AFTER_WORD.match(focus.text[fitting.hit.end:]) and not fitting.entry.entry.condition and \
            not fitting.about and d.word() is not None and conv.scenario.characters[free.speaker].echo is not None:
        # 「休みの日はだいたい釣りしてます」: the line is about 釣り, not the shop's days off
        d.context["aside"] = fitting.ref
        found, fitting = None, None
    owned = fitting is not None and fitting.hit is not None and d.owned.covers(fitting.hit.start, fitting.hit.end)
    if found is not None and fitting is not None and free.intent is None and (
            d.own and not fitting.about or owned):
        # 「僕も休みは喫茶店めぐりが趣味なんです」「うちの息子なんて口きいてくれない」「弟と喧嘩したままなんです」: the
        # player's own life (or their kin's), not the shop's days off nor ママ's family (belonging.py)
        d.context["own_life"] = fitting.ref
        found, fitting = None, None
    topic = fitting is not None and fitting.hit is not None and free.intent is not None and \
        free.intent in fitting.entry.intents
    trusted = fitting is not None and (fitting.about or fitting.at_head or fitting.at_wh or topic or (
        fitting.hit is not None and focus.in_phrase(fitting.hit.start, fitting.hit.end)))
    if d.asking and not trusted:
        # (an entry about the one asked about, or whose word is what the question asks for, answers as it is: a
        # sentence sharing some other word of the line is no better answer; asking leave — 「テレビつけてもいい？」
        # — is not answered by an unsaid line that merely shares a word: the form's answer fits it better)
        recalled = conv._recall(d.text, d.state, free, d.mem, d.turn, d.variety, d.context,
                                against=found[1] if found is not None else None, only=d.addressed,
                                said_only=asks_leave(d.text))
        if recalled is not None:
            return recalled
    if found is None:
        return None
    if found[3] == AnswerSource.RECALL and fitting is not None and \
            (recalled_ref := conv._recalled_ref(fitting, d.state)) is not None:
        answer = d.make(found, detail={"recalled": recalled_ref})
    else:
        answer = d.make(found)
    if fitting is not None and (forgotten := given_up(conv.answerer.entries_of(fitting.entry.character), d.state,
                                                      fitting.entry)):
        # 「やっぱり紺にします」: the option taken before is given up
        answer = replace(answer, variation={**answer.variation, **forgotten})
    if fitting is not None and fitting.hit is None and d.asking and focus.topic is not None and \
            not fitting.about and not speaks_of(fitting.entry, focus.topic_words) and \
            _topic_told_beside(conv, focus.text, [*fitting.entry.entry.words, *_intent_words(conv, free.intent)]):
        # 「このお店の名前って何ていうの？赤いドアしか覚えてなくて」: the topic read from words told beside the
        # question, which sets up its own (名前) — a guess (answering.py)
        return _asked_alone(d, answer, f"the topic is told beside a question about {', '.join(focus.topic_words)}")
    if fitting is not None and fitting.hit is None and d.asking and not fitting.about and \
            (asked_of := _what_is_asked(focus)) and not speaks_of(fitting.entry, asked_of) and \
            not _named_in_what_is_asked(conv, focus, [*fitting.entry.entry.words, *_intent_words(conv, free.intent)]):
        # 「で、学割は？」 after the menu: the entry came from the topic alone, and neither it nor its topic's
        # words are what the question is about — a guess, which an honest answer beats (answering.py)
        return Proposal(answer, Strength.WEAK, f"the entry says nothing of what is asked ({', '.join(asked_of)})")
    if fitting is None or fitting.hit is None:
        return answer
    answer = _echoing_the_word_said(answer, fitting, focus.text, conv.matcher)
    return _weighed(d, answer, fitting, topic, trusted)


def _weighed(d: Deliberation, answer: Answer, fitting, topic: bool, trusted: bool) -> Proposal:
    """How firmly a knowledge line found by a word of the line answers it: a guess where the word is not what the
    line is about (told in passing, before or after the question, beside its topic, only its predicate)."""
    focus = d.focus
    if d.asking and fitting.about and (form := read_form(focus.text)) is not None and form.form == "have":
        # 「梅酒はあるかしら」: whether there is a thing is the shop's to say, not a line of someone's own life that
        # shares a word (酒) with it — a guess, which the shop's answer beats (answering.py)
        return Proposal(answer, Strength.WEAK, f"「{fitting.hit.word}」 asked as a thing there is, of an entry about someone")
    if (other_day := _another_day(focus.text, answer.text)) is not None:
        # 「…日曜の午後なら空いてるよ」 and a line setting 土曜: not what the player offered — a guess, never a
        # promise made for them (answering.py)
        return Proposal(answer, Strength.WEAK, f"the line sets {other_day}, not the day the player named")
    if not d.asking and not fitting.about and not topic and not fitting.at_head and \
            _told_in_passing(focus.text, fitting.hit):
        # 「今日な、最後に乗せた客がな…ドラマかいな思たわ」: a story the player tells, the word one of its many,
        # not the sentence it ends on: a guess, which a reaction to the story beats (answering.py)
        return Proposal(answer, Strength.WEAK, f"「{fitting.hit.word}」 is only a word of the player's story")
    if d.asking and not trusted and not topic and _before_the_question(focus.text, fitting.hit):
        # 「…明日謝りに行かなきゃなの。気が重いわ〜。ママだったらどうする？」: the word is one of what the player
        # tells before asking, not what is asked — a guess, which an honest answer beats (answering.py)
        return Proposal(answer, Strength.WEAK, f"「{fitting.hit.word}」 is only a word before the question")
    if d.asking and (topic or fitting.at_head) and not fitting.about and not fitting.at_wh and \
            _before_the_question(focus.text, fitting.hit) and not _named_in_the_question(d.conv, focus.text, fitting.hit, list(fitting.entry.entry.words)):
        # 「ちあきなおみ、名前は知ってます！喝采ってどんな曲なんですか？」: the topic (or the head, its phrase) was read
        # from a word told in a sentence before the question, and no sentence that asks names the entry — a guess,
        # which an honest answer beats (answering.py)
        return Proposal(answer, Strength.WEAK, f"「{fitting.hit.word}」 is only a word before a question about "
                                               "something else")
    if d.asking and focus.topic is not None and not fitting.about and not fitting.at_wh and not topic and \
            not focus.in_topic(fitting.hit.start, fitting.hit.end) and not speaks_of(fitting.entry, focus.topic_words):
        # 「そのレコードって、先代さんの頃からあるの？」: the question sets up the records as its topic; an entry on
        # 先代 that says nothing of them shares only another word of it — a guess (answering.py)
        return Proposal(answer, Strength.WEAK, f"「{fitting.hit.word}」 is not the question's topic "
                                               f"({', '.join(focus.topic_words)})")
    if d.asking and not fitting.about and not fitting.at_wh and not fitting.at_head and \
            not (focus.topic is not None and (focus.in_topic(fitting.hit.start, fitting.hit.end) or
                                              speaks_of(fitting.entry, focus.topic_words))) and \
            _after_the_question(focus.text, fitting.hit):
        # 「このお店って何年やってるの？スズランがきれいで」: a word told after the question, not what it asks — a
        # guess (answering.py)
        return _asked_alone(d, answer, f"「{fitting.hit.word}」 is told beside the question")
    if trusted or d.asking or not _predicate(focus.text, fitting.hit):
        return Proposal(answer, Strength.FIRM, _evidence(fitting, topic, trusted))
    # a statement that shares only a verb or an adjective with the entry (「おばあちゃんに作ってあげた」 and an
    # entry on what was made): not what the line is about, a guess (answering.py)
    return Proposal(answer, Strength.WEAK, f"「{fitting.hit.word}」 is only the line's predicate")


def _another_day(said: str, line: str) -> str | None:
    """The day a character's line sets where the player named days and none of them (「日曜の午後なら」 against
    「じゃあ土曜の夕方」), else None."""
    day = compiled("later", "day_named")
    named = {_the_day(m.group(0)) for m in day.finditer(nfkc(said))}
    set_by_line = [m.group(0) for m in day.finditer(nfkc(line))]
    return set_by_line[0] if named and set_by_line and not named & {_the_day(d) for d in set_by_line} else None


def _the_day(word: str) -> str:
    """One name for the words of one day (今日 and 今夜 are one day: lexicon later.same_day)."""
    found = compiled("later", "same_day").fullmatch(word)
    return found.lastgroup or word if found is not None else word


def _evidence(fitting, topic: bool, trusted: bool) -> str:
    """What a knowledge line rests on, for the turn's record."""
    kind = ("about the one asked" if fitting.about else "the question's head" if fitting.at_head else
            "the wh-word" if fitting.at_wh else "the topic" if topic else "in what is asked" if trusted else
            "a word of the line")
    return f"「{fitting.hit.word}」: {kind}"


def _predicate(text: str, hit) -> bool:
    """Whether the word the entry shares with the line is a verb or an adjective there, not a thing."""
    tokens = analyse(text).tokens
    at = next((t for t in tokens if t.start <= hit.start < t.end), None)
    # (a phrase the author listed, 「いいって言って」, is what the entry is about, whatever word it starts with)
    return at is not None and hit.end <= at.end and at.pos[:1] in ((TAG.verb,), (TAG.adjective,))


def _sentence_holding(said: list[str], text: str, hit) -> str:
    """The sentence of `said` (the sentences of `text`) that holds the word found at `hit`, else ""."""
    return next((sentence for sentence in said if text.find(sentence) <= hit.start < text.find(sentence) +
                 len(sentence)), "")


def _told_in_passing(text: str, hit) -> bool:
    """Whether the word the entry shares with a statement is one word of a story: a line of two sentences or more
    tells something, and a word it shares with an entry, not its head, is not what it is about — where it lies
    before the sentence the line ends on, or the line ends telling what happened (in the past)."""
    said = sentences(text)
    if len(said) < 2:
        return False
    # (the sentence holding the word asks for something: 「領収書いただけますか。宛名は…でお願いします」 is no story)
    if is_question(_sentence_holding(said, text, hit)):
        return False
    last = text.rfind(said[-1])
    return (last > 0 and hit.start < last) or _told_as_past(said[-1])


def _asked_in(text: str) -> tuple[str, int] | None:
    """The sentence a line of two sentences or more asks in (its last question) and where it starts, else None."""
    said = sentences(text)
    asked = [sentence for sentence in said if is_question(sentence)]
    if len(said) < 2 or not asked:
        return None
    return asked[-1], text.rfind(asked[-1])


def _before_the_question(text: str, hit) -> bool:
    """Whether the word lies in what a line tells before the sentence it asks in (its last question)."""
    asked = _asked_in(text)
    return asked is not None and asked[1] > 0 and hit.end <= asked[1]


def _of_a_place(conv, text: str) -> bool:
    """Whether the line names a property its scenario ties to a place, said of a place (「お店の名前」: the
    intents' own texts say 店の名前 — owners.py)."""
    owned = {nfkc(w) for words in conv.answerer._owned.values() for w in words}
    if not owned:
        return False
    names = [nfkc(n) for place in conv.names.places.values() for n in place.names if n]
    normalised = nfkc(text)
    return any(re.search(f"{re.escape(name)}{_PLACE_OWNER_TAIL}{re.escape(word)}", normalised)
               for name in names for word in owned)


def _asked_alone(d: Deliberation, answer: Answer, why: str) -> Proposal:
    """The answer to the question sentence alone where an entry fits it by a word of its own (and speaks of
    the topic it sets up, if one); else `answer`, a guess."""
    conv, focus = d.conv, d.focus
    found, fitting = conv._knowledge(replace(d.free, intent=None), d.state, _last_question(focus.text), focus,
                                     d.turn, d.variety, only=d.addressed, mem=d.mem)
    if found is not None and fitting is not None and fitting.hit is not None and \
            (focus.topic is None or speaks_of(fitting.entry, focus.topic_words)):
        return Proposal(d.make(found), Strength.FIRM, f"「{fitting.hit.word}」: in the question itself")
    return Proposal(answer, Strength.WEAK, why)


def _intent_words(conv, intent: str | None) -> list[str]:
    found = conv.scenario.intents.get(intent) if intent is not None else None
    return list(found.words) if found is not None else []


def _topic_told_beside(conv, text: str, words: list[str]) -> bool:
    """Whether the words are named in what a line tells beside the sentence it asks in, and not in that one."""
    asked = _asked_in(text)
    if asked is None or not words:
        return False
    rest = text.replace(asked[0], "　")
    return not conv.matcher.hits(TextForms.of(asked[0]), words) and bool(conv.matcher.hits(TextForms.of(rest), words))


def _named_in_the_question(conv, text: str, hit, words: list[str]) -> bool:
    """Whether the sentence holding the word asks too, or a sentence that asks names one of the words or points
    back at what was told (「ネオン、いい色ですね。あれっていつからあるの？」)."""
    said = sentences(text)
    asked = [sentence for sentence in said if is_question(sentence)]
    return _sentence_holding(said, text, hit) in asked or any(conv.matcher.hits(TextForms.of(sentence), words) or _POINTS_BACK.search(sentence)
                                   for sentence in asked)


def _last_question(text: str) -> str:
    asked = [sentence for sentence in sentences(text) if is_question(sentence)]
    return asked[-1] if asked else text


def _after_the_question(text: str, hit) -> bool:
    """Whether the word lies in what a line tells after the sentence it asks in (its last question; what comes
    before it often holds what the question asks of: 「今流れてる歌、いい声ですね。誰ですか？」)."""
    asked = _asked_in(text)
    return asked is not None and asked[1] >= 0 and hit.start >= asked[1] + len(asked[0])


def _told_as_past(sentence: str) -> bool:
    """Whether a sentence ends telling what happened: its last predicate takes the past (た, だ), whatever
    particles or laughter follow it (「…おじさんになってて笑った」「…言うてくれてん」 is not read as past)."""
    said = [t for t in analyse(sentence).tokens if not t.is_mark and not t.is_particle]
    return bool(said) and said[-1].is_past


_ECHO_OPENING = lazyre.compile(r"^(?P<word>[^\s、。！？!?「」]{1,10})[？?]\s*")


def _echoing_the_word_said(answer: Answer, fitting, text: str, matcher) -> Answer:
    """A line that opens by echoing one of its entry's words (「からし？　そこにあるわよ」) takes up the word the
    player said when that is another word of the same entry (「おしぼり」), so it never answers another thing."""
    opening = _ECHO_OPENING.match(answer.text)
    said = text[fitting.hit.start:fitting.hit.end]
    if compiled("shop", "asks_which").search(text):
        return answer      # 「看板猫の名前、なんだったっけ？」「クロ？…」: the opening word is the answer asked for
    if opening is None or opening.group("word") in text or opening.group("word") not in fitting.entry.entry.words or \
            said in answer.text or _predicate(text, fitting.hit):
        return answer
    if not matcher.hits(TextForms.of(said), [fitting.hit.word]):
        return answer      # (the word's place read in another form of the text: echo nothing the player did not say)
    return replace(answer, text=said + answer.text[opening.end("word"):])


def _named_in_what_is_asked(conv, focus, words: list[str]) -> bool:
    """Whether one of the words is in the topic the question sets up."""
    return any(focus.in_topic(hit.start, hit.end) for hit in conv.matcher.hits(TextForms.of(focus.text), words))


def _what_is_asked(focus) -> tuple[str, ...]:
    """The words of the topic a question sets up (「学割は？」); none where it sets up none (its head may be only
    its predicate — 「もったいなくない？」 — and the topic's choice, read from the whole line, stands)."""
    return focus.topic_words if focus.topic is not None else ()
