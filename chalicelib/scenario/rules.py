"""`GameRules`: which lines fire for an input, and which inputs make sense now.

Pure and synchronous: no I/O, no clock, no randomness.  Everything a step
looks at is indexed at construction (lines by place and by input term, the
topics of each place), so a step costs the same however many lines exist
elsewhere or have been shown before.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..faces import NEUTRAL
from .conditions import Effect, ExpressionEffect, FlagEffect
from .inputs import LEAVE, PlayerInput
from .loader import CompiledKnowledge, CompiledLine, CompiledScenario, CompiledScene, paused_gc
from .model import Knowledge, PlaceLine
from .state import GameState, StepShown
from .variation import arrival_key, pick, remember

# arrival_reaction and ending lines are authored per place but not scripted
# lines: they have no id in conditions and are never recorded as shown.
Trigger = Literal["start", "response", "chain", "arrival", "progression", "arrival_reaction", "ending"]


def token(index: int) -> str:
    """The option token of the `index`-th (0-based) candidate of one call."""
    return f"A{index + 1}"


# ---------------------------------------------------------------- step parts

@dataclass(frozen=True)
class FiredLine:
    id: str
    speaker: str
    text: str
    effects: tuple[Effect, ...]
    trigger: Trigger          # why it fired: start / response / chain / arrival / progression / …
    scripted: bool = True     # a scene line (recorded as shown), not a place's arrival or closing line

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "speaker": self.speaker, "text": self.text, "trigger": self.trigger,
                "effects": [str(e) for e in self.effects]}


@dataclass(frozen=True)
class FreeTalk:
    """A request for free conversation.  When present it comes before every
    line of its step (it only happens when no response line fired)."""
    speaker: str
    intent: str | None
    knowledge: tuple[Knowledge, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"speaker": self.speaker, "intent": self.intent, "knowledge": [k.info for k in self.knowledge]}


@dataclass(frozen=True)
class ExitsNotice:
    destinations: tuple[str, ...]
    kind: Literal["exits"] = field(default="exits", init=False)

    @property
    def text(self) -> str:
        if not self.destinations:
            return "ここから行ける場所はありません。"
        return "行き先: " + "、".join(self.destinations)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "destinations": list(self.destinations)}


RefusalReason = Literal["not_an_exit", "unknown_place"]


@dataclass(frozen=True)
class RefusedMoveNotice:
    place: str
    reason: RefusalReason
    exits: tuple[str, ...] = ()
    kind: Literal["refused_move"] = field(default="refused_move", init=False)

    @property
    def text(self) -> str:
        where = "、".join(self.exits) if self.exits else "なし"
        if self.reason == "unknown_place":
            return f"「{self.place}」という場所はありません。（行き先: {where}）"
        return f"ここから{self.place}へは行けません。（行き先: {where}）"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "place": self.place, "reason": self.reason, "exits": list(self.exits)}


@dataclass(frozen=True)
class AlreadyHereNotice:
    place: str
    kind: Literal["already_here"] = field(default="already_here", init=False)

    @property
    def text(self) -> str:
        return f"もう{self.place}にいます。"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "place": self.place}


@dataclass(frozen=True)
class EndingNotice:
    """The game has ended (leaving a place with an ending); every later input
    gets this notice again until the game is started anew."""
    place: str
    title: str
    body: str
    id: str | None = None
    kind: Literal["ending"] = field(default="ending", init=False)

    @property
    def text(self) -> str:
        return self.title

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "place": self.place, "title": self.title, "text": self.body,
                **({"ending": self.id} if self.id else {})}


Notice = ExitsNotice | RefusedMoveNotice | AlreadyHereNotice | EndingNotice


@dataclass(frozen=True)
class Step:
    input: PlayerInput | None          # None for start()
    lines: tuple[FiredLine, ...]
    free_talk: FreeTalk | None
    notices: tuple[Notice, ...]
    state: GameState

    @property
    def effects(self) -> tuple[Effect, ...]:
        return tuple(e for line in self.lines for e in line.effects)

    @property
    def line_ids(self) -> tuple[str, ...]:
        return tuple(line.id for line in self.lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "input": None if self.input is None else str(self.input),
            "lines": [line.to_dict() for line in self.lines],
            "free_talk": None if self.free_talk is None else self.free_talk.to_dict(),
            "notices": [n.to_dict() for n in self.notices],
            "state": self.state.to_dict(),
        }


@dataclass(frozen=True, eq=False)
class _Topic:
    """One intent as seen from one place, for candidate building (topics are kept in the scenario's
    intent order)."""
    input: PlayerInput
    responses: tuple[CompiledLine, ...]
    knowledge: tuple[CompiledKnowledge, ...]   # of people present, naming this intent


def _place_line(line: PlaceLine, line_id: str, trigger: Trigger) -> FiredLine:
    effects: tuple[Effect, ...] = ()
    if line.expression is not None:
        effects = (ExpressionEffect(line.speaker, line.expression),)
    return FiredLine(line_id, line.speaker, line.text, effects, trigger, scripted=False)


class _Context:
    __slots__ = ("input", "shown", "last", "starting", "arrived", "fired", "expressions", "variation", "flags")

    def __init__(self, input: PlayerInput | None, state: GameState, starting: bool) -> None:
        self.input = input
        self.shown = StepShown(state.shown)
        self.last: str | None = None
        self.starting = starting
        self.arrived = False
        self.fired: list[FiredLine] = []
        self.expressions = dict(state.expressions)
        self.variation: dict[str, tuple[int, ...]] = {}
        self.flags: list[str] = []          # flags set by lines fired in this step

    def say(self, line: FiredLine) -> None:
        """An unscripted line (arrival reaction, closing line): shown, not recorded as shown."""
        for effect in line.effects:
            if isinstance(effect, ExpressionEffect):
                self.expressions[effect.character] = effect.key
        self.fired.append(line)

    def holds(self, line: CompiledLine) -> bool:
        # A line fires once per game, unless its author marked it repeatable (then once per step).
        if line.id in self.shown and not (line.repeatable and line.id not in self.shown.fired):
            return False
        return line.condition.holds(self.input, self.shown, self.last, self.starting, self.arrived)

    def fire(self, line: CompiledLine, trigger: Trigger, scene: CompiledScene) -> None:
        """Fire `line`, then its chain (first unfired holding 直後 follower, repeatedly)."""
        current: CompiledLine | None = line
        while current is not None:
            line = current
            self.shown.add(line.id)
            self.last = line.id
            for effect in line.effects:
                if isinstance(effect, ExpressionEffect):
                    self.expressions[effect.character] = effect.key
                elif isinstance(effect, FlagEffect) and effect.name not in self.shown.flags:
                    self.shown.flags.add(effect.name)
                    self.flags.append(effect.name)
            self.fired.append(FiredLine(line.id, line.speaker, line.text, line.effects, trigger))
            trigger = "chain"
            current = next((f for f in scene.chains.get(line.id, ()) if self.holds(f)), None)

    def first(self, lines: Iterable[CompiledLine], speaker: str | None = None) -> CompiledLine | None:
        for line in lines:
            if (speaker is None or line.speaker == speaker) and self.holds(line):
                return line
        return None


class GameRules:
    def __init__(self, scenario: CompiledScenario) -> None:
        with paused_gc():
            self._index(scenario)

    def _index(self, scenario: CompiledScenario) -> None:
        self.scenario = scenario
        self._knowledge_by_intent: dict[tuple[str, str], tuple[CompiledKnowledge, ...]] = {}
        self._intents_known: dict[str, tuple[str, ...]] = {}
        for character, entries in scenario.knowledge.items():
            grouped: dict[str, list[CompiledKnowledge]] = {}
            for entry in entries:
                for intent_id in dict.fromkeys(entry.intents):
                    grouped.setdefault(intent_id, []).append(entry)
            for intent_id, group in grouped.items():
                self._knowledge_by_intent[(character, intent_id)] = tuple(group)
            self._intents_known[character] = tuple(grouped)
        self._topics = {place_id: self._build_topics(place_id) for place_id in scenario.places}

    def _build_topics(self, place_id: str) -> tuple[_Topic, ...]:
        sc = self.scenario
        scene = sc.scene(place_id)
        people = tuple(dict.fromkeys(sc.places[place_id].people))
        relevant = {i.target_id for i in scene.responses if i.is_intent}
        for person in people:
            relevant.update(self._intents_known.get(person, ()))
        topics = []
        for intent_id in sorted(relevant, key=sc.intent_order.__getitem__):
            wanted = PlayerInput.intent(intent_id)
            knowledge = tuple(k for person in people for k in self._knowledge_by_intent.get((person, intent_id), ()))
            topics.append(_Topic(wanted, scene.responses.get(wanted, ()), knowledge))
        return tuple(topics)

    # ---------------------------------------------------------------- places

    def responder(self, place_id: str) -> str | None:
        return self.scenario.responder(place_id)

    def people(self, place_id: str) -> tuple[str, ...]:
        return tuple(self.scenario.places[place_id].people)

    def exits(self, place_id: str) -> tuple[str, ...]:
        return tuple(self.scenario.places[place_id].exits)

    def effective_addressee(self, state: GameState, addressee: str | None) -> str | None:
        """The addressee as the rules use it: None when absent from the place."""
        if addressee is None:
            return None
        if addressee not in self.scenario.characters:
            raise ValueError(f'unknown character "{addressee}" as addressee')
        return addressee if addressee in self.scenario.places[state.place].people else None

    # ---------------------------------------------------------------- steps

    def new_state(self) -> GameState:
        sc = self.scenario
        return GameState(sc.start_place, (), None, {c: NEUTRAL for c in sc.characters}, 0)

    def start(self) -> Step:
        state = self.new_state()
        ctx = _Context(None, state, starting=True)
        scene = self.scenario.scene(state.place)
        line = ctx.first(scene.starts)
        if line is not None:
            ctx.fire(line, "start", scene)
        return self._finish(ctx, state, None, None, (), place=state.place, turn=0)

    def handle(self, input: PlayerInput | str, state: GameState, addressee: str | None = None, *,
               answering: bool = False) -> Step:
        """One step.  `answering`: the なし input answers a character's question that has authored replies,
        so no なし response line takes the turn (the answer is the asker's reply, said in free conversation);
        progression plays as for any input."""
        if isinstance(input, str):
            input = PlayerInput.parse(input)
        sc = self.scenario
        if input.is_intent and input.target not in sc.intents:
            raise ValueError(f'unknown intent "{input.target}" in input "{input}"')
        if state.place not in sc.places:
            raise ValueError(f'state is at unknown place "{state.place}"')
        addressee = self.effective_addressee(state, addressee)
        place_id = state.place
        turn = state.turn + 1
        if state.ended:
            # The game is over: nothing fires until a new game starts.
            notice = self.ending_of(state)
            return Step(input, (), None, (notice,) if notice else (),
                        state.advanced(place=place_id, fired=(), expressions=state.expressions, turn=turn))
        refusal = self._refuse_move(place_id, input.target_id) if input.is_move else None
        if refusal is not None:
            # A refused move changes nothing, not even by a parting line.
            return Step(input, (), None, (refusal,),
                        state.advanced(place=place_id, fired=(), expressions=state.expressions, turn=turn))

        ctx = _Context(input, state, starting=False)
        scene = sc.scene(place_id)
        responder = sc.responder(place_id)
        only_speaker = addressee if addressee is not None and addressee != responder else None
        response = None if answering and input.is_none else ctx.first(scene.responses.get(input, ()), only_speaker)
        if response is not None:
            ctx.fire(response, "response", scene)
        if input.is_move:
            self._arrive(ctx, input.target_id, state, turn)
            return self._finish(ctx, state, input, None, (), place=input.target_id, turn=turn)
        if input.is_leave:
            return self._leave(ctx, state, input, place_id, turn)
        free_talk: FreeTalk | None = None
        if response is None and (speaker := addressee or responder) is not None:
            free_talk = FreeTalk(speaker, input.target, self._knowledge(speaker, ctx))
        progression = ctx.first(scene.progressions)
        if progression is not None:
            ctx.fire(progression, "progression", scene)
        return self._finish(ctx, state, input, free_talk, (), place=place_id, turn=turn)

    def _arrive(self, ctx: _Context, place_id: str, state: GameState, turn: int) -> None:
        """An accepted move: the first 到着 line of the new place that holds (with its chain), else its arrival
        reaction."""
        ctx.arrived = True
        arrival_scene = self.scenario.scene(place_id)
        line = ctx.first(arrival_scene.arrivals)
        if line is not None:
            ctx.fire(line, "arrival", arrival_scene)
        else:
            self._arrival_reaction(ctx, place_id, state, turn)

    def _leave(self, ctx: _Context, state: GameState, input: PlayerInput, place_id: str, turn: int) -> Step:
        """離脱: the first ending whose condition holds on the story so far (this step's parting line
        included), with its closing lines that hold; else the exits."""
        ending = next((e for e in self.scenario.endings.get(place_id, ()) if e.condition.holds_in(ctx.shown)), None)
        if ending is None:
            exits = (ExitsNotice(tuple(self.scenario.places[place_id].exits)),)
            return self._finish(ctx, state, input, None, exits, place=place_id, turn=turn)
        for n, (closing, when) in enumerate(ending.lines):
            if when.holds_in(ctx.shown):
                ctx.say(_place_line(closing, f"{ending.line_prefix}#{n + 1}", "ending"))
        notices = (EndingNotice(place_id, ending.model.title, ending.model.text, ending.id),)
        return self._finish(ctx, state, input, None, notices, place=place_id, turn=turn, ended=True,
                            ending=ending.id)

    def progress(self, step: Step) -> Step:
        """A step after which free conversation set a flag (a reply's effect, an order's flag): the place's
        progression line that now holds, with its chain, if the step fired none — so a yes that changes the
        story moves it on in the same turn."""
        state = step.state
        if step.input is None or not (step.input.is_intent or step.input.is_none) or state.ended:
            return step
        if any(line.trigger == "progression" for line in step.lines):
            return step
        ctx = _Context(step.input, state, starting=False)
        scene = self.scenario.scene(state.place)
        line = ctx.first(scene.progressions)
        if line is None:
            return step
        ctx.fire(line, "progression", scene)
        new_state = state.advanced(place=state.place, fired=(f.id for f in ctx.fired if f.scripted),
                                   expressions=ctx.expressions, turn=state.turn, variation=ctx.variation,
                                   flags=ctx.flags)
        return replace(step, lines=step.lines + tuple(ctx.fired), state=new_state)

    def _arrival_reaction(self, ctx: _Context, place_id: str, state: GameState, turn: int) -> None:
        """Nothing scripted greets the player here: the place's arrival reaction, if any."""
        arrival = self.scenario.places[place_id].arrival
        if arrival is None:
            return
        key = arrival_key(place_id)
        history = state.variation.get(key, ())
        index = pick(len(arrival.lines), arrival.mode, history, f"{key}/{turn}")
        if index is None:
            return
        ctx.variation[key] = remember(history, index, len(arrival.lines))
        ctx.say(_place_line(arrival.lines[index], f"{place_id}/arrival#{index + 1}", "arrival_reaction"))

    def ending_of(self, state: GameState) -> EndingNotice | None:
        """The ending a finished game reached (for showing its card), or None.  A state stored before endings
        had ids gets its place's last (default) ending."""
        if not state.ended:
            return None
        endings = self.scenario.endings.get(state.place, ())
        ending = next((e for e in endings if e.id == state.ending), endings[-1] if endings else None)
        if ending is None:
            return None
        return EndingNotice(state.place, ending.model.title, ending.model.text, ending.id)

    def _refuse_move(self, place_id: str, target: str) -> Notice | None:
        if target == place_id:
            return AlreadyHereNotice(target)
        exits = tuple(self.scenario.places[place_id].exits)
        if target not in self.scenario.places:
            return RefusedMoveNotice(target, "unknown_place", exits)
        if target not in exits:
            return RefusedMoveNotice(target, "not_an_exit", exits)
        return None

    def _finish(self, ctx: _Context, state: GameState, input: PlayerInput | None, free_talk: FreeTalk | None,
                notices: tuple[Notice, ...], *, place: str, turn: int, ended: bool | None = None,
                ending: str | None = None) -> Step:
        new_state = state.advanced(place=place, fired=(f.id for f in ctx.fired if f.scripted),
                                   expressions=ctx.expressions, turn=turn, variation=ctx.variation, ended=ended,
                                   flags=ctx.flags, ending=ending)
        return Step(input, tuple(ctx.fired), free_talk, notices, new_state)

    def _knowledge(self, character: str, ctx: _Context) -> tuple[Knowledge, ...]:
        return tuple(k.entry for k in self.scenario.knowledge.get(character, ())
                     if k.condition.holds(ctx.input, ctx.shown, ctx.last, ctx.starting, ctx.arrived))

    # ---------------------------------------------------------------- questions for the interpreter

    def knows_about(self, character: str, intent_id: str, state: GameState) -> bool:
        """Whether `character` has knowledge naming 意図:intent_id whose
        condition holds for that input now (used by addressee narrowing)."""
        shown = state.shown
        wanted = PlayerInput.intent(intent_id)
        return any(k.condition.holds_for_intent(shown, wanted)
                   for k in self._knowledge_by_intent.get((character, intent_id), ()))

    def first_response_line(self, input: PlayerInput | str, state: GameState,
                            addressee: str | None = None) -> CompiledLine | None:
        """The response line `handle(input, state, addressee)` would fire
        first; with no addressee, the first that could fire now whoever speaks it."""
        if isinstance(input, str):
            input = PlayerInput.parse(input)
        if input.is_move and self._refuse_move(state.place, input.target_id) is not None:
            return None
        addressee = self.effective_addressee(state, addressee)
        responder = self.responder(state.place)
        only_speaker = addressee if addressee is not None and addressee != responder else None
        ctx = _Context(input, state, starting=False)
        return ctx.first(self.scenario.scene(state.place).responses.get(input, ()), only_speaker)

    def addressee_allows(self, input: PlayerInput | str, state: GameState, addressee: str | None) -> bool:
        """Addressee narrowing for one candidate: False when the player spoke
        to someone present other than the responder, the input is an intent
        whose first response line that could fire is someone else's, the
        addressee has no response line of their own for it, and no knowledge
        of it either.  Keeps exactly the intents for which `handle` with that
        addressee gives the addressee's line or free conversation with
        something to say."""
        if isinstance(input, str):
            input = PlayerInput.parse(input)
        if not input.is_intent:
            return True
        addressee = self.effective_addressee(state, addressee)
        if addressee is None or addressee == self.responder(state.place):
            return True
        first = self.first_response_line(input, state)
        if first is None or first.speaker == addressee:
            return True
        if self.first_response_line(input, state, addressee) is not None:
            return True
        return self.knows_about(addressee, input.target_id, state)

    def candidates_split(self, state: GameState) -> tuple[list[PlayerInput], list[PlayerInput]]:
        """(`input_candidates`, `answered_intents`) computed in one pass."""
        shown = state.shown
        inputs: list[PlayerInput] = []
        answered: list[PlayerInput] = []
        for topic in self._topics.get(state.place, ()):
            any_shown = False
            closed = False         # an unfired response waits on a line not shown yet
            could_fire = False
            for line in topic.responses:
                if line.id in shown:
                    any_shown = True
                    if not line.repeatable:
                        continue
                cond = line.condition
                if cond.holds_for_intent(shown, topic.input):
                    could_fire = True
                    break
                if not closed and cond.waits_for_lines(shown, topic.input):
                    closed = True
            if could_fire:
                inputs.append(topic.input)
                continue
            if not any_shown and closed:
                continue
            if any_shown or any(k.condition.holds_for_intent(shown, topic.input) for k in topic.knowledge):
                answered.append(topic.input)
        place = self.scenario.places[state.place]
        inputs.extend(PlayerInput.move(p) for p in place.exits)
        inputs.append(LEAVE)
        return inputs, answered

    def input_candidates(self, state: GameState) -> list[PlayerInput]:
        return self.candidates_split(state)[0]

    def answered_intents(self, state: GameState) -> list[PlayerInput]:
        return self.candidates_split(state)[1]

    def candidates(self, state: GameState) -> list[PlayerInput]:
        """`input_candidates + answered_intents`: the ordered list tokens A1… name."""
        inputs, answered = self.candidates_split(state)
        return inputs + answered

    def tokens(self, state: GameState) -> list[tuple[str, PlayerInput]]:
        return [(token(i), c) for i, c in enumerate(self.candidates(state))]

    # ---------------------------------------------------------------- state checks

    def check_state(self, state: GameState) -> list[str]:
        """What in a stored state no longer matches this scenario (for states
        saved before the scenario was edited); empty when all is well."""
        sc = self.scenario
        problems = []
        if state.place not in sc.places:
            problems.append(f'unknown place "{state.place}"')
        unknown = [i for i in state.iter_shown() if i not in sc.lines]
        if unknown:
            problems.append("unknown lines shown: " + ", ".join(unknown))
        for character in state.expressions:
            if character not in sc.characters:
                problems.append(f'unknown character "{character}" in expressions')
        return problems

    def restore(self, data: str | bytes | Mapping[str, Any]) -> GameState:
        """Read a stored state and check it against this scenario.  Characters
        added to the scenario since start neutral."""
        state = GameState.from_json(data) if isinstance(data, (str, bytes)) else GameState.from_dict(data)
        problems = self.check_state(state)
        if state.place not in self.scenario.places:
            raise ValueError("stored state does not fit the scenario: " + "; ".join(problems))
        expressions = {c: state.expressions.get(c, NEUTRAL) for c in self.scenario.characters}
        return GameState(state.place, state.iter_shown(), state.last_line, expressions, state.turn,
                         variation=state.variation, ended=state.ended, flags=state.flags, ending=state.ending)
