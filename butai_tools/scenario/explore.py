"""`butai lint` plays the scenario: walks through it on a stage in memory, through the director's own path.

A scenario that loads can still fail when it is played (a bug the engine has with one of its features, a
turn too large to write): lint finds it the way a player would, by playing.  Each walk starts a new game and
sends, turn by turn, one of the inputs the state allows (a topic with a line waiting first), an author's own
example line, a yes or a no to a question just asked, an order of an item on a menu here, or a plain line
(probes.json), chosen by a seeded generator, so the same scenario is always walked the same way.  Every turn
goes through `Director.reply` (stage_play.py); a turn the director cannot play is a lint error naming the
inputs that lead to it.  The walk also sees what only play shows: a character's question followed in the
same turn by another line, so that the player's answer lands on the later one.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from chalicelib.conversation.questions import asks
from chalicelib.scenario import PlayerInput
from chalicelib.scenario.loader import CompiledScenario

from .stage_play import StagePlay

PROBES = json.loads((Path(__file__).with_name("probes.json")).read_text(encoding="utf-8"))
WALKS = 24
STEPS = 14


@dataclass
class Finding:
    where: str
    message: str
    severity: str        # error / warning
    term: str | None = None


@dataclass
class Exploration:
    turns: int = 0
    fired: set[str] = field(default_factory=set)
    endings: set[str] = field(default_factory=set)
    findings: list[Finding] = field(default_factory=list)


def _asks(text: str, has_replies: bool) -> bool:
    return has_replies or asks(text)


def explore(path: Path, scenario: CompiledScenario, *, walks: int = WALKS, steps: int = STEPS,
            seed: int = 0) -> Exploration:
    out = Exploration()
    try:
        stage = StagePlay(path, scenario)
    except Exception as exc:  # noqa: BLE001 - what fails to start a game is the finding
        out.findings.append(Finding("play", f"the game cannot start ({type(exc).__name__}: {exc}); creating its "
                                            f"stage fails", "error"))
        return out
    rules = stage.rules
    seen_errors: set[str] = set()
    seen_followed: set[tuple[str, str]] = set()
    items_at = {place: [item.id for person in p.people for item in (scenario.menus[person].items
                                                                     if person in scenario.menus else ())]
                for place, p in scenario.places.items()}
    out.fired.update(rules.start().line_ids)
    for walk in range(walks):
        rng = random.Random(seed * 1000 + walk)
        if walk:
            stage.restart()
        path_taken: list[str] = []
        asked = False
        for _ in range(steps):
            state = stage.state
            if state.ended:
                break
            choice = _choose(rng, rules, state, scenario, items_at.get(state.place, []), asked)
            path_taken.append(str(choice))
            played = stage.play(choice) if isinstance(choice, str) else stage.play(given=choice)
            out.turns += 1
            record = played.turn
            if record is not None and record.unplayable:
                error = (record.errors or ["unplayable"])[0]
                if error not in seen_errors:
                    seen_errors.add(error)
                    out.findings.append(Finding(
                        "play", f"a turn cannot be played ({error}); it happens after: "
                                f"{' → '.join(path_taken)} (butai trace {path.name} … shows it)", "error"))
                break
            step = played.played.step if played.played is not None else None
            if step is None:
                continue
            out.fired.update(step.line_ids)
            for notice in step.notices:
                ending = getattr(notice, "id", None)
                if ending:
                    out.endings.add(ending)
            _followed(step, scenario, out, seen_followed)
            last = step.lines[-1] if step.lines else None
            asked = last is not None and last.scripted and _asks(last.text, scenario.lines[last.id].model.replies
                                                                 is not None)
    return out


def _choose(rng: random.Random, rules, state, scenario: CompiledScenario, items: list[str],
            asked: bool) -> PlayerInput | str:
    inputs, answered = rules.candidates_split(state)
    roll = rng.random()
    if asked and roll < 0.5:
        return rng.choice(PROBES["yes"] + PROBES["no"])
    waiting = [i for i in inputs if i.is_intent]
    if waiting and roll < 0.55:
        return rng.choice(waiting)                       # a topic with a line waiting: the story moves on
    if roll < 0.65:
        topic = rng.choice(waiting + answered) if waiting + answered else None
        examples = scenario.intents[topic.target].examples if topic is not None else []
        if examples:
            return rng.choice(examples)                  # the author's own phrasing, read by the interpreter
    if items and roll < 0.75:
        return rng.choice(PROBES["order"]).replace("{item}", rng.choice(items))
    if items and roll < 0.78:
        return rng.choice(PROBES["pay"])
    moves = [i for i in inputs if not i.is_intent]
    if moves and roll < 0.9:
        return rng.choice(moves)                         # a move or leaving (an ending, where there is one)
    if roll < 0.95:
        return PlayerInput.none()
    return rng.choice(PROBES["anytime"])


def _followed(step, scenario: CompiledScenario, out: Exploration, seen: set[tuple[str, str]]) -> None:
    """A scripted question followed in its turn by another character line: the answer lands on the later."""
    lines = list(step.lines)
    for i, line in enumerate(lines[:-1]):
        if not line.scripted:
            continue
        model = scenario.lines[line.id].model
        if not _asks(line.text, model.replies is not None):
            continue
        later = lines[i + 1]
        # (a chain that answers the question — another character's retort — is the author's dialogue; a
        # progression line after it, or a later line that asks too, takes the player's answer away)
        if later.trigger != "progression" and not (later.scripted and _asks(
                later.text, scenario.lines[later.id].model.replies is not None)):
            continue
        if (line.id, later.id) in seen:
            continue
        seen.add((line.id, later.id))
        how = "its chain" if later.trigger == "chain" else f"the {later.trigger} line"
        out.findings.append(Finding(
            f"line {line.id}", f"asks the player something, but {how} {later.id} is said after it in the same turn, "
                               f"so the player's answer lands on {later.id}; make {line.id} the last line of its turn "
                               f"(e.g. give {later.id} a 未:{line.id} term or move the question to {later.id})",
            "warning", later.id))
