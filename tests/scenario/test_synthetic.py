"""The synthetic scenario used by the benchmark, and a scale check."""
from __future__ import annotations

import time

from butai_tools.scenario.lint import lint_scenario
from butai_tools.scenario.synthetic import synthetic_scenario
from chalicelib.scenario import GameRules, load_scenario_data


def test_synthetic_is_deterministic_and_loads():
    a = synthetic_scenario(30, 300, 6, seed=3)
    assert a == synthetic_scenario(30, 300, 6, seed=3)
    assert a != synthetic_scenario(30, 300, 6, seed=4)
    compiled = load_scenario_data(a)
    assert len(compiled.lines) == 300 and len(compiled.places) == 6 and len(compiled.intents) == 30
    assert all(p.severity in ("warning", "hint") for p in lint_scenario(compiled))


def test_step_cost_does_not_grow_with_lines_shown():
    # A walk that shows most lines of a mid-sized scenario; the last steps must
    # not be much slower than the first (copying the shown set would make them so).
    rules = GameRules(load_scenario_data(synthetic_scenario(100, 3000, 5, seed=1)))
    state = rules.start().state
    times = []
    for _ in range(600):
        inputs, answered = rules.candidates_split(state)
        choice = next((c for c in inputs if c.is_intent), None) or (answered or inputs)[0]
        t = time.perf_counter()
        state = rules.handle(choice, state).state
        rules.candidates_split(state)
        times.append(time.perf_counter() - t)
    assert state.shown_count > 400
    first, last = sorted(times[:100])[50], sorted(times[-100:])[50]
    assert last < first * 5 + 0.0005
