"""Dialogue acts: what a free player line *does* (greets, thanks, insults, orders…).

When no scripted line, knowledge line or model answers, a character still
reacts in their own voice to what the player did (scenario `reactions`).  The
recogniser is model-free like the lexical classifier: the text is normalised
(`text.nfkc`, pasted prompt lines and quoted phrases set aside by the cue
helpers) and each act has a few cue patterns.  Acts are tried in a fixed
order, the more specific and the more socially urgent first: an insult or an
apology must not be answered as a question.  `butai eval-acts` measures it
on `scenarios/eval/acts.json`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .. import lazyre
from ..dialogue_acts import ACT
from ..scenario.inputs import NONE_WORD
from .asking import is_question, offers_two_answers, sentence_start, wonders
from .cues import SceneNames, player_words, without_quoted_phrases
from .lexicon import compiled, pattern, recognition, word_class
from .money import asks_to_pay, money, without_put_off
from .text import nfkc

NO_ACT = NONE_WORD          # no act: the written form's none (なし), as an input's
CALL_ONLY = "呼びかけ"     # the cue of a line that only calls someone (「ママ？」): no act


def _p(name: str) -> re.Pattern[str]:
    return compiled("acts", name)


_TRAILING = _p("trailing")
_SAD = _p("sad")
_SAD_NOT = _p("sad_not")
_OWN_LIFE = _p("own_life")
_SUBJECT = _p("subject")
_ABOUT_SELF_TOPIC = pattern("acts", "about_self_topic")
_ABOUT_SELF_ASK = pattern("acts", "about_self_ask")
_YOU = f"(?:{pattern('acts', 'you')})"

Pattern = re.Pattern[str]


# A question said after a word of praise in the same line (its own sentence with a question mark).
_ASKS_AFTER = lazyre.compile(r"[？?]")
_BETWEEN = lazyre.compile(r"[。、,！!…]")
# A cue the player quotes or reports (its word followed by って, と言う…) is not what the line does.
_QUOTED = _p("quoted_cue")
_ASKED = _p("asked_cue")
# The acts whose cue is something said (「そうかな」「ありがとう」), which って after it quotes; a noun's って marks a
# topic (「お会計って、今日してもいいですか？」).
_SAID_CUES = (ACT.disagree, ACT.agree, ACT.thanks, ACT.praise, ACT.apology, ACT.greeting)
# The acts a question later in the line takes over: what the player asks is what wants an answer.
_TAKEN_UP_BY_A_QUESTION = (ACT.praise, ACT.thanks, ACT.disagree)

@dataclass(frozen=True)

class ActFound:
    act: str                 # one of ACTS, or なし
    cue: str | None = None   # the text that decided it (for the debug view)
    paying: bool = False     # an 注文 that asks for the bill (answered by a 会計 reaction where there is one)

    def to_dict(self) -> dict:
        return {"act": self.act, "cue": self.cue, **({"paying": True} if self.paying else {})}


class ActRecogniser:
    """``recognise(text)`` → the dialogue act of one player line.  Character
    names and aliases (from the scenario) count as "you" for 本人."""

    def __init__(self, names: SceneNames | None = None) -> None:
        self.names = names or SceneNames()
        people = sorted({nfkc(n) for aliases in self.names.characters.values() for n in aliases if n}, key=len,
                        reverse=True)
        you = "|".join([*(re.escape(p) for p in people), _YOU])
        honorific = f"(?:{word_class('honorifics').alternation})"
        self._about_self = re.compile("|".join((
            rf"(?:{you})\s*{honorific}?\s*(?:{pattern('acts', 'topic_particle')})[^。]*{_ABOUT_SELF_TOPIC}",
            rf"{_ABOUT_SELF_TOPIC}[^。]*{_ABOUT_SELF_ASK}",
            rf"(?:{you})\s*{honorific}?\s*(?:{pattern('acts', 'self_words')})[^。]*{_ABOUT_SELF_ASK}")))
        self._named_self = re.compile(r"(?:" + you + r")")
        self._people = frozenset(people)
        # What orders (注文): paying, another of the same, asking to order, or a thing named and asked for — the
        # generic drinks and the scenario's own menu (「ラーメンください」 where the menu has ラーメン).
        things = "|".join([pattern("acts", "drink"), *(re.escape(nfkc(w)) for w in sorted(self.names.items, key=len,
                                                                                        reverse=True))])
        order = re.compile("|".join((pattern("money", "paying_cue"), pattern("acts", "order_more"),
                                     f"(?:{things}){pattern('acts', 'order_suffix')}", pattern("acts", "order_request"))))
        recognisers = {"order": order, "about_self": self._about_self}
        # The acts in the order the lexicon tries them (an insult or an apology must not be answered as a
        # question), each by its pattern or a recogniser built here.
        self._order: list[tuple[str, Pattern]] = [
            (ACT.keys[step["act"]], recognisers[step["recogniser"]] if "recogniser" in step else _p(step["pattern"]))
            for step in recognition()]
        # (「俺は赤いドアのままがいいと思う」 is an opinion, 「俺も好きだ」 agreement: the player's own life only
        # when nothing else is said)
        # A line that only calls someone (「ママ？」「ねえ、葵ちゃん！」) asks nothing yet: the one called answers
        # as to any opening, not as to a question they cannot place.
        self._call_only = re.compile(rf"^(?:(?:{pattern('acts', 'call_word')}|{you})"
                                     rf"\s*{honorific}?{pattern('interpretation', 'call_only_mark')}*)+$")

    def recognise(self, text: str) -> ActFound:
        normalised = without_quoted_phrases(player_words(nfkc(text)), self.names).strip()
        # (「だよねって、やるの？」: the character's words quoted back are not the player's agreement)
        normalised = _p("quoted_back").sub("", normalised, count=1) or normalised
        alternative = offers_two_answers(normalised)
        stripped = _TRAILING.sub("", normalised) if not normalised.endswith(("?", "？")) else normalised
        if self._call_only.match(stripped):
            return ActFound(NO_ACT, CALL_ONLY)
        sad = _SAD.search(stripped)
        if sad and not _SAD_NOT.search(stripped) and not is_question(stripped) and not _p("insult").search(stripped):
            return ActFound(ACT.sad_news, sad.group(0))     # before praise or agreement: 「だよね！」 never answers grief
        for act, cues in self._order:
            # (a paying word taken back, 「お勘定ちゃうで、もう一杯」, orders only by what is left)
            found = cues.search(without_put_off(stripped) if act == ACT.order else stripped)
            if found and act == ACT.about_self and not self._named_self.search(stripped) and \
                    self._asks_of_other(stripped):
                continue      # 「クロちゃんは何歳まで生きたの？」「このお店の名前の由来は？」: not the character's own
            if found and act == ACT.about_self and not is_question(stripped) and not wonders(stripped):
                continue      # 「お前さんが生まれる前の話だけどよ」: told of them, nothing asked
            if found and alternative and act in (ACT.agree, ACT.disagree, ACT.praise):
                continue      # 「やるの？やらないの？」: a question offering two answers agrees to neither
            if found and act == ACT.agree and _ASKS_AFTER.search(stripped, found.end()) and \
                    re.search(r"[。、,！!]", stripped[found.end():found.end() + 12]):
                continue      # 「なるほど、色は二つくらいに。では…はどうですか？」: taken in, then asked — a question
            if found and act == ACT.agree and found.start() > sentence_start(stripped, found.start()) and \
                    stripped[found.end():].lstrip()[:1] in ("?", "？"):
                continue      # 「配達、本当に7時前で大丈夫ですよね？」: asks to be told so, agrees to nothing said
            if found and act in _TAKEN_UP_BY_A_QUESTION and self._asks_after(stripped, found.end()):
                continue      # 「ふう、うまい。ママ、この辺って夜は治安どうなんです？」「ありがとうございます。あの、配達、
                #               本当に7時前で大丈夫ですよね？」: a question after the praise or thanks asks
            if found and act in _SAID_CUES and _QUOTED.match(normalised, found.end()):
                continue      # 「そうかなあって、俺の話だよ」「どうだろうって…！」: the word quoted, not said to them
            if found and act in _SAID_CUES and _ASKED.match(normalised, found.end()):
                continue      # 「ママはどうなの？ 反対なのかい」: asked about, not done
            if found:
                # (a thanks or a greeting first, 「ありがとうございます！…あ、もうこんな時間。…お会計お願いできますか？」,
                # still asks for the bill)
                # (a receipt asked for, 「で、領収書なんですけど」, is the receipt's matter: what is known of receipts
                # answers, and the bill only where it is asked for too)
                paying = (act == ACT.order or act in ACT.group("courtesy") | ACT.group("opening")) and \
                    asks_to_pay(money("receipt").sub("", stripped))
                return ActFound(act, found.group(0).strip() or act, paying)
        # (what asks is read in asking.py; 「明日雨降るかな」 wonders to the listener, 「…古い建物を撮るのが多いかな」
        # after the player told of themselves muses)
        wondering = wonders(stripped)
        if is_question(stripped) or wondering == "leave" or (wondering and not _OWN_LIFE.search(stripped)):
            return ActFound(ACT.question, ACT.question)
        own = _OWN_LIFE.search(stripped)
        if own and not is_question(stripped) and not _p("opinion").search(stripped):
            return ActFound(ACT.own_life, own.group(0).strip(" 、,。") or ACT.own_life)
        return ActFound(NO_ACT)

    @staticmethod
    def _asks_after(text: str, end: int) -> bool:
        """Whether a sentence after the cue asks (a question mark, or a sentence ending on かな that wonders:
        「うーん、じゃあ、土曜日にもう一回来たほうがいいのかな…」)."""
        rest = text[end:]
        mark = _ASKS_AFTER.search(rest)
        if mark is not None:
            return bool(_BETWEEN.search(rest, 0, mark.start()))    # (「そうかな？」 asks nothing more)
        return bool(rest.strip(" 、,。!！…")) and wonders(rest) is not None

    def _asks_of_other(self, text: str) -> bool:
        """Whether a personal topic asked without a name (何歳, いつから, 名前の由来) is asked of someone or something
        the line names first (クロちゃんは, 先代は, このお店の), not of the one spoken to."""
        subject = _SUBJECT.search(text)
        if subject is None:
            return False
        noun = subject.group(1)
        return noun not in self._people and not re.match(_YOU, noun) and \
            not re.match(_ABOUT_SELF_TOPIC, text[subject.start(1):])

    @property
    def acts(self) -> Iterable[str]:
        return ACT.all
