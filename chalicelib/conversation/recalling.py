"""Recall: a sentence said before brought back with its speaker's lead-in (「言ったでしょ、…」), a line someone
present knows that answers a question, a topic's lines said again, a short follow-up on what was just answered.
A part of the turn logic (`Conversation` in turn.py takes these methods from `Recalling`)."""
from __future__ import annotations

import re
from typing import Any

from .. import lazyre
from ..answers import Answer, Found
from ..dialogue_acts import ACT
from ..interpret.lexicon import compiled
from ..interpret.text import nfkc
from ..scenario import FreeTalk, GameState, PlayerInput
from ..scenario.loader import NEUTRAL
from ..scenario.model import SpokenLine
from ..scenario.variation import knowledge_key, reaction_key, remember
from ..stage.records import ConversationMemory
from ..turn_record import AnswerSource
from .elsewhere import other_places
from .entries import Fitting
from .facts import Facts, Sentence, is_question
from .facts import Found as SentenceFound
from .facts import _analysed as _analysed_keys
from .focus import Focus
from .parts_of_turn import TurnParts
from .undone import is_treat_word
from .variety import PER_GAME, Variety

RECALL_MIN = 3.0          # least evidence for a sentence said before to answer a question (facts.Facts.best)
NEWS_MIN = 4.0            # ... for a line not said yet (news needs more than a shared word)
STATEMENT_MIN = 5.0       # ... for a line not said yet to follow a statement that nothing else answers
NEWS_COVER = 0.4          # ... and the share of the line's own words' weight it must hold: one shared word of
#                           a longer line (勉強 of 「あした経済学のテスト…なんも勉強してない」) is not what it is about
# 「タイトルなんていうの？」: what something is called; a line naming it holds a name in 『』 or 「」
_NAME_ASKED = compiled("acts", "name_asked")
_A_NAME = lazyre.compile(r"『[^』]+』|「[^」]+」")
_FOLLOW_UP = compiled("conversation", "recalling_follow_up")
# Asking for more of what was just said: 「教えてくれないの？」「本当に？」「それで？」「えー、なんで？」.
_FOLLOW_ON = compiled("conversation", "recalling_follow_on")
# Acts that answer what the line does, not a topic guessed from its words.


def _asked_part(focus: Focus, facts: Facts | None = None) -> str:
    """What of the line asks: from its first question on (「じゃあ歳は聞きません。師匠さんに弟子入りしたきっかけは？」
    asks about 弟子入り; 「昔は喫茶店だった？　どうしてスナックに？」 asks both) — the whole line when the question
    names nothing of its own (「勇気がいりました。葵さんはどう思う？」 asks about what was said before it)."""
    asked = _asking_sentences(focus.text)
    if asked != focus.text and facts is not None and not facts.question_keys(asked)[0]:
        return focus.text
    return asked


def _asking_sentences(text: str) -> str:
    """The line from its first sentence that asks on (the whole line when none does)."""
    pieces = re.findall(r"[^。！!？?]+[。！!？?]*", text)
    for i, piece in enumerate(pieces):
        if is_question(piece):
            return "".join(pieces[i:])
    return text


class Recalling(TurnParts):
    """What was said, or is known, brought back to answer the line."""

    def _recall_entry(self, fitting: Fitting, state: GameState, turn: int, variety: Variety,
                      again: str | None = None, head: str | None = None) -> Found | None:
        """An entry's line said before, brought back with its speaker's recall lead-in (`again`: only when
        this question asks what that line told)."""
        key = knowledge_key(fitting.person, fitting.entry.index)
        said = state.variation.get(key, ())
        if not said:
            return None
        index = self._recalled_index(fitting, said, again)
        if variety.times(f"{key}#{index + 1}") >= PER_GAME:
            return None          # said (or recalled) as often as any line may be: not brought back again
        if again is not None and not self.facts.asks_again(
                again, self.facts.of(f"{key}#{index + 1}"), self._told_words(fitting.entry, fitting.about), head=head):
            return None
        line = fitting.entry.entry.lines[index]
        lead = self._recall_lead(fitting.person, state, turn, variety)
        if lead is None:
            return None
        lead_line, ref, variation = lead
        return (fitting.person, lead_line.text.replace("{said}", line.text), lead_line.expression or NEUTRAL,
                AnswerSource.RECALL, ref, variation)

    @staticmethod
    def _recalled_index(fitting: Fitting, said: tuple[int, ...], again: str | None) -> int:
        """Which of an entry's lines said is brought back: the last, or, where the question asks what something is
        called (「タイトルなんていうの？」: acts.name_asked), the last said that names it (in 『』 or 「」)."""
        if again is not None and _NAME_ASKED.search(again):
            lines = fitting.entry.entry.lines
            named = [i for i in said if i < len(lines) and _A_NAME.search(lines[i].text)]
            if named:
                return named[-1]
        return said[-1]

    @staticmethod
    def _told_words(entry, about: bool) -> tuple[str, ...]:
        """The words an entry's line counts as telling besides its own: an entry of facts about a character
        tells what its words ask of them (名前 for 「神楽坂葵。名字、長いでしょ」); a general entry's words are only
        ways in to its subject (映画館 to 葵's favourite films): its line tells what it says, no more."""
        return tuple(entry.entry.words) if about or entry.entry.about else ()

    @staticmethod
    def _recalled_ref(fitting: Fitting, state: GameState) -> str | None:
        said = state.variation.get(knowledge_key(fitting.person, fitting.entry.index), ())
        return f"{knowledge_key(fitting.person, fitting.entry.index)}#{said[-1] + 1}" if said else None

    def _recall_lead(self, person: str, state: GameState, turn: int,
                     variety: Variety) -> tuple[SpokenLine, str, dict] | None:
        """The speaker's recall lead-in (「言ったでしょ、{said}」) for a line said again: its line, its ref and
        the variation it moves; the one said least when the set's mode has none left; None without a set."""
        character = self.scenario.characters[person]
        lines = character.recall.lines if character.recall else []
        if not lines:
            return None
        prefix = f"recall/{person}"
        mode = character.recall.mode if character.recall else "cycle"
        lead = self.answerer.line_set(prefix, mode, lines, state, turn, prefix, variety)
        if lead is None:
            refs = [f"{prefix}#{i + 1}" for i in range(len(lines))]
            chosen = refs.index(variety.least_said(refs) or refs[0])
            lead = (chosen, {prefix: remember(state.variation.get(prefix, ()), chosen, len(lines))})
        index, variation = lead
        return lines[index], f"{prefix}#{index + 1}", variation

    def _recall_topic(self, intent: str, state: GameState, mem: ConversationMemory, turn: int,
                      variety: Variety, speaker: str | None = None, again: str | None = None,
                      head: str | None = None) -> Answer | None:
        """The latest line said of a topic (its knowledge lines, its story lines), brought back."""
        present = set(self.rules.people(state.place))
        said = []
        for ref, turns in mem.said.items():
            line = self.book.get(ref)
            if not turns or line is None or line.speaker not in present:
                continue
            kind = ref.split("/", 1)[0]
            if kind == "knowledge":
                person, index = ref.removeprefix("knowledge/").split("#")[0].split("/")
                entry = next((e for e in self.answerer.entries_of(person) if e.index == int(index)), None)
                if entry is None or intent not in entry.intents:
                    continue
            elif kind == "line":
                scripted = self.scenario.lines.get(ref.removeprefix("line/"))
                if scripted is None or PlayerInput.intent(intent) not in scripted.condition.inputs:
                    continue
            else:
                continue
            said.append((turns[-1], ref, line))
        if not said:
            return None
        own = [s for s in said if s[2].speaker == speaker]
        _, ref, line = max(own or said)
        if variety.times(ref) >= PER_GAME:
            return None          # said (or recalled) as often as any line may be
        if again is not None and not self.facts.asks_again(again, self.facts.of(ref), head=head):
            return None          # the question asks something else of the topic than what was said
        if line.speaker is None:
            return None
        lead = self._recall_lead(line.speaker, state, turn, variety)
        if lead is None:
            return None
        lead_line, lead_ref, variation = lead
        sentence = max(self.facts.of(ref), key=lambda s: sum(self.facts.idf(k) for k in s.keys), default=None)
        said_text = line.text if len(line.text) <= 40 or sentence is None else sentence.text
        return Answer(line.speaker, lead_line.text.replace("{said}", said_text), lead_line.expression or NEUTRAL,
                      AnswerSource.RECALL, lead_ref, ACT.question, variation, refs=(lead_ref,), detail={"recalled": ref})

    def _follow_up_entry(self, text: str, state: GameState, mem: ConversationMemory, turn: int, variety: Variety,
                         speaker: str, pointer: bool = False) -> Answer | None:
        """The knowledge entry answered on the last turn, for a short follow-up that names nothing else: its
        next line, else that line again with a recall lead-in.  `pointer`: the line points at it (それって…？)."""
        normalised = nfkc(text).strip()
        if len(normalised) > 24 or not (pointer or _FOLLOW_ON.search(normalised) or
                                        (is_question(normalised) and _FOLLOW_UP.search(normalised))):
            return None
        if self.answerer.act(text).act in (ACT.greeting, ACT.thanks, ACT.insult, ACT.order, ACT.apology, ACT.praise):
            return None
        last = [ref for ref, turns in mem.said.items() if turns and turns[-1] == state.turn and ref.startswith("knowledge/")]
        if len(last) != 1:
            return None
        person, index = last[0].removeprefix("knowledge/").split("#")[0].split("/")
        entry = next((e for e in self.answerer.entries_of(person) if e.index == int(index)), None)
        if entry is None or person not in self.rules.people(state.place):
            return None
        if self.answerer.named_present(text, state.place) not in (None, person):
            return None          # 「葵さんはどう思う？」 after ママ answered asks 葵, not for more of ママ's
        fitting = Fitting(person, entry, 0.0, None, False, False)
        found = self.answerer.knowledge_line(person, entry, state, turn, variety)
        if found is None:
            found = self._recall_entry(fitting, state, turn, variety)
            if found is not None and (recalled := self._recalled_ref(fitting, state)) is not None:
                return self.answerer.make(found, ACT.question, detail={"recalled": recalled})
        return self.answerer.make(found, ACT.question) if found is not None else None

    def _recall(self, text: str, state: GameState, free: FreeTalk, mem: ConversationMemory, turn: int,
                variety: Variety, context: dict[str, Any], against: str | None = None, only: bool = False,
                statement: bool = False, head: str | None = None, said_only: bool = False) -> Answer | None:
        """A sentence said before, or a line someone present knows, that answers the question; None when
        nothing does (or, with `against`, the knowledge line the topic would give, not clearly better).
        `only`: the addressed character's sentences only; `statement`: the line says rather than asks, so
        only a line not said yet that shares more with it follows; `said_only`: sentences said before only."""
        present = [free.speaker] if only else list(self.rules.people(state.place))
        said_refs = set(mem.said) | {f"line/{i}" for i in state.shown_lines}
        said, known = self._recall_pool(present, said_refs, mem, state, variety, said_only)
        # (what the line asks is in the sentence that asks: 「じゃあ歳は聞きません。弟子入りのきっかけは？」)
        read = self.focus_reader.read(text)
        pools = [(said, known)]
        if read.topic is not None and not statement:
            # a question set up about a thing (「その指輪って、結婚式のときの？」) is answered first from lines that
            # name it (「ナポリタンって喫茶の頃からあるんだ？」: 名物はナポリタン…喫茶のころからの味); where no line
            # of the game names it, never from one that only shares another of its words (the wedding bouquet)
            naming = {s.ref for s in (*said, *known) if _names(s, read.topic_words)}
            if not naming:
                context["recall"] = {"off_topic": ", ".join(read.topic_words)}
                return None
            pools.insert(0, ([s for s in said if s.ref in naming], [s for s in known if s.ref in naming]))
        asked = text if statement else _asked_part(read, self.facts)
        prefer = free.speaker if free.speaker != self.rules.responder(state.place) else None
        topic = frozenset(self._topic_refs(free.intent, present, state))
        for pool_said, pool_known in pools:
            found = self.facts.best(asked, [] if statement else pool_said, pool_known, prefer=prefer, topic=topic)
            if self._recall_fits(found, read, asked, statement, head, variety, context) and found is not None and \
                    self._better_than(found, asked, against) and not self._just_said(found, mem, turn):
                break
        else:
            return None
        assert found is not None
        sentence = found.sentence
        context["recall"] = {"ref": sentence.ref, "score": round(found.score, 2), "said": found.said,
                             "sentence": sentence.text}
        if not found.said:
            news = self._say_ref(sentence.ref, state, turn)
            if news is not None:
                return news
        return self._recalled_answer(sentence, sentence.speaker or free.speaker, state, turn, variety)

    def _better_than(self, found: SentenceFound, asked: str, against: str | None) -> bool:
        """Whether a sentence found fits clearly better than `against`, the knowledge line the topic would give:
        the topic's own next line answers as well otherwise (and a sentence said before must fit better still:
        news before a repeat)."""
        if against is None:
            return True
        own = max((self.facts.score(asked, s) for s in self.facts.spoken("knowledge", None, against)),
                  default=0.0) + 1.0
        return found.score >= own + (2.0 if found.said else 1.0)

    @staticmethod
    def _just_said(found: SentenceFound, mem: ConversationMemory, turn: int) -> bool:
        """Said on the last turn: the player is asking for more, not for the same again."""
        return found.said and not found.counted and max(mem.said.get(found.sentence.ref, [-1])) >= turn - 1

    def _recall_pool(self, present: list[str], said_refs: set[str], mem: ConversationMemory, state: GameState,
                     variety: Variety, said_only: bool) -> tuple[list[Sentence], list[Sentence]]:
        """(sentences said before by someone present, sentences someone present knows and has not told)."""
        said: list[Sentence] = []
        for ref in said_refs:
            if not variety.kept_from_present(ref):
                said.extend(s for s in self.facts.of(ref) if s.speaker in present)
        for spoken in mem.spoken:
            if spoken.speaker in present:
                said.extend(self.facts.spoken("model", spoken.speaker, spoken.text))
        known: list[Sentence] = []
        for person in ([] if said_only else present):
            for ref in self._known_refs(person, state):
                if ref not in said_refs and variety.fresh(ref):     # not told already, not kept from someone here
                    known.extend(self.facts.of(ref))
        return said, known

    def _recall_fits(self, found: SentenceFound | None, read: Focus, asked: str, statement: bool, head: str | None,
                     variety: Variety, context: dict[str, Any]) -> bool:
        """Whether the best sentence found answers the line well enough to be said (why not, in the record)."""
        least = STATEMENT_MIN if statement else RECALL_MIN if found is not None and found.said else NEWS_MIN
        if found is not None and statement and head and not self._names_head(found.sentence, head):
            found = None        # a statement goes on about its head (釣り), not about a word said aside (休み)
        if found is not None and (elsewhere := other_places(read.text, self.entries.own_places)) and \
                not any(place in found.sentence.text for place in elsewhere):
            found = None        # 「この辺に和菓子屋ある？」 asks of another place, not of this street's old days
        if found is None or found.score < least:
            if found is not None and not statement:
                context["recall"] = {"below": round(found.score, 2), "ref": found.sentence.ref}
            return False
        if not found.said and not found.counted and found.cover < NEWS_COVER:
            context["recall"] = {"thin": found.sentence.ref, "cover": round(found.cover, 2)}
            return False
        if found.said and variety.times(found.sentence.ref) >= PER_GAME:
            context["recall"] = {"said_enough": found.sentence.ref}
            return False        # said (or recalled) as often as any line may be: not brought back again
        if found.said and not self.facts.asks_again(asked, self.facts.of(found.sentence.ref), head=read.head_word):
            # a sentence said before answers only a question that asks what it told, not more of its topic
            context["recall"] = {"not_again": found.sentence.ref}
            return False
        return True

    def _recalled_answer(self, sentence: Sentence, speaker: str, state: GameState, turn: int,
                         variety: Variety) -> Answer:
        """A sentence said before, said again with its speaker's lead-in (「言ったでしょ、…」) when one is authored."""
        said_lead = self._recall_lead(speaker, state, turn, variety)
        if said_lead is not None:
            lead, lead_ref, variation = said_lead
            line = lead.text.replace("{said}", sentence.text)
            expression = lead.expression or NEUTRAL
            refs: tuple[str, ...] = (lead_ref,)
        else:
            book_line = self.book.get(sentence.ref)
            line, expression, variation, refs = sentence.text, book_line.expression if book_line else NEUTRAL, {}, ()
        return Answer(speaker, line, expression, AnswerSource.RECALL, refs[0] if refs else sentence.ref, ACT.question, variation,
                      refs=refs, detail={"recalled": sentence.ref})

    def _names_head(self, sentence: Sentence, head: str) -> bool:
        keys, _, _ = _analysed_keys(head)
        return bool(keys & sentence.keys) or head in sentence.text

    def _topic_refs(self, intent: str | None, present: list[str], state: GameState) -> list[str]:
        if intent is None:
            return []
        refs = []
        for person in present:
            for entry in self.answerer.entries_of(person):
                if intent in entry.intents:
                    refs += [f"knowledge/{person}/{entry.index}#{n}" for n in range(1, len(entry.entry.lines) + 1)]
        return refs

    def _known_refs(self, person: str, state: GameState) -> list[str]:
        refs = []
        shown = state.shown
        for entry in self.answerer.entries_of(person):
            if not entry.condition.holds_for_intent(shown):
                continue    # (未:B01 too: 「控え室に来てみる？」 is no news once the player is there)
            if entry.entry.choice is not None or any(is_treat_word(w) for w in entry.entry.words):
                continue    # an option settles a choice, an entry on a treat takes one: said only when the line picks
                #             it (choices.py) or treats, never as news sharing a word (「…カウンターの写真。それで決まりで
                #             いい？」 is no 「ドアのほうね。決まり！」, 「道理で遠慮がねえわけだ」 no 「じゃあ遠慮なく」)
            refs += [f"knowledge/{person}/{entry.index}#{n}" for n in range(1, len(entry.entry.lines) + 1)]
        reaction = self.scenario.reactions.get(person, {}).get(ACT.about_self)
        if reaction is not None:
            refs += [f"reaction/{person}/{ACT.about_self}#{n}" for n in range(1, len(reaction.lines) + 1)]
        chatter = self.scenario.characters[person].chatter
        if chatter is not None:
            refs += [f"chatter/{person}#{n}" for n in range(1, len(chatter.lines) + 1)]
        return refs

    def _say_ref(self, ref: str, state: GameState, turn: int) -> Answer | None:
        """An unsaid line named by its reference, said now (its set's history updated)."""
        line = self.book.get(ref)
        if line is None or line.speaker is None:
            return None
        base, _, n = ref.rpartition("#")
        index = int(n) - 1
        kind = ref.split("/", 1)[0]
        said_act = ACT.question
        if kind == "knowledge":
            _, person, entry = base.split("/")
            key = knowledge_key(person, int(entry))
            source = AnswerSource.KNOWLEDGE
            count = len(self.scenario.characters[person].knowledge[int(entry)].lines)
        elif kind == "reaction":
            _, person, act = base.split("/")
            key, source = reaction_key(person, act), AnswerSource.REACTION
            count = len(self.scenario.reactions[person][act].lines)
            said_act = act
        elif kind == "chatter":
            key, source = base, AnswerSource.CHATTER
            chatter = self.scenario.characters[line.speaker].chatter
            count = len(chatter.lines) if chatter else 1
        else:
            return None
        variation = {key: remember(state.variation.get(key, ()), index, count)}
        return Answer(line.speaker, line.text, line.expression, source, ref, said_act, variation,
                      refs=(ref,), detail={"recalled": ref})


def _names(sentence: Sentence, words: tuple[str, ...]) -> bool:
    """Whether a sentence names one of `words`, as written or as the analyser's forms of its words."""
    return bool(sentence.keys.intersection(words)) or any(word in sentence.text for word in words)
