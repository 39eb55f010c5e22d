"""The states the scenario spec talks about, reached from a new game of the reference scenario."""
from __future__ import annotations

from chalicelib.scenario import GameRules, GameState, PlayerInput

SETUPS = {
    "start": [],
    "none": ["なし"],
    "music": ["なし", "意図:音楽"],
    "f1": ["なし", "意図:二人の先の話"],
    "back": ["なし", "移動:控え室"],
}


def play(rules: GameRules, setup: list[str]) -> GameState:
    step = rules.start()
    for item in setup:
        step = rules.handle(PlayerInput.parse(item), step.state)
    return step.state
