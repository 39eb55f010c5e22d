"""Playing lines through the conversation layer without a stage: one new game, then each text in turn (the
state and the memory carried on), as the director would between its reads and its one write."""
from __future__ import annotations

from functools import cache
from typing import Any

from chalicelib.conversation import Conversation
from chalicelib.interpret.interpreter import Interpreter
from chalicelib.scenario import GameRules, load_scenario, load_scenario_data
from chalicelib.stage.records import ConversationMemory
from tests.conftest import ROOT


def play(conversation: Conversation, *texts: str, to: str | None = None, memory: ConversationMemory | None = None,
         state=None) -> list:
    """Each text played in turn from a new game (or from `state` and `memory`); the played turns."""
    state = state if state is not None else conversation.rules.start().state
    memory = memory or ConversationMemory()
    out = []
    for text in texts:
        played = conversation.play(text, state, memory, to=to)
        state, memory = played.step.state, played.memory
        out.append(played)
    return out


def L(text: str, expression: str = "neutral", **extra: Any) -> dict[str, Any]:
    """A spoken line of a test scenario."""
    return {"text": text, "expression": expression, **extra}


def conversation_of(data: dict[str, Any], source: str) -> Conversation:
    """The conversation layer over a scenario given as data."""
    rules = GameRules(load_scenario_data(data, source=source))
    return Conversation(rules, Interpreter(rules))


@cache
def reference() -> Conversation:
    rules = GameRules(load_scenario(ROOT / "scenarios" / "chinoike.json"))
    return Conversation(rules, Interpreter(rules))


def visit(*texts: str, to: str | None = None) -> list:
    """A new visit to the reference scenario."""
    return play(reference(), *texts, to=to)


def said(played) -> str:
    """The characters' words of one played turn: what came before the answer, the answer, the step's lines."""
    parts = [a.text for a in played.before]
    if played.answer is not None:
        parts.append(played.answer.text)
    parts += [line.text for line in played.step.lines]
    return " ".join(parts)


def answered(played) -> str:
    """The answer and the step's lines of one played turn, run together."""
    return "".join(([played.answer.text] if played.answer else []) + [line.text for line in played.step.lines])
