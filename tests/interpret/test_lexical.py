"""The lexical backend: targets on the evaluation set, scoring behaviour, speed."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from butai_tools.interpret.evaluation import load_dataset, run_dataset, summarise
from chalicelib.interpret import InterpretChoices, InterpretContext, Interpreter, LexicalBackend
from chalicelib.scenario import PlayerInput

EVAL_SET = Path(__file__).resolve().parents[2] / "scenarios" / "eval" / "interpret.json"


@pytest.fixture(scope="module")
def summary(rules):
    dataset = load_dataset(EVAL_SET, rules)
    results = run_dataset(Interpreter(rules), dataset)
    return summarise(results), results


def test_eval_set_is_big_and_covers_the_states(rules):
    dataset = load_dataset(EVAL_SET, rules)
    assert len(dataset.cases) >= 80
    setups = {tuple(str(s) for s in c.setup) for c in dataset.cases}
    for needed in [(), ("なし",), ("なし", "意図:音楽"), ("なし", "意図:二人の先の話"), ("なし", "移動:控え室")]:
        assert needed in setups
    assert {c.to for c in dataset.cases} >= {"神楽坂葵", "赤尾妙子"}
    assert sum(1 for c in dataset.cases if c.split == "heldout") >= 30


def test_lexical_targets(summary):
    figures, _ = summary
    assert figures["accuracy"] >= 0.90
    assert figures["unsafe"] == 0
    assert figures["splits"]["heldout"]["accuracy"] >= 0.85


def test_variant_words_gain(rules):
    dataset = load_dataset(EVAL_SET, rules)
    plain = summarise(run_dataset(Interpreter(rules, variant_words=False), dataset))
    variant = summarise(run_dataset(Interpreter(rules), dataset))
    assert variant["correct"] > plain["correct"]
    assert variant["misses"].get("narrowed", {}).get("count", 0) < plain["misses"]["narrowed"]["count"]


@pytest.mark.parametrize("text, expected", [
    ("落ち着いて一人で飲める店が好きなんだ", "意図:いい店とは"),      # いい店とは has no words: similarity decides
    ("音楽より、まずは料理をどうにかしたほうがいいよ", "意図:メニュー"),  # the clause set aside
    ("昭和の名曲はやっぱりいいよ", "意図:音楽"),                     # 曲 at the end of a compound keeps its sense
    ("葵の味方をしたいけど、どうしようかな", "なし"),               # 味 at the head of 味方 does not
    ("話しかけてもいい？", "なし"),                                  # かける inside 話しかける
    ("うん", "なし"),
])
def test_scoring_behaviour(rules, states, text, expected):
    assert str(Interpreter(rules).interpret_turn(text, states["none"]).input) == expected


def test_scores_for_every_offered_option(rules, states):
    backend = LexicalBackend()
    backend.prepare(rules.scenario)
    choices = InterpretChoices.make(rules, states["none"])
    result = backend.interpret("流す曲を変えてみたら？", choices, InterpretContext.make(rules, states["none"]))
    assert result.input == PlayerInput.intent("音楽") and result.token == "A1"
    assert set(result.scores) == set(choices.tokens) | {"none"}
    assert result.scores["A1"] == max(v for k, v in result.scores.items() if k != "none")
    empty = backend.interpret("x", choices.keep(lambda o: False), InterpretContext("店内"))
    assert empty.input == PlayerInput.none() and empty.error is None


def test_lexical_never_raises(rules, states):
    backend = LexicalBackend()
    choices = InterpretChoices.make(rules, states["none"])
    for text in ["", " ", "\n\n", "🍣" * 50, "「」『』", "a" * 5000, "控え室" * 100]:
        result = backend.interpret(text, choices, InterpretContext("店内"))
        assert result.error is None


def test_p50_under_two_ms(rules, states):
    interpreter = Interpreter(rules)
    dataset = load_dataset(EVAL_SET, rules)
    run_dataset(interpreter, dataset)                         # warm the caches
    prepared = [(c, states_for(rules, c)) for c in dataset.cases]
    timings = []
    for case, state in prepared * 3:
        t = time.perf_counter()
        interpreter.interpret_turn(case.text, state, case.to)
        timings.append((time.perf_counter() - t) * 1000)
    assert statistics.median(timings) <= 2.0


def states_for(rules, case):
    step = rules.start()
    for s in case.setup:
        step = rules.handle(s, step.state)
    return step.state
