"""Dialogue sets: multi-turn cases replayed through the whole turn logic and asserted
(`butai trace SCENARIO --dialogue FILE`).

A set is ``{"scenario", "description", "dialogues": [{"id", "split", "note", "turns": [...]}]}``; each
dialogue starts a new game.  A turn is one of

- ``{"say": "text", "to": "神楽坂葵"}`` — a player's line (``to``: the character tapped, optional);
- ``{"input": "なし"}`` — a written input (意図:X, 移動:P, 離脱, なし), played without reading a text;
- ``{"move": "控え室"}`` — a destination button;
- ``{"restart": true}`` — the restart control after an ending;

with an optional ``expect`` (the turn is then a case).  Every key of ``expect`` must hold:

| key | holds when |
|---|---|
| ``input`` | the input the rules played is this one (or one of a list) |
| ``not_input`` | … is none of these |
| ``answer`` | the answer's kind is one of these: knowledge, reaction, ``reaction:<act>``, fallback, recall, reply, order, menu, clarify, chatter, echo, unsure, form, model, ``script`` (only scripted lines) |
| ``not`` | the answer's kind is none of these |
| ``lines`` / ``no_lines`` | these scripted line ids fired / did not fire |
| ``says`` / ``says_any`` / ``not_says`` | the characters' words this turn hold every / one / none of these |
| ``speaker`` | the answer was said by this character id |
| ``place`` / ``ended`` | where the player is afterwards / whether the visit has ended |
| ``order`` | this menu item was served (``null``: nothing was) |
| ``fresh`` | no line said this turn was said before in the dialogue |
| ``notices`` | the turn gave this many notices |

A turn is *right* when every key holds, *clarify* when the character asked which topic was meant
(counted apart: neither right nor wrong), *unsafe* when the player moved or the visit ended and
``expect`` allowed neither, else *wrong*.  A *brush-off* is a player's line answered by a fallback or a
質問 reaction (the stock "I don't know").
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from butai_tools.interpret.evaluation import read_json
from butai_tools.scenario.stage_play import StagePlay
from chalicelib.conversation import PlayedTurn
from chalicelib.scenario import GameRules, PlayerInput, Step
from chalicelib.scenario.inputs import InputSyntaxError

EXPECT_KEYS = ("input", "not_input", "answer", "not", "lines", "no_lines", "says", "says_any", "not_says", "speaker",
               "place", "ended", "order", "fresh", "notices")
BRUSH_OFFS = ("fallback", "reaction:質問")


class DialogueError(ValueError):
    pass


@dataclass
class TurnOutcome:
    dialogue: str
    split: str | None
    number: int
    turn: dict[str, Any]
    played: PlayedTurn | None
    step: Step
    kind: str | None               # answer kind as the set names it (reaction:<act>, script, …)
    said: list[str]                # the characters' words this turn, in order
    outcome: str | None = None     # right / clarify / wrong / unsafe (None: not a case)
    failures: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        t = self.turn
        if "say" in t:
            return t["say"]
        if "input" in t:
            return f"<{t['input']}>"
        if "move" in t:
            return f"<button {t['move']}>"
        return "<restart>"

    def to_dict(self) -> dict[str, Any]:
        played = self.played
        answer = played.answer if played else None
        return {"dialogue": self.dialogue, "split": self.split, "turn": self.number, "text": self.text,
                "input": str(played.input) if played else "開始", "kind": self.kind,
                "speaker": answer.speaker if answer else None, "said": self.said,
                "lines": [line.id for line in self.step.lines], "place": self.step.state.place,
                "ended": self.step.state.ended, "outcome": self.outcome, "failures": self.failures,
                "context": played.context if played else {}, "rule": played.interpretation.rule if played else None}


def load_dialogues(path: str | Path, rules: GameRules) -> dict[str, Any]:
    source = str(path)
    data = read_json(path, DialogueError)
    if not isinstance(data, dict) or not isinstance(data.get("dialogues"), list):
        raise DialogueError(f'{source}: expected an object with a "dialogues" list')
    problems, seen = [], set()
    sc = rules.scenario
    for index, dialogue in enumerate(data["dialogues"]):
        where = f"{source}:dialogue {dialogue.get('id') or f'#{index + 1}'}"
        if not isinstance(dialogue, dict) or not isinstance(dialogue.get("turns"), list) or not dialogue["turns"]:
            problems.append(f"{where}: expected an object with a non-empty \"turns\" list")
            continue
        if dialogue.get("id") in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(dialogue.get("id"))
        for n, turn in enumerate(dialogue["turns"], 1):
            at = f"{where} turn {n}"
            kinds = [k for k in ("say", "input", "move", "restart") if k in turn]
            if len(kinds) != 1:
                problems.append(f"{at}: expected exactly one of say, input, move, restart")
                continue
            if "input" in turn:
                try:
                    parsed = PlayerInput.parse(turn["input"])
                except InputSyntaxError as exc:
                    problems.append(f"{at}: {exc}")
                    continue
                if parsed.kind == "intent" and parsed.target not in sc.intents:
                    problems.append(f'{at}: unknown intent "{parsed.target}"')
            if "move" in turn and turn["move"] not in sc.places:
                problems.append(f'{at}: unknown place "{turn["move"]}"')
            if turn.get("to") is not None and turn["to"] not in sc.characters:
                problems.append(f'{at}: unknown character "{turn["to"]}" in "to"')
            unknown = set(turn.get("expect", {})) - set(EXPECT_KEYS)
            if unknown:
                problems.append(f"{at}: unknown expect keys {sorted(unknown)}; expected some of {', '.join(EXPECT_KEYS)}")
    if problems:
        raise DialogueError("\n".join(problems))
    return data


def _list(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def answer_kind(played: PlayedTurn | None, step: Step) -> str | None:
    if played is None:
        return "script" if step.lines else None
    if played.clarified:
        return "clarify"
    kind = played.kind
    if kind == "reaction" and played.answer is not None and played.answer.ref:
        return "reaction:" + played.answer.ref.split("/")[2].split("#")[0]
    if kind is None and step.lines:
        return "script"
    return kind


def _kind_matches(kind: str | None, wanted: Iterable[str]) -> bool:
    for w in wanted:
        if kind == w or (w == "reaction" and kind is not None and kind.startswith("reaction:")):
            return True
    return False


def check(expect: dict[str, Any], outcome: TurnOutcome, earlier: list[str], place_before: str) -> list[str]:
    played, step = outcome.played, outcome.step
    failures = []
    got_input = str(played.input) if played else "開始"
    words = "\n".join(outcome.said)
    kind = outcome.kind
    if "input" in expect and not (played and played.clarified) and got_input not in _list(expect["input"]):
        failures.append(f"input {got_input}")
    if "not_input" in expect and got_input in _list(expect["not_input"]):
        failures.append(f"input {got_input}")
    if "answer" in expect and not _kind_matches(kind, _list(expect["answer"])):
        failures.append(f"answered by {kind}")
    if "not" in expect and _kind_matches(kind, _list(expect["not"])):
        failures.append(f"answered by {kind}")
    fired = [line.id for line in step.lines]
    for line_id in _list(expect.get("lines", [])):
        if line_id not in fired:
            failures.append(f"{line_id} did not fire")
    for line_id in _list(expect.get("no_lines", [])):
        if line_id in fired:
            failures.append(f"{line_id} fired")
    for text in _list(expect.get("says", [])):
        if text not in words:
            failures.append(f"did not say {text}")
    if "says_any" in expect and not any(t in words for t in _list(expect["says_any"])):
        failures.append(f"said none of {expect['says_any']}")
    for text in _list(expect.get("not_says", [])):
        if text in words:
            failures.append(f"said {text}")
    answer = played.answer if played else None
    if "speaker" in expect and (answer is None or answer.speaker != expect["speaker"]):
        failures.append(f"spoken by {answer.speaker if answer else None}")
    if "place" in expect and step.state.place != expect["place"]:
        failures.append(f"at {step.state.place}")
    if "ended" in expect and step.state.ended != expect["ended"]:
        failures.append("ended" if step.state.ended else "not ended")
    if "order" in expect:
        # an order answered alone, or as the first part of a line (its answer then holds it, or said first)
        served = None
        for said in ([answer] if answer is not None else []) + (list(played.before) if played else []):
            found = said.detail.get("order") or said.detail.get("first", {}).get("detail", {}).get("order")
            if said.source == "order" or found:
                served = (found or {}).get("item")
                break
        if served != expect["order"]:
            failures.append(f"served {served}")
    if expect.get("fresh"):
        again = [t for t in outcome.said if t in earlier]
        if again:
            failures.append(f"said again {again[0]!r}")
    if "notices" in expect and len(step.notices) != expect["notices"]:
        failures.append(f"{len(step.notices)} notices")
    return failures


def _moved(expect: dict[str, Any], outcome: TurnOutcome, place_before: str, ended_before: bool) -> bool:
    """The player moved or the visit ended, and the case allowed neither."""
    step = outcome.step
    moved = step.state.place != place_before
    ended = step.state.ended and not ended_before
    if not moved and not ended:
        return False
    allowed_inputs = [i for i in _list(expect.get("input", [])) if str(i).startswith(("移動:", "離脱"))]
    if moved and (expect.get("place") == step.state.place or allowed_inputs):
        return False
    if ended and (expect.get("ended") is True or "離脱" in allowed_inputs):
        return False
    return True


def play_dialogue(stage: StagePlay, dialogue: dict[str, Any]) -> list[TurnOutcome]:
    """One dialogue from a new game, each turn sent to the stage as the page sends a reply (stage_play.py)."""
    rules = stage.rules
    stage.restart()
    step = rules.start()
    outcomes: list[TurnOutcome] = []
    earlier: list[str] = [line.text for line in step.lines]
    for number, turn in enumerate(dialogue["turns"], 1):
        place_before, ended_before = step.state.place, step.state.ended
        played: PlayedTurn | None
        if turn.get("restart"):
            stage.restart()
            step, played = rules.start(), None
        else:
            given = PlayerInput.parse(turn["input"]) if "input" in turn else None
            on_stage = stage.play(turn.get("say") if given is None else None, given, to=turn.get("to"),
                                  move=turn.get("move"))
            played = on_stage.played
            step = played.step if played is not None else Step(None, (), None, (), on_stage.state)
        said = ([a.text for a in played.before] if played is not None else []) + \
            ([played.answer.text] if played is not None and played.answer is not None else []) + \
            [line.text for line in step.lines]
        outcome = TurnOutcome(dialogue.get("id", "?"), dialogue.get("split"), number, turn, played, step,
                              answer_kind(played, step), said)
        expect = turn.get("expect")
        if expect is not None:
            outcome.failures = check(expect, outcome, earlier, place_before)
            if played is not None and played.clarified:
                outcome.outcome = "clarify"
            elif _moved(expect, outcome, place_before, ended_before):
                outcome.outcome = "unsafe"
            else:
                outcome.outcome = "wrong" if outcome.failures else "right"
        earlier.extend(said)
        outcomes.append(outcome)
    return outcomes


def run_dialogues(stage: StagePlay, data: dict[str, Any], *, split: str | None = None,
                  ids: Iterable[str] = ()) -> list[TurnOutcome]:
    wanted = set(ids)
    out = []
    for dialogue in data["dialogues"]:
        if split and dialogue.get("split") != split:
            continue
        if wanted and dialogue.get("id") not in wanted:
            continue
        out.extend(play_dialogue(stage, dialogue))
    return out


def summarise(outcomes: list[TurnOutcome]) -> dict[str, Any]:
    def figures(items: list[TurnOutcome]) -> dict[str, Any]:
        cases = [o for o in items if o.outcome is not None]
        count = {k: sum(1 for o in cases if o.outcome == k) for k in ("right", "clarify", "wrong", "unsafe")}
        spoken = [o for o in items if "say" in o.turn]
        brush = sum(1 for o in spoken if _kind_matches(o.kind, BRUSH_OFFS))
        wanted = sum(1 for o in cases if o.outcome == "clarify" and "clarify" in _list(o.turn["expect"].get("answer", [])))
        total = len(cases)
        return {"cases": total, **count,
                "right_share": round(count["right"] / total, 4) if total else 0.0,
                "clarify_share": round(count["clarify"] / total, 4) if total else 0.0,
                "clarify_wanted": wanted,
                "lines_said": len(spoken), "brush_offs": brush,
                "brush_off_share": round(brush / len(spoken), 4) if spoken else 0.0}
    splits: dict[str, list[TurnOutcome]] = {}
    for o in outcomes:
        splits.setdefault(o.split or "-", []).append(o)
    return {**figures(outcomes), "dialogues": len({o.dialogue for o in outcomes}),
            "splits": {k: figures(v) for k, v in sorted(splits.items())}}


def format_outcomes(outcomes: list[TurnOutcome], summary: dict[str, Any], *, verbose: bool = True) -> str:
    lines = []
    marks = {"right": " ", "clarify": "?", "wrong": "x", "unsafe": "!", None: "·"}
    current = None
    for o in outcomes:
        if not verbose and o.outcome in (None, "right"):
            continue
        if o.dialogue != current:
            current = o.dialogue
            lines.append(f"{o.dialogue} ({o.split or '-'})")
        said = " / ".join(o.said) or "-"
        played = o.played
        got = str(played.input) if played else "開始"
        lines.append(f"  {marks[o.outcome]} #{o.number} {o.text} → {got} [{o.kind or '-'}] {said}")
        if o.failures:
            lines.append(f"      {'; '.join(o.failures)}")
    lines.append("")

    def row(name: str, f: dict[str, Any]) -> str:
        return (f"{name}: {f['right']}/{f['cases']} right ({f['right_share']:.3f}), clarify {f['clarify']} "
                f"({f['clarify_share']:.3f}; wanted {f['clarify_wanted']}), wrong {f['wrong']}, unsafe {f['unsafe']}; "
                f"brush-offs {f['brush_offs']}/{f['lines_said']} lines ({f['brush_off_share']:.3f})")
    lines.append(row(f"all {summary['dialogues']} dialogues", summary))
    for name, f in summary["splits"].items():
        lines.append("  " + row(f"split {name}", f))
    return "\n".join(lines)


def dialogue_stage(path: str | Path, rules: GameRules) -> StagePlay:
    """The stage in memory the dialogues are played on (the director's own path, no model)."""
    return StagePlay(Path(path), rules.scenario)
