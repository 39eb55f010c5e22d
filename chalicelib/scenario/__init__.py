"""Scenario format, loader and pure rule engine.

Typical use::

    from chalicelib.scenario import GameRules, PlayerInput, load_scenario

    rules = GameRules(load_scenario("scenarios/chinoike.json"))
    step = rules.start()
    step = rules.handle(PlayerInput.parse("なし"), step.state)
    rules.candidates(step.state)       # [意図:音楽, 意図:メニュー, ...]
"""
from .conditions import (
    AfterTerm,
    AnyInputTerm,
    ArrivalTerm,
    Condition,
    Effect,
    ExpressionEffect,
    InputTerm,
    ShownTerm,
    StartTerm,
    Term,
    TermSyntaxError,
    UnshownTerm,
    parse_condition,
    parse_effect,
    parse_term,
)
from .inputs import LEAVE, NONE, InputKind, InputSyntaxError, PlayerInput
from .loader import (
    CompiledKnowledge,
    CompiledLine,
    CompiledScenario,
    CompiledScene,
    Problem,
    ScenarioError,
    compile_scenario,
    load_scenario,
    load_scenario_data,
    load_scenario_text,
)
from .model import Character, Fallback, Intent, Knowledge, Line, Place, Scenario, Scene, Start, scenario_json_schema
from .rules import (
    AlreadyHereNotice,
    EndingNotice,
    ExitsNotice,
    FiredLine,
    FreeTalk,
    GameRules,
    Notice,
    RefusedMoveNotice,
    Step,
    token,
)
from .state import SCHEMA_VERSION, GameState, StateFormatError

__all__ = [
    "AfterTerm", "AlreadyHereNotice", "AnyInputTerm", "ArrivalTerm", "Character", "CompiledKnowledge",
    "CompiledLine", "CompiledScenario", "CompiledScene", "Condition", "Effect", "EndingNotice", "ExitsNotice", "ExpressionEffect",
    "Fallback", "FiredLine", "FreeTalk", "GameRules", "GameState", "InputKind", "InputSyntaxError", "InputTerm", "Intent",
    "Knowledge", "LEAVE", "Line", "NONE", "Notice", "Place", "PlayerInput", "Problem", "RefusedMoveNotice",
    "SCHEMA_VERSION", "Scenario", "ScenarioError", "Scene", "ShownTerm", "Start", "StartTerm", "StateFormatError",
    "Step", "Term", "TermSyntaxError", "UnshownTerm", "compile_scenario", "load_scenario", "load_scenario_data",
    "load_scenario_text", "parse_condition", "parse_effect", "parse_term", "scenario_json_schema", "token",
]
