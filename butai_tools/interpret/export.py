"""`butai stage export-eval`: the turns a stage has played, as evaluation cases to review and keep.

Each turn the director played (its stored record) becomes a case in the evaluation-set format
(docs/interpretation.md): the player's text, the inputs played before it in the same game as its
setup, and the input the turn was played as for `expect` (to review: it is what the stage
understood, not necessarily what was meant).
"""
from __future__ import annotations

from typing import Any

from chalicelib.director import SCENARIO_PREFIX
from chalicelib.stage.service import StageService
from chalicelib.turn_record import TurnRecord


def export_eval(stages: StageService, stage_id: str) -> dict[str, Any]:
    """Every turn of the stage's games as an evaluation case; 404 unless it is a scenario stage."""
    record = stages.scenario_stage(stage_id)
    return {"scenario": record.scenario.removeprefix(SCENARIO_PREFIX).rsplit("-", 1)[0] + ".json",
            "cases": cases_of(stages.turn_records(stage_id, None))}


def cases_of(turns: list[TurnRecord]) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    setup: list[str] = []
    game = None
    for turn in turns:
        if turn.unplayable:
            continue              # nothing was understood or played: not a case
        if turn.game != game:
            game, setup = turn.game, []
        if turn.restart:
            continue
        case: dict[str, Any] = {"id": f"play-{turn.id[-8:].lower()}", "setup": list(setup), "text": turn.text,
                                "expect": turn.input}
        if turn.to:
            case["to"] = turn.to
        if not turn.move:
            cases.append(case)
        setup.append(turn.input)
    return cases
