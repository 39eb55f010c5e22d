"""One turn of a conversation that listens: the director's turn logic, pure and model-free.

``Conversation.play(text, state, memory)`` reads the player's line against what was said (the
conversation memory: lines said, the open question, a recent invitation, an open clarification, orders),
decides what kind of turn it is, lets the rules play it, and answers:

1. after an ending nothing is played (and nothing is announced again);
2. a destination button is that move;
3. an open clarification is settled by this line when it names one of the options;
4. otherwise the interpreter reads the line (with the open question and a recent invitation, so 「もちろん、
   また来るよ」 answers 「また来てくれるんでしょ？」 and 「やっぱ行く」 accepts an invitation);
5. an order of a menu item (orders.py) is served: the rules play なし (the story goes on), the server
   acknowledges it and any flag is set;
6. two topics alike, or a known ambiguous word: the character asks which one (clarify.py); the rules do
   not play this turn;
7. the rules (`GameRules.handle`), then, when they ask for free conversation: a model if the caller gives
   one (``speak``), else — or when it fails — the authored answer, most specific first: a reply to the
   character's open question (questions.py), a knowledge line, a sentence said before or known (facts.py),
   the answer to a question or request of a known form (may I…?, shall I…?: forms.py), a reaction,
   something the character brings up (chatter), a fallback — none said again within the
   window of turns unless nothing else fits (variety.py).

The new memory (and the game state with the answer's variation, face and flags) is returned for the
turn's one conditional write; nothing here does I/O.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, cast

from ..answers import Answer, Found, asks_the_player, said_again
from ..dialogue_acts import ACT
from ..interpret.acts import CALL_ONLY, NO_ACT
from ..interpret.belonging import read_own
from ..interpret.counts import of_the_last
from ..interpret.cues import come_again_among_talk, invited_place, said_in_passing, unstretched
from ..interpret.dialect import standard
from ..interpret.interpreter import TurnResult
from ..interpret.ja import analyse
from ..interpret.ja.tokens import AUXILIARY, TAG
from ..interpret.lexicon import compiled, word_class
from ..interpret.money import change_asked, money, without_put_off
from ..interpret.negated import declined_after
from ..interpret.options import InterpretChoices, Recent
from ..interpret.owners import said_of_thing
from ..interpret.spelling import neutral
from ..interpret.text import KANA_RUN, TextForms, is_kanji, nfkc, without_asides
from ..scenario import FreeTalk, GameState, PlayerInput, Step
from ..scenario.conditions import FlagEffect, faces_set
from ..scenario.inputs import NONE
from ..scenario.loader import NEUTRAL
from ..scenario.variation import knowledge_key, remember
from ..stage.records import AskedQuestion, ConversationMemory, OpenClarification, SpokenText
from ..turn_record import AnswerSource, InterpretationRecord
from .answering import Deliberation, arbitrate
from .bill import asks_if_paid, cancels, disputes
from .book import fired_ref
from .choices import changes_to
from .clarify import DEFAULT_LINE, Options
from .confirm import confirmed_phrase, kanji_number
from .elsewhere import other_places
from .entries import Fitting
from .facts import _analysed as _analysed_keys
from .facts import is_question, sentences
from .focus import Focus, parts
from .forms import FormFound, form_answer, only_asks_view, read_form
from .mention import asked_about, only_mentioned
from .orders import (
    FALLBACK,
    OrderFound,
    already_ordered,
    asks_after_order,
    asks_firmly,
    asks_if_possible,
    only_asks_price,
    style_of,
)
from .own import told_again
from .picks import chooses, open_choices, options_asked, picked
from .policies import ORDER as POLICIES
from .questions import asks, offered_in, only_asks_back, polarity, proposes_change, question_kind
from .recalling import _FOLLOW_UP, Recalling, _asked_part
from .serving import _BILL, _MORE_IN_WORDS, _PRICE, Serving
from .stitch import kept, named_in, part_addressee
from .variety import Variety, remember_said

_QUOTED_BACK = compiled("acts", "quoted_back")
_MUSING = compiled("acts", "musing")
_POINTS_BACK = compiled("acts", "points_back")
# A sentence that only names things, ending on で or も (「ひまわりとかすみ草で。」).
_BARE_ITEMS = compiled("shop", "items_alone")
INVITATION_TURNS = 3      # an invitation can still be taken up this many turns later
QUESTION_TURNS = 3        # a question can still be answered (by a clear yes or no) this many turns later
SPOKEN_KEPT = 6           # model lines kept for recall
OPTIONS_TURNS = 3         # a "which one?" still open this many turns after it was asked (while its choice is)
VAGUE_TURNS = 8           # 「あれ、どうなった？」 points at a topic of this many turns back at most
DEFER = object()          # an entry's answer was said already: leave it to the recall
# A bare question to someone, 「颯太くんは？」 (a name and a topic particle alone): a lead-in to the question after it.
_BARE_CALL = compiled("conversation", "turn_bare_call")
_JOINING_LEAD = compiled("conversation", "turn_joining_lead")
_DOING_VERB = compiled("conversation", "turn_doing_verb")
_TO_PARTICLE = compiled("conversation", "turn_to_particle")
_OBJECT_PARTICLE = compiled("conversation", "turn_object_particle")

Speak = Callable[[Step, str | None], Any]      # (step, addressee) -> the model's TalkResult
# A follow-up that carries the last topic on: an opinion asked for, a why, a "tell me more", a short question
# about what was just said (「直さないの？」「変えないの？」).
_SOCIAL_ACTS = ACT.group("social")
# Kinds of lines that answer the player in free conversation (whose speaker the player is talking with).
_ANSWER_KINDS = frozenset({"knowledge", "reaction", "recall", "echo", "unsure", "form", "menu"})
# What the price of a thing is asked with; the bill (without a thing named).
# Words too general to take up (「感じ」「人」 say nothing to answer about).


def not_echoed(word: str) -> bool:
    """Whether a word is none to take up as what the player talked about (lexicon not_echoed: 人, こと, 辺 …,
    as written or as the analyser normalises it — ひと, へん), or a fragment of kana the analyser does not know
    (べっ of べっぷか, かあ of おかあさん: a line cut wrongly, not a word said)."""
    entries = _not_echoed()
    if word in entries:
        return True
    tokens = analyse(word).tokens
    if len(tokens) == 1 and (tokens[0].normalised in entries or tokens[0].lemma in entries):
        return True
    return all(KANA_RUN.fullmatch(t.surface) for t in tokens) and (any(t.oov for t in tokens) or len(tokens) > 1)


@cache
def _not_echoed() -> frozenset[str]:
    return frozenset(word_class("not_echoed").entries)




def _with_prefix(text: str, word: str) -> str:
    """The word as said with the prefix written right before it (新 of 新幹線, 幹線 alone in the analyser's
    reading): what the player said, never a piece of it."""
    tokens = analyse(text).tokens
    for before, token in zip(tokens, tokens[1:]):
        if token.surface == word and before.is_prefix and before.end == token.start:
            return before.surface + word
    return word


def _said_as_state(text: str, word: str) -> bool:
    """Whether `word` is a noun said as a state with だ or です after it (「お腹いっぱいです」)."""
    tokens = analyse(text).tokens
    return any(t.surface == word and t.may_describe and i + 1 < len(tokens) and tokens[i + 1].kind == AUXILIARY
               for i, t in enumerate(tokens))


def _in_any(text: str, at: int, said: list[str]) -> bool:
    """Whether position `at` of `text` lies in one of the sentences `said` (sentences of `text`)."""
    return any(0 <= (start := text.find(sentence)) <= at < start + len(sentence) for sentence in said)


def _declined(text: str, word: str) -> bool:
    """Whether `word` is declined right where the line says it (「花束はいらない」, lexicon undone.declined_thing)."""
    at = text.find(word)
    return at >= 0 and declined_after(text, at + len(word))


def _cut_from_kana(text: str, word: str) -> bool:
    """Whether a word in kana is a piece the analyser cut from a run of kana it does not know through (the べっ
    of 「べっぷか いいな」: a word of the run is unknown to its dictionary), the stem of a word made with a
    prefix or a suffix (the かあ of おかあさん), or a noun glued to a verb's ending (the がん of 「変えたがんだよ」,
    said for 変えたがるんだよ)."""
    if not KANA_RUN.fullmatch(word):
        return False
    for run in KANA_RUN.finditer(text):
        if word in run.group(0):
            tokens = [t for t in analyse(text).tokens if run.start() <= t.start and t.end <= run.end()]
            if any(t.oov for t in tokens):
                return True
            for i, token in enumerate(tokens):
                if token.surface == word and ((i > 0 and (tokens[i - 1].is_prefix or tokens[i - 1].kind == AUXILIARY) and
                                               tokens[i - 1].end == token.start) or
                                              (i + 1 < len(tokens) and tokens[i + 1].pos[:1] == (TAG.suffix,))):
                    return True
    return False
# Dialogue acts a reply to a question can have (the rest do something else: greet, thank, order, insult).
_ANSWERING_ACTS = ACT.group("answering") | {NO_ACT}


@dataclass(frozen=True)
class Reading:
    text: str                 # what is read as the turn's line
    side: str | None          # a first part answered apart (an order, a toast, a yes), if any
    taken_back: str           # what the line took back (「店の名前じゃなくて」), "" when nothing
    called: str | None        # a character called at the head of the line
    side_after: bool = False  # the part answered apart came after the part read (「葵ちゃんも飲む？一杯おごるよ」)


@dataclass(frozen=True)
class Situation:
    """Where the conversation stands when a line comes: the question still open, a recent invitation, and the
    last line and its speaker as the interpreter reads them."""
    question: AskedQuestion | None
    invitation: AskedQuestion | None
    recent: Recent


@dataclass
class LineRead:
    """The line as the turn plays it: the text read (and what an answer is read against), the input, who is
    spoken to, how it was read, and what the conversation made of it (an order, a clarification to ask)."""
    text: str
    answer_text: str
    chosen: PlayerInput
    addressee: str | None
    interpretation: InterpretationRecord
    result: TurnResult | None = None
    reading: Reading | None = None
    named_now: bool = False
    order: OrderFound | None = None
    options: Options | None = None


@dataclass
class PlayedTurn:
    step: Step                          # the rules' step; its state holds the answer's variation, face, flags
    input: PlayerInput                  # what the rules played (なし for an order; the option for a clarification)
    addressee: str | None
    interpretation: InterpretationRecord   # the interpreter's record (or the rule that replaced it)
    result: TurnResult | None
    answer: Answer | None               # the authored answer said before the step's lines, if any
    model: Any = None                   # what `speak` returned (the director's TalkResult), if called
    memory: ConversationMemory = field(default_factory=ConversationMemory)
    context: dict[str, Any] = field(default_factory=dict)   # what this layer decided (for the debug record)
    errors: list[str] = field(default_factory=list)
    clarified: bool = False             # the character asked which topic (the rules did not play)
    before: list[Answer] = field(default_factory=list)   # answers to a first part, by someone else, said first

    @property
    def kind(self) -> AnswerSource | None:
        """How the turn was answered (the model, or which authored kind); None when only scripted lines
        answered."""
        if self.model is not None and getattr(self.model, "source", None) == AnswerSource.MODEL:
            return AnswerSource.MODEL
        return self.answer.source if self.answer is not None else None


class Conversation(Recalling, Serving):
    # ------------------------------------------------------------------ the turn

    def play(self, text: str, state: GameState, memory: ConversationMemory | None = None, *,
             to: str | None = None, move: str | None = None, speak: Speak | None = None,
             given: PlayerInput | None = None) -> PlayedTurn:
        """One turn: the line read once (`_read`), the rules' step, the answer (`_answer`: the model when one
        speaks, else the authored answer's policies and arbiter), applied and remembered.  `given`: an input
        already decided (a written input such as なし or 意図:音楽 in a trace), played without reading the text."""
        mem = (memory or ConversationMemory()).model_copy(deep=True)
        turn = state.turn + 1
        context: dict[str, Any] = {}
        errors: list[str] = []
        to = to if to in self.scenario.characters else None
        if state.ended:
            # The visit is over: nothing is played and the ending is not announced again.
            step = Step(NONE, (), None, (), state.passed())
            return PlayedTurn(step, NONE, None, InterpretationRecord(text=text, rule="ended"), None, None,
                              memory=mem, context={"ended": True})
        talk = self._situation(state, mem)
        line = self._read(text, state, mem, talk, to, move, given, context, errors, turn)
        if line.options is not None:
            return self._ask_which(line.text, state, mem, line.addressee, line.options, line.result,
                                   line.interpretation, turn, context)
        step, answer, model, before = self._answer(line, state, mem, talk, to, speak, context, turn)
        if line.chosen.is_intent:
            mem.topics[str(line.chosen)] = turn
        if not move and given is None:
            mem.player_last = line.text[:200]
        self._remember(mem, step, answer, model, turn, state, before)
        return PlayedTurn(step, line.chosen, line.addressee, line.interpretation, line.result, answer, model, mem,
                          context, errors, before=before)

    def _situation(self, state: GameState, mem: ConversationMemory) -> Situation:
        """Where the conversation stands: the question still open, a recent invitation, what was said last."""
        if mem.last is None and state.last_line is not None and state.last_line in self.scenario.lines:
            # a memory that has not seen the game's start (or an older stage): its last scripted line
            line = self.scenario.lines[state.last_line]
            mem.last = SpokenText(turn=state.turn, speaker=line.speaker, text=line.text)
            mem.question = self._question(mem.last, f"line/{line.id}", state, state.turn)
        # the last question a character asked stays open a few turns (lines in between may be about
        # something else: 「ただいま」「内緒です」), unless a newer one replaced it; after the next turn only a
        # clear yes or no still answers it (see the reply policy)
        question = mem.question if mem.question is not None and \
            mem.question.turn >= state.turn - (self._lifetime(mem.question) - 1) else None
        invitation = mem.invitation if mem.invitation is not None and \
            state.turn - mem.invitation.turn < INVITATION_TURNS and \
            mem.invitation.place in self.rules.exits(state.place) else None
        return Situation(question, invitation, self._recent(state, mem, question, invitation))

    def _read(self, text: str, state: GameState, mem: ConversationMemory, talk: Situation, to: str | None,
              move: str | None, given: PlayerInput | None, context: dict[str, Any], errors: list[str],
              turn: int) -> LineRead:
        """What the line is: a written input, a destination button, the option of an open clarification, or
        free text read once (asides, dialect, neutral words and spellings set aside) and interpreted."""
        clarification, mem.clarify = mem.clarify, None
        if given is not None:
            return LineRead(text, text, given, to, InterpretationRecord(text=text, rule="given", input=str(given)),
                            named_now=to is not None)
        if move:
            chosen = PlayerInput.move(move) if move in self.scenario.places else NONE
            if chosen == NONE:
                errors.append(f"unknown destination {move!r}")
            return LineRead(text, text, chosen, to, InterpretationRecord.of_button(text, str(chosen)),
                            named_now=to is not None)
        text = without_asides(text)     # （笑）（小声）（一口食べて）: how it is said, not what
        text = standard(text)           # 帰らなあかん, ほんまに, 知らへん: read as standard forms
        # (えっと、 あのさ、 😊 笑 set aside; おみせ, あおいちゃん read as お店, 葵ちゃん: spelling.py)
        text = self.respeller.respell(neutral(text).text)
        resolved = None
        if clarification is not None and clarification.turn == state.turn:
            resolved = self.clarifier.resolve(text, clarification.options)
            if resolved is not None and resolved not in self.rules.candidates(state):
                resolved = None
        if clarification is not None and resolved is not None:
            context["clarify"] = {"resolved": str(resolved)}
            return LineRead(text, f"{clarification.text}\n{text}", resolved, clarification.to or to,
                            InterpretationRecord(text=text, rule="clarify_resolved", input=str(resolved),
                                                 options=list(clarification.options)), named_now=to is not None)
        return self._interpret(text, state, mem, talk, to, context, errors, turn, clarification is not None)

    def _interpret(self, text: str, state: GameState, mem: ConversationMemory, talk: Situation, to: str | None,
                   context: dict[str, Any], errors: list[str], turn: int, clarifying: bool) -> LineRead:
        """Free text: its parts, who is spoken to, the interpreter's input, then what the conversation makes of
        it (a pick, an order, a topic set aside, a clarification to ask)."""
        question = talk.question
        # the character named last turn stays addressed for a follow-up, unless this line names someone else
        # here (「ママさんの好きな歌手は？」 after talking with 葵; not one only mentioned: 「ママにも話した？」 still
        # asks 葵 — mention.py)
        named = self._named_here(text, state)
        partner = mem.partner if mem.partner is not None and mem.partner_turn >= state.turn and \
            mem.partner in self.rules.people(state.place) and named in (None, mem.partner) else None
        if partner is None and named is None:
            # 「すごく上手。勉強してたの？」 right after 葵 answered: still 葵 (not the one who answers by default)
            partner = self._last_answerer(mem, state)
        reading = self._reading(text, state, mem, question)
        if reading.side is not None:
            context["parts"] = {"side": reading.side, "main": reading.text}
        if reading.taken_back:
            context["taken_back"] = reading.taken_back
        text = reading.text
        result = self.interpreter.interpret_turn(text, state, to or reading.called or partner, recent=talk.recent)
        addressee = result.addressee
        how = result.debug.addressee.how if result.debug.addressee is not None else None
        named_now = addressee is not None and (how in ("head", "question", "phrase") or to is not None or
                                               addressee == reading.called)
        if named_now and addressee != self.rules.responder(state.place):
            mem.partner, mem.partner_turn = addressee, turn      # named (or tapped) this turn
        else:
            mem.partner = None
        if result.error:
            errors.append(f"classifier: {result.error}")
        line = LineRead(text, text, result.input, addressee, result.debug, result, reading=reading,
                        named_now=named_now)
        if line.chosen.is_leave and mem.orders[mem.paid:] and said_in_passing(text):
            # 「ごちそうさまでした」, or 「…また来ますね」 in passing, with the tab unpaid: the bill comes
            # (policies/tab.py); the visit ends when the player leaves
            context["meal_done"] = str(line.chosen)
            line = replace(line, chosen=NONE)
        elif line.chosen.is_leave and come_again_among_talk(text):
            line = replace(line, chosen=NONE)      # 「…ご近所なので、また買いに来ますね」 after other talk: no goodbye
        if not (line.chosen.is_intent or line.chosen.is_none):
            return line
        pick = self._option_picked(text, state, mem, question) if not clarifying else None
        if pick is not None:
            # 「正面から撮った方にします」 to 「…どっちがいいと思う？」: that option, not a topic (picks.py)
            context["picked"] = pick
            return replace(line, chosen=NONE)
        self._decide(line, state, mem, talk, context)
        return line

    def _decide(self, line: LineRead, state: GameState, mem: ConversationMemory, talk: Situation,
                context: dict[str, Any]) -> None:
        """What the conversation makes of an intent or なし read from the line: an order, the price or the
        bill, a clarification to ask, or the topic set aside where the reading does not hold it (each rule is
        named in the debug record)."""
        text, result = line.text, line.result
        assert result is not None
        order = self._order_in(line, state, mem, talk, context)
        if order is not None:
            context["order"] = order.to_dict()
            line.order, line.chosen = order, NONE
            return
        chosen = line.chosen
        if _PRICE.search(nfkc(text)) and not self._item_named(nfkc(text)) and self._listed_last(mem, state):
            # 「それぞれ1本いくら？」 right after the menu was listed: the prices of what it named
            context["price"] = str(chosen)
            line.chosen = NONE
            return
        if chosen.is_intent and ((_PRICE.search(nfkc(text)) and self._item_named(nfkc(text))) or
                                 (mem.orders[mem.paid:] and
                                  (disputes(text, bool(self._items_named(text))) or
                                   _BILL.search(without_put_off(nfkc(text))) or self._corrects_tab(text, mem) or
                                   asks_if_paid(text) or
                                   (cancels(text) and any(i in mem.orders[mem.paid:]
                                                          for i in self._items_named(text)))))):
            # 「ナポリタンっていくら？」「内訳は？」: the price or the bill is the answer, not the menu's story line
            context["price"] = str(chosen)
            line.chosen = NONE
            return
        options = self._clarify(text, state, result)
        if options is not None:
            recent_topic = self._recent_topic(mem, state, options)
            if recent_topic is not None:
                # the conversation is already on one of them: no need to ask
                context["clarify"] = {"settled_by_topic": str(recent_topic)}
                line.chosen, options = recent_topic, None
        if options is not None:
            line.options = options
            return
        if line.chosen == NONE and result.rule is None:
            carried = self._carried_topic(text, state, mem)
            if carried is not None:
                # 「葵さんはどう思う？」「直さないの？」 right after a topic: still that topic, read with the line
                # before it (看板… → the entry about the sign, not the name)
                context["topic_carried"] = str(carried)
                line.chosen = carried
                line.answer_text = f"{mem.player_last or ''}\n{text}"
        reason = self._set_aside(line, state, talk)
        if reason is not None:
            context[reason] = str(line.chosen)
            line.chosen = NONE
        if result.rule is None:
            fact = self._fact_first(text, state, line.addressee, line.chosen, mem)
            if fact is not None:
                # 「ママのお名前は？」: a fact about the one asked about, not the shop's name; 「今かかってるの誰の
                # 曲？」: what the question's head asks, not the topic's line
                context["fact"] = fact.ref
                line.chosen = NONE
        if result.rule is None and (line.chosen == NONE or not self._names_topic(text, line.chosen)):
            vague = self._vague(text, state, mem)
            if isinstance(vague, Options):
                line.options = vague
            elif vague is not None:
                # 「あれってどうなったの？」 right after a topic: that topic
                context["vague"] = str(vague)
                line.chosen = vague

    def _order_in(self, line: LineRead, state: GameState, mem: ConversationMemory, talk: Situation,
                  context: dict[str, Any]) -> OrderFound | None:
        """The order the line makes, if any (orders.py), less what only looks like one."""
        text, addressee = line.text, line.addressee
        # (the one who answered last is no server unless named: 「レモンサワーある？」 goes to the bar)
        order = self._order(text, state, addressee if line.named_now else None, mem, talk.question)
        if order is None:
            return None
        if order.kind in ("ask", "missing") and not order.listing and \
                (fact := self._fact_first(text, state, addressee, line.chosen, mem)) is not None and fact.about:
            return None         # 「ママの好きな食べ物って何？」 asks about ママ, it orders nothing
        if order.kind in ("missing", "extra") and order.named and self._entry_names(order.named, state):
            return None         # 「からしってある？」: not on the menu, but someone here knows about it
        if order.kind not in ("paid", "extra", "adjust") and order.swapped is None and mem.orders[mem.paid:] and \
                disputes(text, order.item is not None):
            # (a change to a dish, 「ピーマン抜いて」, is no question of the bill)
            # 「ハイボール3杯とおでんで4200円？内訳聞いてもいい？」「4杯目は頼んでない、取り消して」: the bill
            # questioned names what was served; it orders nothing
            context["not_ordered"] = order.to_dict()
            return None
        return order

    def _set_aside(self, line: LineRead, state: GameState, talk: Situation) -> str | None:
        """The rule, if one, by which the topic read from the line is set aside (the line is played as なし)."""
        chosen, text, result = line.chosen, line.text, line.result
        assert result is not None
        unread = chosen.is_intent and result.rule is None
        if unread and not self._names_topic(text, chosen) and not is_question(text) and \
                self.answerer.act(text).act in _SOCIAL_ACTS:
            # 「あつっ。でもおいしい！」: praise, not the menu topic guessed from a word near in meaning (a question
            # asks, whatever praise its words hold: 「いい店ってどんな店だと思う？」)
            return "act_not_topic"
        if unread and not self._names_topic(text, chosen) and not is_question(text) and read_own(text).told:
            # 「週末、姉にメールでも送ってみようかな」: the player's own story or plan, not a topic guessed from a
            # word near one of its words
            return "own_not_topic"
        if chosen.is_intent and self._topic_words_owned(text, chosen):
            # 「うちの猫の名前、きなこっていうの」「お店の名前じゃなくて、うちの猫の名前！」: the topic's word is the
            # player's own thing (their cat's name), not the shop's
            return "own_not_topic"
        if chosen.is_intent and result.rule is None and self._topic_words_of_another(text, chosen):
            # 「その常連さんの名前は？」: the topic's word (名前) is a third party's, not the shop's
            return "other_owner"
        if unread and not self._names_topic(text, chosen) and len(sentences(text)) >= 2 and \
                not any(is_question(sentence) for sentence in sentences(text)):
            # 「今日な、最後に乗せた客がな…ドラマかいな思たわ」: a story of two sentences or more that names no word of
            # the topic guessed (乗せ is near 載せ only in meaning): the player's story, not that topic — a line that
            # asks in one of its sentences is no story (「つまめるものはありますか。お腹が少し空いてきまして」)
            return "story_not_topic"
        if unread and self._stance(chosen) and only_asks_back(text):
            return "asked_not_stance"   # 「色はそのままで小窓とか？」: asking back takes no stance
        if self._echoes_question(text, chosen, talk.question, talk.recent):
            return "answer_not_topic"   # 「いいよ、一緒に選ぼう」 to 「一緒に選んでくれる？」: the question's own word
        if self._weak_topic(text, state, chosen, result):
            # a topic guessed from shared letters only, while the line names what a character's own entry covers
            # (何年 → the shop's history): that entry answers
            return "weak_topic"
        if self._unsure_story(text, state, chosen, line.addressee, result):
            # a story line fires only on a topic the line names: a guess from a word near in meaning (娘 ~ 二人)
            # or shared letters is answered without the story moving on
            return "unsure_story"
        return None

    def _answer(self, line: LineRead, state: GameState, mem: ConversationMemory, talk: Situation, to: str | None,
                speak: Speak | None, context: dict[str, Any],
                turn: int) -> tuple[Step, Answer | None, Any, list[Answer]]:
        """The rules' step, then the answer: to a first part said apart, to an order, to free conversation (the
        model when one speaks, else the authored answer), applied to the step."""
        question, state_place = talk.question, state.place
        text, chosen, addressee, reading = line.text, line.chosen, line.addressee, line.reading
        # a yes or a no to a question whose line has its own replies is that answer, not a なし a line answers
        answering = chosen.is_none and line.order is None and self._answers_authored(text, question, state)
        step = self.rules.handle(chosen, state, addressee, answering=answering)
        # (the scripted lines shown count as said, the start's too, which no turn remembered)
        said = {**{f"line/{i}": [0] for i in state.shown_lines}, **mem.said}
        variety = Variety(said, turn, self.book, facts=self.facts, present=self.rules.people(step.state.place))
        answer: Answer | None = None
        model = None
        side: Answer | None = None
        if reading is not None and reading.side is not None:
            how = line.interpretation.addressee.how if line.interpretation.addressee is not None else None
            # a name at the head of the line calls whoever the whole line is said to, its later part too
            # (「葵ちゃんも何か飲む？一杯おごるよ」: the treat is hers)
            head_called = how in ("head", "question") and reading.side_after
            side_to = part_addressee(reading.side, self.rules, state, to=addressee if head_called else to,
                                     asker=question.speaker if question else None,
                                     rest=addressee, rest_named=how in ("head", "question", "phrase"),
                                     about=self.focus_reader.read(reading.side, tuple(self.rules.people(state_place))).about
                                     if is_question(reading.side) else ())
            side = self._side_answer(reading.side, step, state, mem, question, side_to, turn, variety, context,
                                     rest=reading.text, main_order=line.order)
            if side is not None:
                variety.note(side.refs)
                if side.source in (AnswerSource.REPLY, AnswerSource.ORDER):
                    question = None        # answered by the side part
        if line.order is not None:
            answer = self._serve(line.order, step, state, mem, turn, variety)
        if answer is None and step.free_talk is not None:
            if speak is not None:
                model = speak(step, addressee)
            if model is None or getattr(model, "source", None) != AnswerSource.MODEL:
                answer = self._authored(step, state, text, line.answer_text, mem, question, variety, turn, context,
                                        addressed=line.named_now and addressee in self.rules.people(state_place))
        before: list[Answer] = []
        if side is not None:
            side, answer = kept(side, answer)   # no stock brush-off after a real answer to the other part
        if side is not None:
            if answer is None or answer.speaker == side.speaker:
                answer = self._joined(side, answer)
            else:
                before.append(side)          # said first, by its own speaker
                step, side = self._apply(step, side)
        if answer is not None:
            step, answer = self._apply(step, answer)
        return step, answer, model, before

    # ------------------------------------------------------------------ context for reading a line

    def _reading(self, text: str, state: GameState, mem: ConversationMemory,
                 question: AskedQuestion | None) -> Reading:
        """What of the line is read as the turn: without what it takes back (「店の名前じゃなくて、…」), and,
        when a first part does something of its own (an order, a toast, a yes) before a question, the
        question — the first part is answered apart."""
        present = tuple(self.rules.people(state.place))
        whole = self.focus_reader.read(text, present)
        meant, back = whole.text, whole.taken_back
        if back and self.orders.swap(text, mem.orders[mem.paid:]) is not None:
            # 「ハイボールじゃなくてビールにして」 of a highball on the tab: one order, the one it gives up taken back
            return Reading(standard(nfkc(text)), None, "", whole.called)
        if back and not self._topic_nouns(meant) and mem.player_last:
            # 「店の名前じゃないって！」: nothing new besides the correction — the line before, without it
            earlier = nfkc(mem.player_last)
            for word in self._topic_nouns(back):
                earlier = earlier.replace(word, "")
            if is_question(earlier) or self._topic_nouns(earlier):
                # (not a greeting before it: 「こんにちは」 then 「花束じゃなくて、一輪だけでいいです」 greets nobody)
                meant = f"{earlier}　{meant}".strip()
        if back and not is_question(meant) and is_question(mem.player_last or "") and \
                self._order(meant, state, None, mem, question) is None:
            # a correction of a question asks it again (not one that goes on to order: 「…じゃなくて元カレの話ね。
            # まあいいや。もう一杯ほしいな。ハイボールで」)
            meant = meant.rstrip("!！。 ") + "?"
        # (「だよね、って。教えてくれるんですか」: the character's words quoted back are not the player's own)
        meant = _QUOTED_BACK.sub("", meant, count=1) or meant
        if self._read_whole(meant, state, mem, question):
            return Reading(meant, None, back, whole.called)
        return self._in_parts(meant, back, whole, state, mem, question)

    def _in_parts(self, meant: str, back: str, whole: Focus, state: GameState, mem: ConversationMemory,
                  question: AskedQuestion | None) -> Reading:
        """The line cut where a first part does something of its own (see _reading), else whole."""
        present = tuple(self.rules.people(state.place))
        side = None
        line = meant
        pieces = self._calls_joined(parts(meant), state)
        if len(pieces) >= 2 and (self._more_then_named(pieces, state, mem, question) or
                                 self._named_then_styled(pieces, state, mem, question) or
                                 self._named_then_counted(pieces)):
            # 「ママ、おかわりください！次はビールで」「もう一杯ほしいな。ハイボールで」: one more, of the item named after;
            # 「ナポリタン食べたいねん。大盛りでお願いします」: the item, then how it is wanted
            return Reading(meant, None, back, whole.called)
        asking = [i for i, piece in enumerate(pieces) if is_question(piece)]
        if len(pieces) >= 2 and not asking and question is not None:
            # 「ただいまです。ちょっと奥で世間話してました」: a greeting, then the answer to the open question
            asking = [i for i, piece in enumerate(pieces) if i > 0 and self.answerer.act(piece).act not in (ACT.greeting, ACT.thanks)
                      and polarity(piece, question.kind) is not None]
        if len(pieces) >= 2 and asking:
            main = asking[-1]
            rest = "".join(p if p.endswith(("。", "!", "?", "！", "？")) else p + "。"
                           for i, p in enumerate(pieces) if i != main)
            main_text = _JOINING_LEAD.sub("", pieces[main], count=1)
            # (not for a short echo question of no content: 「え、私がですか？うーん、いいですよ」 answers as a whole)
            if self._side_act(rest, state, mem, question) and self._asks_something(main_text, state):
                side, meant = rest, main_text
            elif main == len(pieces) - 1 and self._asks_something(main_text, state) and \
                    not (only_asks_view(rest) and not self._topic_nouns(rest)) and \
                    self._to_others(rest, main_text, state) and \
                    (len(asking) >= 2 and self._asks_something(rest, state) or self._topic_nouns(rest)):
                # 「ママ、この曲なに？葵さんは何歳？」「ママ、疲れたよ。葵さんは元気？」: each part to its own
                side, meant = rest, main_text
        elif len(pieces) >= 2 and side is None:
            rest, last = "".join(pieces[:-1]), pieces[-1]
            if self._side_act(rest, state, mem, question) and (self._to_others(rest, last, state) or (
                    question is not None and polarity(rest, question.kind) in ("yes", "no") and
                    named_in(last, self.rules, state) not in (None, question.speaker))):
                # 「葵さん、こんばんは。ママ、ビールね」: a greeting, then an order; 「いいと思うよ。ママ、ビールね」: an
                # answer to the open question, then an order to someone else by name
                side, meant = rest, last
        if side is not None and not (pieces and meant == pieces[0]) and _POINTS_BACK.search(meant):
            # 「血の池って店名すごいな。なんでその名前なん？」: その points at the part before — one question, read whole
            return Reading(line, None, back, whole.called)
        if side is not None:
            # a name called in the first part does not reach across (「ママ、ビール。うーん、変えるのもいいと思う」
            # answers 葵's question, not ママ)
            return Reading(meant, side, back, self.focus_reader.read(meant, present).called,
                           side_after=bool(pieces) and meant == pieces[0] and len(pieces) >= 2)
        return Reading(meant, side, back, whole.called)

    def _read_whole(self, meant: str, state: GameState, mem: ConversationMemory,
                    question: AskedQuestion | None) -> bool:
        """Whether the line is read whole, never cut into parts answered apart: 「レモンサワーある？なければ水割り
        で」 (one order), 「2600円！？内訳は？」 (one question about the bill), 「赤いバラもあるのよね。一本いくら？」
        (its price), 「現金で払いますよ。今日は持ってこれないんで、配達のときでいい？」 (paying put off), 「はい、
        4000円。お釣り500円お願いします」「ほい、4000円。釣りはいらない」 (money handed and what of the change)."""
        normalised = nfkc(meant)
        return bool((FALLBACK.search(normalised) and self._order(meant, state, None, mem, question) is not None) or
                    disputes(meant) or only_asks_price(meant) or money("paid_later").search(normalised) or
                    change_asked(normalised) is not None or money("keep_change").search(normalised) or
                    self.orders.of_quantity_asked(normalised) or
                    self.orders.recognised(normalised) or self._items_after_question(normalised))

    def _items_after_question(self, normalised: str) -> bool:
        """「黄色と白でまとめるのはどうですか？ひまわりとかすみ草で。」: items said bare after the player's own question
        go on with it — one question, never an order apart."""
        said = sentences(normalised)
        if len(said) < 2 or not is_question(said[-2]) or is_question(said[-1]) or not self._items_named(said[-1]):
            return False
        if asks_after_order(said[-2]) and self.orders.named(style_of(said[-1])[1]) and not asks_firmly(said[-1]):
            return True     # 「…作ってくださっているんでしょう？ケチャップ多めのナポリタン。」: what it asks after, said after
        return not _MUSING.search(said[-2]) and bool(_BARE_ITEMS.match(said[-1]))

    def _calls_joined(self, pieces: list[str], state: GameState) -> list[str]:
        """Pieces with a bare question to someone (「颯太くんは？」「ママは？」) joined to the question after it:
        「きれいなお店ですね。颯太くんは？お花好きなの？」 asks 颯太 whether he likes flowers."""
        out: list[str] = []
        for piece in pieces:
            if out and _BARE_CALL.match(out[-1]) and is_question(piece) and \
                    named_in(out[-1], self.rules, state) is not None:
                out[-1] = out[-1] + piece
            else:
                out.append(piece)
        return out

    def _to_others(self, first: str, last: str, state: GameState) -> bool:
        """Two parts of a line said to two characters here, each by name (or, a question, about them)."""
        present = tuple(self.rules.people(state.place))
        # (whom a part is about names its addressee only when it asks: 「葵さんの計画」 alone asks 葵 nothing)
        first_to = named_in(first, self.rules, state,
                            self.focus_reader.read(first, present).about if is_question(first) else ())
        last_to = named_in(last, self.rules, state,
                           self.focus_reader.read(last, present).about if is_question(last) else ())
        return first_to is not None and last_to is not None and first_to != last_to

    def _asks_something(self, text: str, state: GameState) -> bool:
        """A question with something of its own to ask: a thing, someone, a wh-word — not a bare echo of
        surprise (「え、私がですか？」)."""
        focus = self.focus_reader.read(text, tuple(self.rules.people(state.place)))
        # (a question put to someone by name asks of its own, short as it is: 「由美ちゃん、何歳？」; a bare 「誰ですか？」
        # leans on the part before it)
        return bool(self._topic_nouns(text) or focus.about or len(nfkc(text)) > 12 or
                    (focus.question and focus.called is not None) or _PRICE.search(nfkc(text)))    # 「あと、いくら？」

    def _topic_nouns(self, text: str) -> list[str]:
        focus = self.focus_reader.read(text)
        return [n for n in focus.nouns if n not in self.facts.names]

    def _more_then_named(self, pieces: list[str], state: GameState, mem: ConversationMemory,
                         question: AskedQuestion | None) -> bool:
        """Whether the line asks for one more without naming it, then names the item in its last part."""
        before = "".join(pieces[:-1])
        if self.orders.named(before) or not self.orders.named(pieces[-1]):
            return False
        order = self._order(before, state, None, mem, question)
        return order is not None and order.kind == "again"

    def _named_then_counted(self, pieces: list[str]) -> bool:
        """Whether the line names an item, then says how many in a last part that names none (「ほな無難にひまわりに
        しとこか。三本ください」): the count is of that item, read with it, not of the last order."""
        return not self.orders.named(pieces[-1]) and bool(self.orders.named("".join(pieces[:-1]))) and \
            of_the_last(nfkc(pieces[-1])) is not None

    def _named_then_styled(self, pieces: list[str], state: GameState, mem: ConversationMemory,
                           question: AskedQuestion | None) -> bool:
        """Whether the line orders an item, then says how it is wanted in its last part, naming none."""
        last = nfkc(pieces[-1])
        if self.orders.named(pieces[-1]) or style_of(last)[0] is None:
            return False
        order = self._order("".join(pieces[:-1]), state, None, mem, question)
        return order is not None and order.kind == "item"

    def _side_act(self, text: str, state: GameState, mem: ConversationMemory,
                  question: AskedQuestion | None) -> bool:
        """A part that does something of its own: an order, a greeting or thanks, a toast (a repeatable
        entry's word), or a yes or no to the open question."""
        if self._order(text, state, None, mem, question) is not None:
            return True
        if self.answerer.act(text).act in ACT.group("opening") and len(nfkc(text)) <= 20:
            return True
        forms = TextForms.of(unstretched(nfkc(text)))
        for person in self.rules.people(state.place):
            for entry in self.answerer.entries_of(person):
                if entry.entry.repeatable and entry.entry.words and self.matcher.hits(forms, entry.entry.words):
                    return True
        return question is not None and polarity(text, question.kind) in ("yes", "no")

    def _answers_authored(self, text: str, question: AskedQuestion | None, state: GameState) -> bool:
        """Whether the line says yes or no to the open question of a line with authored `replies` (of that kind)
        by someone here."""
        if question is None or question.speaker not in self.rules.people(state.place):
            return False
        asked = self.book.get(question.ref)
        if asked is None or asked.replies is None:
            return False
        pol = polarity(text, question.kind, change=question.change)
        return pol in ("yes", "no") and bool(getattr(asked.replies, pol))

    def _side_answer(self, text: str, step: Step, state: GameState, mem: ConversationMemory,
                     question: AskedQuestion | None, addressee: str | None, turn: int, variety: Variety,
                     context: dict[str, Any], rest: str = "", main_order: OrderFound | None = None) -> Answer | None:
        """The answer to a line's first part (see _reading); `rest`: the line's other part (「いや、もう注文しました
        よね？」 beside the items named says they were ordered before: they are not ordered again)."""
        # (nor beside a question whether a thing can be had: 「電話で注文もできますか？…仏花お願いしたくて」)
        order = None if already_ordered(rest) or asks_if_possible(nfkc(rest)) else \
            self._order(text, state, addressee, mem, question)
        if order is not None and order.kind == "item" and order.swapped is None and is_question(rest) and \
                order.item in self.orders.named(rest) and not self.orders.orders_outright(text):
            # 「ひまわりはロビーが明るくなりそうでいいですね。切り花だと何日くらい持ちますか？」 after the flowers
            # were listed: still asking about it, not chosen yet (an item named after an offer orders only alone);
            # a swap (「ナポリタンやめておでんにしてもいい？…おでんのほうが安いよね？」) is decided whatever is asked after
            order = None
        if order is not None and main_order is not None and order.kind == main_order.kind == "item" and \
                order.item == main_order.item:
            order = None         # 「…おでんもらおうかな。大根と卵」: the other part orders the same dish, served once
        if order is not None:
            context["order"] = order.to_dict()
            return self._serve(order, step, state, mem, turn, variety)
        act = self.answerer.act(text)
        present = self.rules.people(state.place)
        if question is not None and question.speaker in present:
            pol = polarity(text, question.kind, change=question.change)
            if pol in ("yes", "no"):
                found = self._reply(question, pol, state, turn, variety)
                if found is not None:
                    context["reply"] = {"to": question.ref, "as": pol}
                    return self.answerer.make(found, act.act)
        speaker = addressee if addressee in present else self.rules.responder(state.place)
        if speaker is None:
            return None
        free = FreeTalk(speaker, None, ())
        found = None
        if act.act in ACT.group("opening"):
            found = self.answerer.reaction(free, state, text, act, turn, variety)
        if found is None:
            found = self.answerer.knowledge(free, state, text, turn, variety)
        if found is None:
            found = self.answerer.reaction(free, state, text, act, turn, variety)
        return self.answerer.make(found, act.act) if found is not None else None

    @staticmethod
    def _joined(first: Answer, answer: Answer | None) -> Answer:
        """One character's answers to two parts of a line, said as one line."""
        if answer is None:
            return first
        glue = "" if first.text.endswith(("。", "！", "!", "…")) else "　"
        return Answer(answer.speaker, first.text + glue + answer.text, answer.expression, answer.source, answer.ref,
                      answer.act, {**first.variation, **answer.variation}, refs=first.refs + answer.refs,
                      flags=first.flags + answer.flags, detail={**first.detail, **answer.detail,
                                                                "first": first.to_dict()})

    def _fact_first(self, text: str, state: GameState, addressee: str | None, chosen: PlayerInput,
                    mem: ConversationMemory) -> Fitting | None:
        asked = addressee if addressee in self.rules.people(state.place) else self.rules.responder(state.place)
        focus = self.focus_reader.read(text, tuple(self.rules.people(state.place)))
        forms = TextForms.of(unstretched(focus.text))
        return self.entries.best_fact(focus, forms, self.rules.people(state.place), state, asked,
                                      chosen if chosen.is_intent else None, last=self._last_speaker(mem, state),
                                      recent=self._exchange(mem, state))

    def _confirmed(self, text: str, state: GameState, mem: ConversationMemory, turn: int,
                   variety: Variety) -> Answer | None:
        """The sentence of the last turn's line that the question only asks back (confirm.py), said again by
        the one who said it, with their recall lead-in."""
        last = mem.last
        if last is None or last.turn < state.turn or last.speaker not in self.rules.people(state.place):
            return None
        phrase = confirmed_phrase(text, last.text)
        if phrase is None or any(turns and turns[-1] == state.turn and ref.startswith("recall/")
                                 for ref, turns in mem.said.items()):
            return None          # (a fact said again just now is not said a third time)
        for ref, turns in mem.said.items():
            if not turns or turns[-1] != state.turn:
                continue
            sentence = next((s for s in self.facts.of(ref) if s.speaker == last.speaker and
                             phrase in kanji_number(nfkc(s.text))), None)
            if sentence is None:
                continue
            lead = self._recall_lead(last.speaker, state, turn, variety)
            if lead is None:
                return None
            said, lead_ref, variation = lead
            return Answer(last.speaker, said.text.replace("{said}", sentence.text), said.expression or NEUTRAL,
                          AnswerSource.RECALL, lead_ref, ACT.question, variation, refs=(lead_ref,),
                          detail={"recalled": sentence.ref})
        return None

    def _exchange(self, mem: ConversationMemory, state: GameState) -> TextForms | None:
        """The exchange just before this line (the player's last line, and what was said to it on the last
        turn with what the knowledge said then is about): what a follow-up naming no subject of its own
        (「まだお元気なの？」 after 先代 was talked about) is about."""
        if mem.last is None or mem.last.turn < state.turn:
            return None
        infos = []
        for ref, turns in mem.said.items():
            if turns and turns[-1] == state.turn and ref.startswith("knowledge/"):
                person, index = ref.removeprefix("knowledge/").split("#")[0].split("/")
                entry = next((e for e in self.answerer.entries_of(person) if e.index == int(index)), None)
                if entry is not None:
                    infos.append(entry.info)
        return TextForms.of(unstretched(nfkc("\n".join([mem.player_last or "", mem.last.text, *infos]))))

    def _last_answerer(self, mem: ConversationMemory, state: GameState) -> str | None:
        """The one character who answered the player's last line in free conversation (not a scripted line),
        when it is not the place's responder and they are here."""
        speakers = set()
        for ref, turns in mem.said.items():
            if turns and turns[-1] == state.turn and ref.split("/", 1)[0] in _ANSWER_KINDS:
                line = self.book.get(ref)
                if line is not None and line.speaker:
                    speakers.add(line.speaker)
        if len(speakers) != 1:
            return None
        speaker = speakers.pop()
        if speaker == self.rules.responder(state.place) or speaker not in self.rules.people(state.place):
            return None
        if mem.last is not None and mem.last.turn == state.turn and mem.last.speaker != speaker:
            return None       # someone else spoke after them (a scripted line)
        return speaker

    def _last_speaker(self, mem: ConversationMemory, state: GameState) -> str | None:
        """Who spoke last, when that was on the last turn and they are here (a question naming nobody may be
        about them: 「最近観た映画でよかったのある？」 after 葵 talked about films)."""
        last = mem.last
        if last is None or last.turn < state.turn or last.speaker not in self.rules.people(state.place):
            return None
        return last.speaker

    def _entry_names(self, word: str, state: GameState) -> bool:
        """Whether someone here knows of the thing `word` names: an entry's word is the whole of it (からし), not a
        part (the レモン of レモンサワー, a drink no menu holds, is still said to be missing)."""
        forms = TextForms.of(word)
        whole = len(forms.nfkc)
        return any(hit.start == 0 and hit.end >= whole
                   for person in self.rules.people(state.place) for entry in self.answerer.entries_of(person)
                   if entry.entry.words for hit in self.matcher.hits(forms, entry.entry.words))

    def _topic_words_owned(self, text: str, chosen: PlayerInput) -> bool:
        """Whether every word of the topic the line names is one of the player's own things (belonging.py)."""
        words = self.scenario.intents[chosen.target_id].words
        hits = self.matcher.hits(TextForms.of(text), words) if words else []
        owned = read_own(text)
        return bool(hits) and all(owned.covers(hit.start, hit.end) for hit in hits)

    def _topic_words_of_another(self, text: str, chosen: PlayerInput) -> bool:
        """Whether every word of the topic the line names is owned (Xの…) by another thing (owners.py)."""
        words = self.scenario.intents[chosen.target_id].words
        hits = self.matcher.hits(TextForms.of(text), words) if words else []
        normalised = nfkc(text)
        return bool(hits) and all(said_of_thing(normalised, hit.start, self.names) for hit in hits)

    def _names_topic(self, text: str, chosen: PlayerInput) -> bool:
        if not chosen.is_intent:
            return False
        words = self.scenario.intents[chosen.target_id].words
        return bool(words) and bool(self.matcher.hits(TextForms.of(text), words))

    def _vague(self, text: str, state: GameState, mem: ConversationMemory) -> PlayerInput | Options | None:
        """「あれってどうなったの？」「例の件は？」: the topic of the last turns when there is one, the two
        latest to ask between when there are more, else the story's two open topics."""
        focus = self.focus_reader.read(text, tuple(self.rules.people(state.place)))
        if not focus.vague:
            return None
        candidates = self.rules.candidates(state)
        recent = sorted(((t, topic) for topic, t in mem.topics.items()
                         if state.turn - t <= VAGUE_TURNS and PlayerInput.parse(topic) in candidates), reverse=True)
        topics = [PlayerInput.parse(topic) for _, topic in recent]
        if len(topics) == 1 or (len(topics) >= 2 and recent[0][0] - recent[1][0] >= 3):
            return topics[0]
        if len(topics) < 2:
            topics += [c for c in self.rules.input_candidates(state) if c.is_intent and c not in topics]
        if len(topics) < 2:
            topics += [c for c in candidates if c.is_intent and c not in topics]
        if len(topics) >= 2 and self.clarifier.settings.ask:
            return Options((topics[0], topics[1]), "vague")
        return topics[0] if topics else None

    def _recent(self, state: GameState, mem: ConversationMemory, question: AskedQuestion | None,
                invitation: AskedQuestion | None) -> Recent:
        last = mem.last if mem.last is not None and mem.last.turn >= state.turn else None
        name = self.scenario.characters[last.speaker].name if last and last.speaker in self.scenario.characters \
            else None
        asked = None
        if question is not None and last is not None:
            asked = last.text
        return Recent(last_line=last.text if last else None, last_speaker=name, asked=asked,
                      invited=invitation.place if invitation else None,
                      # 「戻ろう」 goes back only to where the visit started: in the main room it means home
                      came_from=mem.came_from if mem.came_from == self.scenario.start_place else None)

    @staticmethod
    def _lifetime(question: AskedQuestion) -> int:
        """Turns a question stays open: the story's own questions (scripted, arrival lines) a few, a question
        said in passing (chatter, a reaction) only the next turn."""
        return QUESTION_TURNS if question.ref.startswith(("line/", "arrival/", "ending/")) else 1

    def _carried_topic(self, text: str, state: GameState, mem: ConversationMemory) -> PlayerInput | None:
        """The topic of the last turn, for a short follow-up that names no topic of its own."""
        if not mem.topics:
            return None
        topic, last = max(mem.topics.items(), key=lambda kv: kv[1])
        normalised = nfkc(text).strip()
        if last < state.turn or len(normalised) > 24 or not _FOLLOW_UP.search(normalised):
            return None
        if self.answerer.act(text).act not in (NO_ACT, ACT.question, ACT.agree, ACT.disagree):
            return None
        carried = PlayerInput.parse(topic)
        return carried if carried in self.rules.candidates(state) else None

    def _stance(self, chosen: PlayerInput) -> bool:
        """An intent the player only ever states (every example says, none asks: 「今のままがいちばんだよ」)."""
        examples = self.scenario.intents[chosen.target_id].examples
        return bool(examples) and not any(is_question(e) for e in examples)

    def _echoes_question(self, text: str, chosen: PlayerInput, question: AskedQuestion | None,
                         recent: Recent) -> bool:
        if chosen.kind != "intent" or question is None or not recent.asked or question.kind == "invitation":
            return False
        if polarity(text, question.kind) not in ("yes", "no"):
            return False
        words = self.scenario.intents[chosen.target_id].words
        forms = TextForms.of(text)
        hits = self.matcher.hits(forms, words) if words else []
        if not hits:
            return False
        asked = TextForms.of(recent.asked)
        return all(self.matcher.hits(asked, (hit.word,)) for hit in hits)

    def _recent_topic(self, mem: ConversationMemory, state: GameState, options: Options) -> PlayerInput | None:
        """The option the conversation was on within the last few turns (the most recent), if one."""
        recent = [(turn, topic) for topic, turn in mem.topics.items()
                  if state.turn - turn <= 3 and PlayerInput.parse(topic) in options.inputs]
        return PlayerInput.parse(max(recent)[1]) if recent else None

    def _unsure_story(self, text: str, state: GameState, chosen: PlayerInput, addressee: str | None,
                      result: TurnResult) -> bool:
        interp = result.interpretation
        if not chosen.is_intent or interp.rule or interp.backend not in ("", "lexical"):
            return False
        words = self.scenario.intents[chosen.target_id].words
        if words and self.matcher.hits(TextForms.of(text), words):
            return False
        return self.rules.first_response_line(chosen, state, addressee) is not None

    def _weak_topic(self, text: str, state: GameState, chosen: PlayerInput, result: TurnResult) -> bool:
        if not chosen.is_intent or result.interpretation.rule:
            return False
        forms = TextForms.of(unstretched(nfkc(text)))
        intent = self.scenario.intents[chosen.target_id]
        if intent.words and self.matcher.hits(forms, intent.words):
            return False
        # (where the line asks in one of its sentences, an entry's word told in another is no better reading:
        # 「つまめるものはありますか。お腹が少し空いてきまして」 asks of the menu, not of the shop being 空いて)
        asked = [sentence for sentence in sentences(forms.nfkc) if is_question(sentence)]
        for person in self.rules.people(state.place):
            for entry in self.answerer.entries_of(person):
                if not entry.condition.inputs and entry.entry.words and \
                        any(not asked or _in_any(forms.nfkc, hit.start, asked)
                            for hit in self.matcher.hits(forms, entry.entry.words)):
                    return True
        return False

    # ------------------------------------------------------------------ orders

    # ------------------------------------------------------------------ clarify

    def _clarify(self, text: str, state: GameState, result: TurnResult) -> Options | None:
        choices = InterpretChoices.make(self.rules, state)
        offered = set(result.interpretation.offered)
        by_addressee = set(result.interpretation.narrowed.get("addressee", ()))
        return self.clarifier.should_ask(text, result.interpretation, choices.keep(lambda o: o.token in offered),
                                         choices.keep(lambda o: o.token not in by_addressee))

    def _ask_which(self, text: str, state: GameState, mem: ConversationMemory, addressee: str | None,
                   options: Options, result: TurnResult | None, interpretation: InterpretationRecord, turn: int,
                   context: dict[str, Any]) -> PlayedTurn:
        speaker = addressee if addressee in self.rules.people(state.place) else self.rules.responder(state.place)
        first, second = (self.clarifier.name(o.target_id) for o in options.inputs)
        new_state = state.passed()
        answer = None
        if speaker is not None:
            character = self.scenario.characters[speaker]
            lines = character.clarify.lines if character.clarify else []
            variety = Variety(mem.said, turn, self.book)
            prefix = f"clarify/{speaker}"
            said = self.answerer.line_set(prefix, character.clarify.mode if character.clarify else "cycle", lines,
                                          state, turn, prefix, variety) if lines else None
            if lines and said is None:
                said = (0, {prefix: remember(state.variation.get(prefix, ()), 0, len(lines))})
            if said is not None:
                index, variation = said
                template, expression, ref = lines[index].text, lines[index].expression or NEUTRAL, f"{prefix}#{index + 1}"
            else:
                template, expression, ref, variation = DEFAULT_LINE, NEUTRAL, None, {}
            line = template.replace("{1}", first).replace("{2}", second)
            answer = Answer(speaker, line, expression, AnswerSource.CLARIFY, ref, NO_ACT, variation,
                            refs=(ref,) if ref else (),
                            detail={"options": [str(o) for o in options.inputs], "why": options.why})
            expressions = dict(new_state.expressions)
            expressions[speaker] = expression
            new_state = new_state.with_said(variation=variation, expressions=expressions)
        mem.clarify = OpenClarification(options=[str(o) for o in options.inputs], text=text, turn=turn, to=addressee)
        context["clarify"] = {"options": [str(o) for o in options.inputs], "why": options.why}
        free = FreeTalk(speaker, None, ()) if speaker is not None else None
        step = Step(NONE, (), free, (), new_state)
        question = mem.question
        self._remember(mem, step, answer, None, turn, state)
        mem.question = question   # the clarification is its own question (mem.clarify); an older one stays
        return PlayedTurn(step, NONE, addressee, interpretation, result, answer, None, mem, context, [],
                          clarified=True)

    # ------------------------------------------------------------------ the authored answer

    def _authored(self, step: Step, state: GameState, text: str, answer_text: str, mem: ConversationMemory,
                  question: AskedQuestion | None, variety: Variety, turn: int, context: dict[str, Any],
                  addressed: bool = False) -> Answer:
        """The authored answer: the line read once, every policy asked in order, one arbiter (answering.py).
        `addressed`: the player spoke to this character by name (or tapped them): only they answer from what
        they know."""
        free = step.free_talk
        assert free is not None
        found_act = self.answerer.act(text)
        present = set(self.rules.people(state.place))
        focus = self.focus_reader.read(answer_text, tuple(self.rules.people(state.place)))
        if found_act.act == ACT.praise and is_question(text) and other_places(focus.text, self.entries.own_places):
            found_act = replace(found_act, act=ACT.question)   # 「おいしい和菓子屋知らない？」 praises nothing here
        if addressed and free.speaker not in focus.about and not focus.you and (focus.question or focus.request) and \
                not (focus.view and focus.called == free.speaker) and \
                any(p != free.speaker and p in present for p in asked_about(focus.text, self.focus_reader, focus.about, focus.head)):
            # 「葵ちゃん、ママって独身なのか？」 asks of ママ: what ママ knows of herself may answer (not 「葵ちゃん、
            # ママに言ってみたら？」: ママ is only mentioned, 葵 answers — mention.py)
            addressed = False
        deliberation = Deliberation(self, step, state, text, answer_text, mem, question, variety, turn, context,
                                    addressed, free, found_act, focus, present)
        answer, considered = arbitrate(deliberation, POLICIES)
        context["deliberation"] = [c.to_dict() for c in considered if c.outcome != "nothing"]
        return answer

    def _knowledge(self, free: FreeTalk, state: GameState, text: str, focus: Focus, turn: int, variety: Variety,
                   only: bool = False, mem: ConversationMemory | None = None,
                   changing: bool = False) -> tuple[Found | None, Fitting | None]:
        """The line of the entry that fits the line best (entries.py): for a topic, its entries; else the
        entries whose words the line names.  Within an entry, the line that shares the most with the
        question answers first."""
        people = [free.speaker] + ([] if only else [p for p in self.rules.people(state.place) if p != free.speaker])
        forms = TextForms.of(unstretched(nfkc(text)))
        ranked = self.entries.rank(focus, forms, people, state, intent=free.intent, asked=free.speaker,
                                   last=self._last_speaker(mem, state) if mem is not None else None,
                                   recent=self._exchange(mem, state) if mem is not None else None,
                                   changing=changing)
        if free.intent is not None:
            # the topic's entries; and an entry of the one answering whose word is in the question's phrase
            # (「チラシ配り、できるかなあ」 to 葵: her own entry about handing out flyers, not ママ's on photos)
            ranked = [f for f in ranked if free.intent in f.entry.intents or
                      (f.person == free.speaker and f.hit is not None and not f.entry.intents)]
            ranked.sort(key=lambda f: (f.person != free.speaker, free.intent not in f.entry.intents))
        for fitting in ranked:
            found = self._entry_line(fitting, state, text, turn, variety, changing)
            if found is DEFER:
                return None, None     # the answer was said already: the recall brings it back
            if found is not None and mem is not None and self.offers_what_is_had(cast(Found, found)[1], mem):
                continue              # 「ナポリタン、食べていく？」 after the ナポリタン was had: no offer of it again
            if found is not None:
                return cast(Found, found), fitting
            if fitting is ranked[0] and fitting.hit is not None and free.intent is None and focus.question:
                # what the line asks was answered before: that answer again, as said before (only when it asks
                # what that answer told: 「師匠さんに弟子入りしたきっかけは？」 asks more of 先代 than was said)
                recalled = self._recall_entry(fitting, state, turn, variety, again=_asked_part(focus, self.facts),
                                              head=focus.head_word)
                if recalled is not None:
                    return recalled, fitting
        return None, None

    def offers_what_is_had(self, line: str, mem: ConversationMemory) -> bool:
        """Whether a line asks the player about the one menu item it names while that item is on the tab (and
        offers no more of it: 「もう一杯どう？」 may be said)."""
        named = set(self.orders.named(line))
        return len(named) == 1 and named <= set(mem.orders[mem.paid:]) and asks_the_player(line) and \
            not _MORE_IN_WORDS.search(nfkc(line))

    def _entry_line(self, fitting: Fitting, state: GameState, text: str, turn: int,
                    variety: Variety, changing: bool = False) -> Found | None | object:
        """A line of the entry for the question (the one sharing most with it, unsaid); DEFER when the line
        that answers it was said already (the recall says it again)."""
        entry, person = fitting.entry, fitting.person
        key = knowledge_key(person, entry.index)
        used = set(state.variation.get(key, ()))
        best, best_score = None, 0.0
        own = self._entry_keys(entry)
        # (an option taken again by a change of mind, 「やっぱり生成りがいいな」, is said again however recently)
        again = entry.entry.choice is not None and changes_to(entry, text, changing)
        for i in range(len(entry.entry.lines)):
            ref = f"{key}#{i + 1}"
            if (not said_again(entry, i) and i in used) or not (again or variety.fresh(ref)):
                continue
            # what the question shares with the line beyond the entry's own words (every line of the entry is
            # about those: 名前 says nothing of which line answers 「由来ってある？」)
            score = max((self.facts.score(text, replace(sentence, keys=sentence.keys - own, nouns=sentence.nouns - own))
                         for sentence in self.facts.of(ref)), default=0.0)
            if score > best_score:
                best, best_score = i, score
        if best is not None:
            found = self.answerer.knowledge_line(person, entry, state, turn, variety, only=best, again=again)
            if found is not None:
                return found
        if used and not entry.entry.repeatable:
            said_best = max((max((self.facts.score(text, replace(sentence, keys=sentence.keys - own,
                                                                  nouns=sentence.nouns - own))
                                  for sentence in self.facts.of(f"{key}#{i + 1}")), default=0.0) for i in used),
                            default=0.0)
            read = self.focus_reader.read(text)
            if said_best > best_score and is_question(text) and self.facts.asks_again(
                    _asked_part(read, self.facts), [s for i in used for s in self.facts.of(f"{key}#{i + 1}")],
                    self._told_words(entry, fitting.about), head=read.head_word):
                return DEFER  # the line that answers it was said: the recall says it again, not another line
        return self.answerer.knowledge_line(person, entry, state, turn, variety, again=again)

    def _entry_keys(self, entry) -> frozenset[str]:
        keys: set[str] = set()
        for word in entry.entry.words:
            keys |= _analysed_keys(word)[0]
        return frozenset(keys)

    def _echo_word(self, focus: Focus, state: GameState) -> str | None:
        """The thing the line talks about, to take up when nothing authored covers it: the question's head,
        else its last noun — not a name, a place, a pointer or a word of one character."""
        return next(iter(self._echo_words(focus)), None)

    def _echo_words(self, focus: Focus) -> list[str]:
        """The things the line talks about that may be taken up, the likeliest first (see _echo_word)."""
        candidates = ([focus.head_word] if focus.head_word else []) + list(reversed(focus.nouns))
        out: list[str] = []
        for word in candidates:
            if not word or nfkc(word) in self.facts.names or len(word) < 2 and not is_kanji(word[0]):
                continue
            if len(word) == 1 or not_echoed(word) or _cut_from_kana(focus.text, word):
                continue
            if self._doing(focus.text, word):
                continue      # 研究してみたい, 楽しみにしてる: what the player does, not a thing to take up
            written = _with_prefix(focus.text, focus.as_written(word))
            if _said_as_state(focus.text, written):
                continue      # 「お腹いっぱいです」: a state said of something, no thing to take up
            if _declined(focus.text, written):
                continue      # 「ブーケは要らないです」: a thing declined, nothing to be curious about
            if written not in out:
                out.append(written)
        return out

    @staticmethod
    def _doing(text: str, word: str) -> bool:
        """The noun is the player's doing: a verbal noun made a verb of an object (お店を研究して) or 〜にする
        (楽しみにしてる) — not a pastime (キャンプしてます, 釣りしてます: a thing to take up)."""
        tokens = analyse(text).tokens
        for i, token in enumerate(tokens):
            if token.surface != word and (token.normalised or token.surface) != word and \
                    not (word.endswith(token.surface) and token.end - len(word) >= 0 and
                         text[token.end - len(word):token.end] == word):
                continue
            rest = [t for t in tokens[i + 1:i + 3]]
            if not rest:
                return False
            verb = next((t for t in rest if t.pos[:1] == (TAG.verb,)), None)
            if verb is None or not _DOING_VERB.fullmatch(verb.lemma):
                return False
            between = [t.surface for t in rest[:rest.index(verb)]]
            if len(between) == 1 and _TO_PARTICLE.fullmatch(between[0]):
                return True
            return TAG.may_take_suru in token.pos and not between and i > 0 and \
                bool(_OBJECT_PARTICLE.fullmatch(tokens[i - 1].surface))
        return False

    def _form(self, text: str, focus: Focus, speaker: str, word: str | None, act: str, state: GameState, turn: int,
              variety: Variety, context: dict[str, Any], found: FormFound | None = None) -> Answer | None:
        """The answer to a line of a known form (forms.py), when the line asks nothing of someone else (「葵ちゃん、
        ママって猫好き？」 is for ママ's own answer) and does nothing a reaction answers better."""
        read_first = found is not None and found.form in ("advice", "wellbeing")
        # (the player's matter asked about is advice whatever else the line does — 「…んですよね。どう思います？」
        # is no agreement — and 「こんばんは。元気？」 asks how they are; but an insult stays an insult)
        if (act not in (NO_ACT, ACT.question, ACT.about_self) and not (read_first and act != ACT.insult)) or focus.third or \
                any(p != speaker for p in focus.about):
            return None
        found = found or read_form(text)
        if found is None or (act == ACT.about_self and found.form not in ("preference", "advice", "wellbeing")):
            return None
        if found.form == "have" and word is not None and word in other_places(focus.text, self.entries.own_places):
            return None          # 「この辺に和菓子屋ある？」 asks where one is, not whether the shop keeps one
        answer = form_answer(found, self.scenario.characters[speaker], text, word, act, self.answerer, state, turn,
                             variety)
        if answer is not None:
            context["form"] = found.form
        return answer

    def _calls_only(self, who: str, speaker: str) -> bool:
        """Whether `who`, the words before a question, are none or only call `speaker` (「ママ、」「ねえ、葵ちゃん」)."""
        if not who:
            return True
        return self.answerer.act(who).cue == CALL_ONLY and \
            all(person == speaker for _, _, person in self.focus_reader.named(nfkc(who)))

    def _named_here(self, text: str, state: GameState) -> str | None:
        """The one character here the line names, unless it names them only in a case role (mention.py)."""
        named = self.answerer.named_present(text, state.place)
        if named is not None and only_mentioned(self.focus_reader.read(text).text, self.focus_reader, named):
            return None
        return named

    def _mentions_only(self, focus: Focus, speaker: str, present: set[str]) -> bool:
        """Whether the line names someone here besides `speaker`, each only in a case role (mention.py)."""
        others = [p for p in focus.about if p != speaker and p in present]
        return bool(others) and not asked_about(focus.text, self.focus_reader, tuple(others), focus.head)

    def _unsure(self, speaker: str, word: str | None, state: GameState, turn: int, variety: Variety) -> Answer | None:
        unsure = self.scenario.characters[speaker].unsure
        if unsure is None or not unsure.lines:
            return None
        prefix = f"unsure/{speaker}"
        said = self.answerer.line_set(prefix, unsure.mode, unsure.lines, state, turn, prefix, variety,
                                      usable=lambda i: word is not None or "{word}" not in unsure.lines[i].text)
        if said is None:
            return None
        index, variation = said
        line = unsure.lines[index]
        return Answer(speaker, line.text.replace("{word}", word or ""), line.expression or NEUTRAL,
                      AnswerSource.UNSURE, f"{prefix}#{index + 1}", ACT.question, variation, refs=(f"{prefix}#{index + 1}",),
                      detail={"word": word} if word else {})

    def _told(self, speaker: str, text: str, focus: Focus, state: GameState, mem: ConversationMemory, turn: int,
              variety: Variety) -> Answer | None:
        """What the player tells of themselves is remembered (`mem.told`); told again, the character's told
        line says so (「カメラマンだったわね」)."""
        word = told_again(mem.told, self._echo_words(focus), turn)
        if word is None:
            return None
        return self._word_line(speaker, "told", word, AnswerSource.RECALL, ACT.own_life, state, turn, variety)

    def _echo(self, speaker: str, word: str, state: GameState, turn: int, variety: Variety) -> Answer | None:
        return self._word_line(speaker, "echo", word, AnswerSource.ECHO, NO_ACT, state, turn, variety)

    def _word_line(self, speaker: str, kind: str, word: str, source: AnswerSource, act: str, state: GameState,
                   turn: int, variety: Variety) -> Answer | None:
        """The next line of the speaker's `kind` set (echo, told) with {word} filled; None without such lines."""
        lines = getattr(self.scenario.characters[speaker], kind)
        if lines is None or not lines.lines:
            return None
        prefix = f"{kind}/{speaker}"
        said = self.answerer.line_set(prefix, lines.mode, lines.lines, state, turn, prefix, variety)
        if said is None:
            return None
        index, variation = said
        line = lines.lines[index]
        return Answer(speaker, line.text.replace("{word}", word), line.expression or NEUTRAL, source,
                      f"{prefix}#{index + 1}", act, variation, refs=(f"{prefix}#{index + 1}",),
                      detail={"word": word})

    def _option_picked(self, text: str, state: GameState, mem: ConversationMemory,
                       question: AskedQuestion | None) -> dict[str, Any] | None:
        """The option the line picks of those a character asked about (picks.py), if one: asked by their last
        line, or by a line of theirs in the turns just before whose choice is still open (「カウンターのほうが
        いい。ドアは怖いって言ってたし」 answered with a door line, then 「載せるのはカウンターの写真。それで
        決まりでいい？」 still picks)."""
        if question is not None and question.kind == "offer":
            return None       # (which dish or drink is an order: orders.py)
        people = self.rules.people(state.place)
        last = mem.last
        asking_lines = [(last.turn, last.speaker, last.text)] if last is not None and last.turn >= state.turn \
            and last.speaker in people else []
        asking_lines += [(turns[-1], line.speaker, line.text) for ref, turns in
                         sorted(mem.said.items(), key=lambda kv: -(kv[1][-1] if kv[1] else 0))
                         if turns and state.turn - OPTIONS_TURNS < turns[-1] < state.turn and ref.startswith("knowledge/")
                         and (line := self.book.get(ref)) is not None and line.speaker in people]
        for said_at, speaker, said in asking_lines:
            asked = options_asked(said, self.answerer.entries_of(speaker), state.shown, state)
            if asked is None:
                continue
            option = picked(text, asked)
            if option is None or self._order(text, state, None, mem, question) is not None:
                return None
            asking = question.ref if question is not None and question.turn == said_at and \
                question.speaker == speaker else None
            return {"option": option.label, "by": speaker, "question": asking,
                    "entry": option.entry.index if option.entry is not None else None}
        if not chooses(text):
            return None
        # No question asked which, or long ago: a line that chooses an open choice's option by its own words
        # still picks it, whatever topic it was read as (「赤富士にしよう」).
        for speaker in people:
            for asked in open_choices(self.answerer.entries_of(speaker), state.shown, state):
                option = picked(text, asked)
                if option is not None and option.entry is not None and \
                        self._order(text, state, None, mem, question) is None:
                    return {"option": option.label, "by": speaker, "question": None, "entry": option.entry.index}
        return None

    def _picked_line(self, pick: dict[str, Any], state: GameState, turn: int, variety: Variety) -> Found | None:
        """What the one who asked says to the option picked: the line of the entry that settles it, else the
        question's reply to an answer of what (`other`), else their 同意 reaction."""
        who = pick["by"]
        if pick["entry"] is not None:
            entry = next((e for e in self.answerer.entries_of(who) if e.index == pick["entry"]), None)
            found = self.answerer.knowledge_line(who, entry, state, turn, variety) if entry is not None else None
            if found is not None:
                return found
        if pick["question"] is not None:
            asked = self.book.get(pick["question"])
            if asked is not None and asked.replies is not None and asked.replies.other:
                return self._reply(AskedQuestion(ref=pick["question"], speaker=who, turn=turn, kind="wh"), "other",
                                   state, turn, variety)
        return self.answerer.reaction_of(who, ACT.agree, state, turn, variety)

    def _reply(self, question: AskedQuestion, pol: str, state: GameState, turn: int, variety: Variety) -> Found | None:
        asked = self.book.get(question.ref)
        options = list(getattr(asked.replies, pol)) if asked is not None and asked.replies is not None else []
        if options:
            key = f"{question.ref}>{pol}"
            said = self.answerer.line_set(key, "cycle", options, state, turn, key, variety)
            if said is None:
                said = (0, {key: remember(state.variation.get(key, ()), 0, len(options))})
            index, variation = said
            line = options[index]
            return question.speaker, line.text, line.expression or NEUTRAL, "reply", f"{key}#{index + 1}", variation
        if question.kind in ("offer", "invitation", "wh"):
            return None
        act = {"yes": ACT.agree, "no": ACT.disagree}.get(pol)
        if act is None:
            return None
        found = self.answerer.reaction_of(question.speaker, act, state, turn, variety)
        if found is None:
            return None
        who, said_text, expression, _, ref, variation = found
        return who, said_text, expression, AnswerSource.REPLY, ref, variation

    def _chatter(self, speaker: str, state: GameState, turn: int, variety: Variety) -> Found | None:
        chatter = self.scenario.characters[speaker].chatter
        if chatter is None or not chatter.lines:
            return None
        prefix = f"chatter/{speaker}"
        said = self.answerer.line_set(prefix, chatter.mode, chatter.lines, state, turn, prefix, variety, once=True)
        if said is None:
            return None
        index, variation = said
        line = chatter.lines[index]
        return speaker, line.text, line.expression or NEUTRAL, "chatter", f"{prefix}#{index + 1}", variation

    # ------------------------------------------------------------------ the state and the memory

    def _apply(self, step: Step, answer: Answer) -> tuple[Step, Answer]:
        """The step with the answer said first: its variation history, face and flags, and the effects of
        the lines it says (a reply's フラグ: and 表情:); a flag it sets lets the place's progression line that
        now holds follow at once.  The answer comes back with the faces its effects set."""
        effects = [e for ref in answer.refs if (line := self.book.get(ref)) is not None for e in line.effects]
        faces = faces_set(effects)
        flags = answer.flags + tuple(e.name for e in effects if isinstance(e, FlagEffect))
        expressions = dict(step.state.expressions)
        # The answer comes before the step's lines: a later line's effect on the same face wins.
        set_by_lines = {c for line in step.lines for c in faces_set(line.effects)}
        for character, face in {answer.speaker: answer.expression, **faces}.items():
            if character not in set_by_lines:
                expressions[character] = face
        new_flags = set(flags) - step.state.flags
        state = step.state.with_said(variation=answer.variation, expressions=expressions, flags=flags)
        free = step.free_talk if step.free_talk is not None else FreeTalk(answer.speaker, None, ())
        step = replace(step, free_talk=replace(free, speaker=answer.speaker), state=state)
        if new_flags:
            step = self.rules.progress(step)
        # What it did, for the trace and the debug record: its lines' effects and the flags an order sets.
        done = tuple(dict.fromkeys([*(str(e) for e in effects), *(str(FlagEffect(f)) for f in answer.flags)]))
        return step, replace(answer, faces={**answer.faces, **faces}, effects=done)

    def _remember(self, mem: ConversationMemory, step: Step, answer: Answer | None, model: Any, turn: int,
                  before: GameState, first: list[Answer] | None = None) -> None:
        said_refs = [ref for extra in (first or []) for ref in extra.refs]
        said_refs += list(answer.refs) if answer is not None else []
        if answer is not None and answer.detail.get("recalled"):
            said_refs.append(answer.detail["recalled"])   # a recall says its line again: it counts as said
        last: SpokenText | None = None
        last_ref: str | None = None
        if answer is not None:
            last, last_ref = SpokenText(turn=turn, speaker=answer.speaker, text=answer.text), answer.ref
        elif model is not None and getattr(model, "source", None) == AnswerSource.MODEL and step.free_talk is not None:
            last = SpokenText(turn=turn, speaker=step.free_talk.speaker, text=model.text)
            mem.spoken.append(last)
            del mem.spoken[:-SPOKEN_KEPT]
        for line in step.lines:
            ref = fired_ref(line.id, line.scripted)
            said_refs.append(ref)
            last, last_ref = SpokenText(turn=turn, speaker=line.speaker, text=line.text), ref
        remember_said(mem.said, said_refs, turn)
        if last is not None:
            mem.last = last
        asked = self._question(last, last_ref, step.state, turn, " ".join(line.text for line in step.lines)) \
            if last is not None else None
        if asked is not None and asked.kind == "offer" and answer is not None and \
                answer.source == AnswerSource.ORDER and last_ref == answer.ref:
            asked = None      # 「大根と卵、これでどう？」 said serving the order: a yes to it orders nothing more
        if answer is not None and answer.source in (AnswerSource.REPLY, AnswerSource.ORDER):
            mem.question = None           # answered (an offer is answered by the order)
        story = mem.question is not None and self._lifetime(mem.question) > 1 and \
            turn - mem.question.turn < self._lifetime(mem.question) and answer is not None and \
            answer.source not in (AnswerSource.REPLY, AnswerSource.ORDER, AnswerSource.MENU)
        if asked is not None and not (story and self._lifetime(asked) == 1):
            mem.question = asked          # a new question replaces the open one (a question said in passing
                                          # does not replace the story's own while that is still open)
        elif mem.question is not None and (turn - mem.question.turn >= self._lifetime(mem.question) or
                                           mem.question.speaker not in self.rules.people(step.state.place)):
            mem.question = None           # it ran out, or the one who asked is not here
        if step.state.place != before.place:
            mem.invitation = None
            mem.came_from = before.place
        if mem.question is not None and mem.question.kind == "invitation":
            mem.invitation = mem.question

    def _question(self, last: SpokenText, ref: str | None, state: GameState, turn: int,
                  lines: str = "") -> AskedQuestion | None:
        """`lines`: what was said with it (「変えるって…」 before 「あなたはどう思う？」 asks about a change)."""
        if ref is not None and (ref.startswith("fallback/") or f"/{ACT.question}#" in ref):
            return None       # 「スマホで調べてみたら？」 deflects; it asks nothing to be answered
        line = self.book.get(ref) if ref else None
        if ref is not None and ref.startswith("menu/") and re.search(r"/(?:ask|suggest|unavailable)#", ref):
            # 「何にする？　コーヒーかカレーだよ。」: a menu's ask line always offers
            return AskedQuestion(ref=ref, speaker=last.speaker, turn=turn, kind="offer")
        if ref is not None and ref.startswith("menu/") and "/possible#" in ref:
            # 「配達ってできますか？」「配達は500円よ」: the price of what can be had, offered (a yes orders it)
            return AskedQuestion(ref=ref, speaker=last.speaker, turn=turn, kind="offer",
                                 item=self._item_named(last.text))
        if not asks(last.text) and not (line is not None and line.replies is not None):
            return None
        invited = invited_place(last.text, self.names, list(self.rules.exits(state.place)))
        item = self._item_named(last.text)
        if ref is not None and item is not None and ref.startswith("menu/") and \
                ref.rsplit("#", 1)[0].rsplit("/", 1)[-1] == item:
            return None       # 「また水割り？」 said serving 水割り: the order is taken, nothing is offered again
        kind = question_kind(last.text, invited=invited is not None,
                             offered=offered_in(last.text, self._item_named) is not None)
        return AskedQuestion(ref=ref or "model", speaker=last.speaker, turn=turn, kind=kind, item=item,
                             place=invited, change=proposes_change(last.text, lines))


def _asks_leave(text: str) -> bool:
    """The line asks leave (forms.py): something to grant, not a fact to look up (an offer of help may well
    be answered by the character's line on what help they want)."""
    found = read_form(text)
    return found is not None and found.form == "permission"
