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
   a reaction, something the character brings up (chatter), a fallback — none said again within the
   window of turns unless nothing else fits (variety.py).

The new memory (and the game state with the answer's variation, face and flags) is returned for the
turn's one conditional write; nothing here does I/O.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..answers import Answer, Answerer, Found
from ..interpret.cues import invited_place, unstretched
from ..interpret.interpreter import Interpreter, TurnResult
from ..interpret.options import InterpretChoices, Recent
from ..interpret.text import TextForms, make_matcher, nfkc
from ..scenario import FreeTalk, GameRules, GameState, PlayerInput, Step
from ..scenario.inputs import NONE
from ..scenario.loader import NEUTRAL
from ..scenario.variation import knowledge_key, reaction_key, remember
from ..stage.records import AskedQuestion, ConversationMemory, OpenClarification, SpokenText
from ..turn_record import AnswerSource, InterpretationRecord
from .book import LineBook, fired_ref
from .clarify import DEFAULT_LINE, Clarifier, Options
from .facts import Facts, Sentence, is_question
from .orders import OrderFound, Orders
from .questions import asks, polarity, question_kind
from .variety import Variety, remember_said

RECALL_MIN = 3.0          # least evidence for a sentence said before to answer a question (facts.Facts.best)
NEWS_MIN = 4.0            # ... for a line not said yet (news needs more than a shared word)
STATEMENT_MIN = 5.0       # ... for a line not said yet to follow a statement that nothing else answers
INVITATION_TURNS = 3      # an invitation can still be taken up this many turns later
QUESTION_TURNS = 3        # a question can still be answered (by a clear yes or no) this many turns later
SPOKEN_KEPT = 6           # model lines kept for recall

Speak = Callable[[Step, str | None], Any]      # (step, addressee) -> the model's TalkResult
# A follow-up that carries the last topic on: an opinion asked for, a why, a "tell me more", a short question
# about what was just said (「直さないの？」「変えないの？」).
_FOLLOW_UP = re.compile(r"どう思う|どう？|どうなの|どうなん|なんで|なぜ|どうして|本当|ほんと|教えて|もっと|詳しく|例えば|たとえば"
                        r"|他には|ほかには|ほかに|他に|それで|それって|(?:ない|ないん|たい)(?:の|ですか)?\s*[？?]")
# Dialogue acts a reply to a question can have (the rest do something else: greet, thank, order, insult).
_ANSWERING_ACTS = frozenset({"なし", "同意", "反対", "称賛", "質問"})


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

    @property
    def kind(self) -> AnswerSource | None:
        """How the turn was answered (the model, or which authored kind); None when only scripted lines
        answered."""
        if self.model is not None and getattr(self.model, "source", None) == AnswerSource.MODEL:
            return AnswerSource.MODEL
        return self.answer.source if self.answer is not None else None


class Conversation:
    def __init__(self, rules: GameRules, interpreter: Interpreter, answerer: Answerer | None = None) -> None:
        self.rules = rules
        self.scenario = rules.scenario
        self.interpreter = interpreter
        self.answerer = answerer or Answerer(rules, interpreter.names)
        self.names = interpreter.names
        all_names = [n for names in self.names.characters.values() for n in names] + \
                    [n for place in self.names.places.values() for n in place.names]
        self.book = LineBook(self.scenario)
        self.facts = Facts(self.book, all_names)
        self.orders = Orders(self.scenario, all_names)
        self.clarifier = Clarifier(self.scenario)
        self.matcher = make_matcher()

    # ------------------------------------------------------------------ the turn

    def play(self, text: str, state: GameState, memory: ConversationMemory | None = None, *,
             to: str | None = None, move: str | None = None, speak: Speak | None = None,
             given: PlayerInput | None = None) -> PlayedTurn:
        """`given`: an input already decided (a written input such as なし or 意図:音楽 in a trace), played
        without reading the text."""
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

        # the last question a character asked stays open a turn longer (a line in between may be about
        # something else: 「ただいま」「内緒です」), unless a newer one replaced it
        if mem.last is None and state.last_line in self.scenario.lines:
            # a memory that has not seen the game's start (or an older stage): its last scripted line
            line = self.scenario.lines[state.last_line]
            mem.last = SpokenText(turn=state.turn, speaker=line.speaker, text=line.text)
            mem.question = self._question(mem.last, f"line/{line.id}", state, state.turn)
        # the last question a character asked stays open a few turns (lines in between may be about
        # something else: 「ただいま」「内緒です」), unless a newer one replaced it; after the next turn only a
        # clear yes or no still answers it (see _authored)
        question = mem.question if mem.question is not None and \
            mem.question.turn >= state.turn - (self._lifetime(mem.question) - 1) else None
        invitation = mem.invitation if mem.invitation is not None and \
            state.turn - mem.invitation.turn < INVITATION_TURNS and \
            mem.invitation.place in self.rules.exits(state.place) else None
        recent = self._recent(state, mem, question, invitation)
        answer_text = text
        result: TurnResult | None = None
        order: OrderFound | None = None
        options: Options | None = None

        clarification, mem.clarify = mem.clarify, None
        named_now = to is not None
        if given is not None:
            chosen, addressee = given, to
            interpretation = InterpretationRecord(text=text, rule="given", input=str(given))
        elif move:
            addressee = to
            if move in self.scenario.places:
                chosen = PlayerInput.move(move)
            else:
                chosen = NONE
                errors.append(f"unknown destination {move!r}")
            interpretation = InterpretationRecord.of_button(text, str(chosen))
        else:
            resolved = None
            if clarification is not None and clarification.turn == state.turn:
                resolved = self.clarifier.resolve(text, clarification.options)
                if resolved is not None and resolved not in self.rules.candidates(state):
                    resolved = None
            if resolved is not None:
                chosen, addressee = resolved, clarification.to or to   # type: ignore[union-attr]
                answer_text = f"{clarification.text}\n{text}"           # type: ignore[union-attr]
                interpretation = InterpretationRecord(text=text, rule="clarify_resolved", input=str(chosen),
                                                      options=list(clarification.options))  # type: ignore[union-attr]
                context["clarify"] = {"resolved": str(chosen)}
            else:
                # the character named last turn stays addressed for a follow-up, unless this line names
                # someone else here (「ママさんの好きな歌手は？」 after talking with 葵)
                partner = mem.partner if mem.partner is not None and mem.partner_turn >= state.turn and \
                    mem.partner in self.rules.people(state.place) and \
                    self.answerer.named_present(text, state.place) in (None, mem.partner) else None
                result = self.interpreter.interpret_turn(text, state, to or partner, recent=recent)
                chosen, addressee, interpretation = result.input, result.addressee, result.debug
                how = result.debug.addressee.how if result.debug.addressee is not None else None
                named_now = addressee is not None and (how in ("head", "question", "phrase") or to is not None)
                if named_now and addressee != self.rules.responder(state.place):
                    mem.partner, mem.partner_turn = addressee, turn      # named (or tapped) this turn
                else:
                    mem.partner = None
                if result.error:
                    errors.append(f"classifier: {result.error}")
                if chosen.is_intent or chosen.is_none:
                    order = self._order(text, state, addressee, mem, question)
                    if order is not None:
                        context["order"] = order.to_dict()
                        chosen = NONE
                    else:
                        options = self._clarify(text, state, result)
                    if options is not None:
                        recent_topic = self._recent_topic(mem, state, options)
                        if recent_topic is not None:
                            # the conversation is already on one of them: no need to ask
                            context["clarify"] = {"settled_by_topic": str(recent_topic)}
                            chosen, options = recent_topic, None
                    if options is None and order is None and chosen == NONE and result.rule is None:
                        carried = self._carried_topic(text, state, mem)
                        if carried is not None:
                            # 「葵さんはどう思う？」「直さないの？」 right after a topic: still that topic, read
                            # with the line before it (看板… → the entry about the sign, not the name)
                            context["topic_carried"] = str(carried)
                            chosen = carried
                            answer_text = f"{mem.player_last or ''}\n{text}"
                    if options is None and order is None and self._echoes_question(text, chosen, question, recent):
                        # 「いいよ、一緒に選ぼう」 to 「一緒に選んでくれる？」: the topic word is the question's own
                        context["answer_not_topic"] = str(chosen)
                        chosen = NONE
                    if options is None and order is None and self._weak_topic(text, state, chosen, result):
                        # a topic guessed from shared letters only, while the line names what a
                        # character's own entry covers (何年 → the shop's history): that entry answers
                        context["weak_topic"] = str(chosen)
                        chosen = NONE
                    if options is None and order is None and self._unsure_story(text, state, chosen, addressee,
                                                                                   result):
                        # a story line fires only on a topic the line names: a guess from a word near
                        # in meaning (娘 ~ 二人) or shared letters is answered without the story moving on
                        context["unsure_story"] = str(chosen)
                        chosen = NONE

        if options is not None:
            return self._ask_which(text, state, mem, addressee, options, result, interpretation, turn, context)

        step = self.rules.handle(chosen, state, addressee)
        variety = Variety(mem.said, turn, self.book)
        answer: Answer | None = None
        model = None
        if order is not None:
            answer = self._serve(order, step, state, mem, turn, variety)
        if answer is None and step.free_talk is not None:
            if speak is not None:
                model = speak(step, addressee)
            if model is None or getattr(model, "source", None) != AnswerSource.MODEL:
                answer = self._authored(step, state, text, answer_text, mem, question, variety, turn, context,
                                        addressed=named_now and addressee in self.rules.people(state.place))
        if answer is not None:
            step = self._apply(step, answer)
        if chosen.is_intent:
            mem.topics[str(chosen)] = turn
        if not move and given is None:
            mem.player_last = text[:200]
        self._remember(mem, step, answer, model, turn, state)
        return PlayedTurn(step, chosen, addressee, interpretation, result, answer, model, mem, context, errors)

    # ------------------------------------------------------------------ context for reading a line

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
        if self.answerer.act(text).act not in ("なし", "質問", "同意", "反対"):
            return None
        carried = PlayerInput.parse(topic)
        return carried if carried in self.rules.candidates(state) else None

    def _echoes_question(self, text: str, chosen: PlayerInput, question: AskedQuestion | None,
                         recent: Recent) -> bool:
        if chosen.kind != "intent" or question is None or not recent.asked or question.kind == "invitation":
            return False
        if polarity(text, question.kind) not in ("yes", "no"):       # type: ignore[arg-type]
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
        for person in self.rules.people(state.place):
            for entry in self.answerer.entries_of(person):
                if not entry.condition.inputs and entry.entry.words and self.matcher.hits(forms, entry.entry.words):
                    return True
        return False

    # ------------------------------------------------------------------ orders

    def _order(self, text: str, state: GameState, addressee: str | None, mem: ConversationMemory,
               question: AskedQuestion | None) -> OrderFound | None:
        if not self.orders.any:
            return None
        offered = question.item if question is not None and question.kind == "offer" else None
        offer_yes = question is not None and question.kind == "offer" and polarity(text, "offer") == "yes"
        people = list(self.rules.people(state.place))
        mentioned = self._item_named(mem.player_last or "") or \
            (self._item_named(mem.last.text) if mem.last is not None and mem.last.turn >= state.turn else None)
        return self.orders.read(text, people, addressee, self.rules.responder(state.place),
                                last_order=mem.orders[-1] if mem.orders else None, offered=offered,
                                offer_yes=offer_yes, offer_open=question is not None and question.kind == "offer",
                                mentioned=mentioned)

    def _serve(self, order: OrderFound, step: Step, state: GameState, mem: ConversationMemory, turn: int,
               variety: Variety) -> Answer | None:
        menu = self.scenario.menus.get(order.server)
        if menu is None:
            return None
        flags: tuple[str, ...] = ()
        if order.item is not None:
            item = self.orders.item(order.server, order.item)
            if item is None:
                return None
            lines, mode, prefix, source = item.lines, item.mode, f"menu/{order.server}/{item.id}", AnswerSource.ORDER
            flags = (item.flag,) if item.flag else ()
        else:
            kind = "missing" if order.kind == "missing" else "ask"
            lines, mode, prefix, source = getattr(menu, kind), "cycle", f"menu/{order.server}/{kind}", AnswerSource.MENU
        if not lines:
            return None
        said = self.answerer.line_set(prefix, mode, lines, step.state, turn, prefix, variety)
        if said is None:
            # an order is always acknowledged: the line said least, longest ago
            refs = [f"{prefix}#{i + 1}" for i in range(len(lines))]
            chosen = variety.least_said(refs) or refs[0]
            index = refs.index(chosen)
            said = (index, {prefix: remember(step.state.variation.get(prefix, ()), index, len(lines))})
        index, variation = said
        line = lines[index]
        if order.item is not None:
            mem.orders.append(order.item)
            del mem.orders[:-20]
        return Answer(order.server, line.text, line.expression or NEUTRAL, source, f"{prefix}#{index + 1}",
                      "注文", variation, refs=(f"{prefix}#{index + 1}",), flags=flags,
                      detail={"order": order.to_dict()})

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
            answer = Answer(speaker, line, expression, AnswerSource.CLARIFY, ref, "なし", variation,
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
        """`addressed`: the player spoke to this character by name (or tapped them): only they answer from
        what they know."""
        free = step.free_talk
        assert free is not None
        found_act = self.answerer.act(text)
        act = found_act.act
        present = set(self.rules.people(state.place))
        # 1. an answer to the character's question (only when the line is about nothing else and does
        #    nothing else: a greeting, thanks or the bill is not an answer)
        if question is not None and free.intent is None and question.speaker in present \
                and act in _ANSWERING_ACTS:
            pol = polarity(text, question.kind)   # type: ignore[arg-type]
            if pol == "other" and question.turn < state.turn and question.kind != "wh":
                pol = None       # only the very next line answers a yes/no question with neither yes nor no
            if pol is not None:
                found = self._reply(question, pol, state, turn, variety)
                if found is not None:
                    context["reply"] = {"to": question.ref, "as": pol}
                    return self.answerer.make(found, act)
        # 2. a knowledge line of the topic (or of words the line names); for a question, unless a sentence
        #    said before or known by someone here answers it clearly better (3)
        found = self.answerer.knowledge(free, state, answer_text, turn, variety, only_speaker=addressed)
        asking = is_question(text) or act in ("質問", "本人")
        if asking:
            recalled = self._recall(text, state, free, mem, turn, variety, context,
                                    against=found[1] if found is not None else None, only=addressed)
            if recalled is not None:
                return recalled
        if found is not None:
            return self.answerer.make(found, act)
        # 4. a reaction to what the line does
        found = self.answerer.reaction(free, state, text, found_act, turn, variety)
        if found is not None:
            return self.answerer.make(found, act)
        # 5. a statement about something a character here knows: they go on about it
        if not asking:
            news = self._recall(text, state, free, mem, turn, variety, context, only=addressed, statement=True)
            if news is not None:
                return news
        # 6. small talk: the character brings something up
        if not is_question(text):
            found = self._chatter(free.speaker, state, turn, variety)
            if found is not None:
                return self.answerer.make(found, act)
        return self.answerer.make(self.answerer.fallback(free.speaker, state, turn, variety), act)

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
        act = {"yes": "同意", "no": "反対"}.get(pol)
        if act is None:
            return None
        found = self.answerer.reaction_of(question.speaker, act, state, turn, variety)
        if found is None:
            return None
        who, said_text, expression, _, ref, variation = found
        return who, said_text, expression, AnswerSource.REPLY, ref, variation

    def _recall(self, text: str, state: GameState, free: FreeTalk, mem: ConversationMemory, turn: int,
                variety: Variety, context: dict[str, Any], against: str | None = None, only: bool = False,
                statement: bool = False) -> Answer | None:
        """A sentence said before, or a line someone present knows, that answers the question; None when
        nothing does (or, with `against`, the knowledge line the topic would give, not clearly better).
        `only`: the addressed character's sentences only; `statement`: the line says rather than asks, so
        only a line not said yet that shares more with it follows."""
        present = [free.speaker] if only else list(self.rules.people(state.place))
        said_refs = set(mem.said) | {f"line/{i}" for i in state.shown_lines}
        said: list[Sentence] = []
        for ref in said_refs:
            said.extend(s for s in self.facts.of(ref) if s.speaker in present)
        for spoken in mem.spoken:
            if spoken.speaker in present:
                said.extend(self.facts.spoken("model", spoken.speaker, spoken.text))
        known: list[Sentence] = []
        for person in present:
            for ref in self._known_refs(person, state):
                if ref not in said_refs:
                    known.extend(self.facts.of(ref))
        prefer = free.speaker if free.speaker != self.rules.responder(state.place) else None
        topic = frozenset(self._topic_refs(free.intent, present, state))
        found = self.facts.best(text, [] if statement else said, known, prefer=prefer, topic=topic)
        least = STATEMENT_MIN if statement else RECALL_MIN if found is not None and found.said else NEWS_MIN
        if found is None or found.score < least:
            if found is not None and not statement:
                context["recall"] = {"below": round(found.score, 2), "ref": found.sentence.ref}
            return None
        if against is not None:
            own = max((self.facts.score(text, s) for s in self.facts.spoken("knowledge", None, against)),
                      default=0.0) + 1.0
            # the topic's own next line answers as well, unless this sentence fits clearly better (and a
            # sentence said before must fit better still: news before a repeat)
            if found.score < own + (2.0 if found.said else 1.0):
                return None
        sentence = found.sentence
        if found.said and not found.counted and max(mem.said.get(sentence.ref, [-1])) >= turn - 1:
            return None         # said on the last turn: the player is asking for more, not for the same again
        speaker = sentence.speaker or free.speaker
        context["recall"] = {"ref": sentence.ref, "score": round(found.score, 2), "said": found.said,
                             "sentence": sentence.text}
        if not found.said:
            news = self._say_ref(sentence.ref, state, turn)
            if news is not None:
                return news
        character = self.scenario.characters[speaker]
        lines = character.recall.lines if character.recall else []
        prefix = f"recall/{speaker}"
        said_lead = self.answerer.line_set(prefix, character.recall.mode if character.recall else "cycle", lines,
                                           state, turn, prefix, variety) if lines else None
        if lines and said_lead is None:
            refs = [f"{prefix}#{i + 1}" for i in range(len(lines))]
            index = refs.index(variety.least_said(refs) or refs[0])
            said_lead = (index, {prefix: remember(state.variation.get(prefix, ()), index, len(lines))})
        if said_lead is not None:
            index, variation = said_lead
            lead = lines[index]
            line = lead.text.replace("{said}", sentence.text)
            expression = lead.expression or NEUTRAL
            refs: tuple[str, ...] = (f"{prefix}#{index + 1}",)
        else:
            line, expression, variation, refs = sentence.text, self.book.get(sentence.ref).expression \
                if self.book.get(sentence.ref) else NEUTRAL, {}, ()
        return Answer(speaker, line, expression, AnswerSource.RECALL, refs[0] if refs else sentence.ref, "質問", variation,
                      refs=refs, detail={"recalled": sentence.ref})

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
            if entry.condition.inputs and not entry.condition.holds_for_intent(shown):
                continue
            refs += [f"knowledge/{person}/{entry.index}#{n}" for n in range(1, len(entry.entry.lines) + 1)]
        reaction = self.scenario.reactions.get(person, {}).get("本人")
        if reaction is not None:
            refs += [f"reaction/{person}/本人#{n}" for n in range(1, len(reaction.lines) + 1)]
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
        said_act = "質問"
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

    @staticmethod
    def _apply(step: Step, answer: Answer) -> Step:
        """The step with the answer said first: its variation history, face and flags."""
        expressions = dict(step.state.expressions)
        # The answer comes before the step's lines: a later line's effect on the same face wins.
        if not any(getattr(e, "character", None) == answer.speaker for line in step.lines for e in line.effects):
            expressions[answer.speaker] = answer.expression
        state = step.state.with_said(variation=answer.variation, expressions=expressions, flags=answer.flags)
        free = step.free_talk if step.free_talk is not None else FreeTalk(answer.speaker, None, ())
        return replace(step, free_talk=replace(free, speaker=answer.speaker), state=state)

    def _remember(self, mem: ConversationMemory, step: Step, answer: Answer | None, model: Any, turn: int,
                  before: GameState) -> None:
        said_refs = list(answer.refs) if answer is not None else []
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
        asked = self._question(last, last_ref, step.state, turn) if last is not None else None
        if answer is not None and answer.source in (AnswerSource.REPLY, AnswerSource.ORDER):
            mem.question = None           # answered (an offer is answered by the order)
        if asked is not None:
            mem.question = asked          # a new question replaces the open one
        elif mem.question is not None and (turn - mem.question.turn >= self._lifetime(mem.question) or
                                           mem.question.speaker not in self.rules.people(step.state.place)):
            mem.question = None           # it ran out, or the one who asked is not here
        if step.state.place != before.place:
            mem.invitation = None
            mem.came_from = before.place
        if mem.question is not None and mem.question.kind == "invitation":
            mem.invitation = mem.question

    def _question(self, last: SpokenText, ref: str | None, state: GameState, turn: int) -> AskedQuestion | None:
        line = self.book.get(ref) if ref else None
        if ref is not None and ref.startswith("menu/") and "/ask#" in ref:
            # 「何にする？　コーヒーかカレーだよ。」: a menu's ask line always offers
            return AskedQuestion(ref=ref, speaker=last.speaker, turn=turn, kind="offer")
        if not asks(last.text) and not (line is not None and line.replies is not None):
            return None
        invited = invited_place(last.text, self.names, list(self.rules.exits(state.place)))
        item = self._item_named(last.text)
        kind = question_kind(last.text, invited=invited is not None, offered=item is not None)
        return AskedQuestion(ref=ref or "model", speaker=last.speaker, turn=turn, kind=kind, item=item,
                             place=invited)

    def _item_named(self, text: str) -> str | None:
        forms = TextForms.of(text)
        for (_owner, item), words in self.orders._words.items():
            if self.matcher.hits(forms, words):
                return item
        return None
