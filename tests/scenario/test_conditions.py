"""Each condition term and effect, on small scenarios built here."""
from __future__ import annotations

import pytest

from butai_tools.scenario.lint import lint_scenario
from chalicelib.scenario import (
    AfterTerm,
    AnyInputTerm,
    ArrivalTerm,
    ExpressionEffect,
    InputTerm,
    PlayerInput,
    ScenarioError,
    ShownTerm,
    StartTerm,
    TermSyntaxError,
    UnshownTerm,
    load_scenario_data,
    parse_condition,
    parse_effect,
    parse_term,
)
from tests.scenario.conftest import small_scenario

I = PlayerInput.parse


# ---------------------------------------------------------------- parsing

@pytest.mark.parametrize("text, term", [
    ("意図:音楽", InputTerm(PlayerInput.intent("音楽"))),
    ("移動:控え室", InputTerm(PlayerInput.move("控え室"))),
    ("離脱", InputTerm(PlayerInput.leave())),
    ("なし", InputTerm(PlayerInput.none())),
    ("入力", AnyInputTerm()),
    ("開始", StartTerm()),
    ("到着", ArrivalTerm()),
    ("済:A04", ShownTerm("A04")),
    ("未:A03", UnshownTerm("A03")),
    ("直後:O1", AfterTerm("O1")),
])
def test_each_term_parses_and_prints(text, term):
    assert parse_term(text) == term
    assert str(term) == text


def test_condition_keeps_order_and_facts():
    cond, errors = parse_condition("入力 + 済:A02 + 未:A03")
    assert errors == []
    assert [str(t) for t in cond.terms] == ["入力", "済:A02", "未:A03"]
    assert cond.any_input and cond.shown == ("A02",) and cond.unshown == ("A03",)
    assert str(cond) == "入力 + 済:A02 + 未:A03"
    assert parse_condition("意図:音楽+済:A04")[0].input == PlayerInput.intent("音楽")


@pytest.mark.parametrize("text, fragment", [
    ("直後O1", 'unknown term "直後O1" in condition; expected one of 意図:X, 移動:P, 離脱, なし, 入力, 開始, 到着, '
               '済:ID, 未:ID, 直後:ID, フラグ:NAME (did you mean "直後:O1"?)'),
    ("済:", 'missing the line id after "済:"'),
    ("意図：音楽", 'ASCII colon'),
    ("入力 + ", "empty term"),
    ("入力 ＋ 開始", 'full-width "＋"'),
])
def test_condition_syntax_errors(text, fragment):
    _, errors = parse_condition(text)
    assert errors, text
    assert any(fragment in e.message for e in errors), [e.message for e in errors]


@pytest.mark.parametrize("text, clauses", [
    # + binds tighter than |
    ("意図:天気 + 済:A1 | フラグ:晴れ", [["意図:天気", "済:A1"], ["フラグ:晴れ"]]),
    ("フラグ:晴れ | 意図:天気 + 済:A1", [["フラグ:晴れ"], ["意図:天気", "済:A1"]]),
    # parentheses group, and a group is multiplied out into the clauses
    ("意図:天気 + (済:A1 | フラグ:晴れ)", [["意図:天気", "済:A1"], ["意図:天気", "フラグ:晴れ"]]),
    ("(意図:天気 | 意図:花) + (済:A1 | 未:A2)",
     [["意図:天気", "済:A1"], ["意図:天気", "未:A2"], ["意図:花", "済:A1"], ["意図:花", "未:A2"]]),
    ("((意図:天気))", [["意図:天気"]]),
    ("意図:天気 | 意図:天気", [["意図:天気"]]),                  # the same alternative twice is one
    ("意図:天気 ｜ 済:A1", [["意図:天気"], ["済:A1"]]),            # full-width: reported, then read as meant
])
def test_alternatives_and_groups(text, clauses):
    cond, _ = parse_condition(text)
    assert [[str(t) for t in c.terms] for c in cond.clauses] == clauses


@pytest.mark.parametrize("text, fragment", [
    ("(意図:天気 | 済:A1", 'unclosed "(" in condition'),
    ("意図:天気 | 済:A1)", 'unmatched ")" in condition'),
    ("意図:天気 | | 済:A1", "empty term"),
    ("意図:天気 |", "empty term"),
    ("| 意図:天気", "empty term"),
    ("()", "empty term"),
    ("(意図:a | 意図:b) + (意図:c | 意図:d) + (済:e | 済:f) + (済:g | 済:h) + (済:i | 済:j) + (済:k | 済:l) "
     "+ (済:m | 済:n)", "alternatives once its groups are multiplied out; at most 64"),
])
def test_alternative_syntax_errors(text, fragment):
    _, errors = parse_condition(text)
    assert any(fragment in e.message for e in errors), [e.message for e in errors]


def test_after_and_an_input_may_share_a_condition_only_in_separate_alternatives():
    ok = small_scenario([("L1", "甲", "意図:天気"), ("L2", "甲", "直後:L1 | 意図:花")])
    load_scenario_data(ok, source="t.json")
    bad = small_scenario([("L1", "甲", "意図:天気"), ("L2", "甲", "(直後:L1 + 意図:花) | 意図:天気")])
    with pytest.raises(ScenarioError) as caught:
        load_scenario_data(bad, source="t.json")
    assert 'term "直後:L1" cannot be combined with input term "意図:花"' in str(caught.value)


def test_lint_names_every_alternative_that_cannot_hold():
    data = small_scenario([("L1", "甲", "意図:天気"), ("L2", "甲", "移動:庭 + 未:L2 | 到着 + 未:L2")])
    data["places"][0]["exits"] = []                      # 部屋 has no way out, and nobody arrives there
    data["places"][1]["exits"] = []
    found = [p.message for p in lint_scenario(load_scenario_data(data, source="t.json")) if p.message.startswith(
        "never fires") or "no alternative" in p.message]
    assert any("no alternative of its condition can hold (移動:庭 + 未:L2: " in m for m in found), found


def test_effect_parsing():
    assert parse_effect("表情:神楽坂葵:angry") == ExpressionEffect("神楽坂葵", "angry")
    assert str(parse_effect("表情:神楽坂葵:angry")) == "表情:神楽坂葵:angry"
    with pytest.raises(TermSyntaxError, match='unknown effect kind "音" in effect "音:ドア"; expected 表情:CHARACTER:KEY'):
        parse_effect("音:ドア")
    with pytest.raises(TermSyntaxError, match="malformed"):
        parse_effect("表情:神楽坂葵")


# ---------------------------------------------------------------- input terms

def test_intent_term_fires_only_for_that_intent(make_rules):
    rules = make_rules(room=[("R1", "甲", "意図:天気")])
    state = rules.start().state
    assert rules.handle(I("意図:花"), state).line_ids == ()
    step = rules.handle(I("意図:天気"), state)
    assert step.line_ids == ("R1",) and step.lines[0].trigger == "response"
    assert step.free_talk is None


def test_move_term_is_a_parting_line_then_arrival(make_rules):
    rules = make_rules(room=[("R1", "甲", "移動:庭")], garden=[("G1", "乙", "到着")])
    step = rules.handle(I("移動:庭"), rules.start().state)
    assert step.line_ids == ("R1", "G1")
    assert [line.trigger for line in step.lines] == ["response", "arrival"]
    assert step.state.place == "庭"


def test_leave_term_fires_and_lists_exits(make_rules):
    rules = make_rules(room=[("R1", "甲", "離脱")])
    step = rules.handle(I("離脱"), rules.start().state)
    assert step.line_ids == ("R1",)
    assert [n.to_dict() for n in step.notices] == [{"kind": "exits", "destinations": ["庭"]}]
    assert step.state.place == "部屋" and step.free_talk is None


def test_none_term_answers_none_instead_of_free_talk(make_rules):
    rules = make_rules(room=[("R1", "甲", "なし")])
    state = rules.start().state
    first = rules.handle(I("なし"), state)
    assert first.line_ids == ("R1",) and first.free_talk is None
    second = rules.handle(I("なし"), first.state)
    assert second.line_ids == () and second.free_talk is not None and second.free_talk.intent is None


# ---------------------------------------------------------------- 入力 開始 到着

def test_any_input_is_progression_for_intent_and_none_only(make_rules):
    rules = make_rules(room=[("P1", "甲", "入力")])
    state = rules.start().state
    assert rules.start().line_ids == ()  # 入力 does not hold at start
    assert rules.handle(I("意図:天気"), state).line_ids == ("P1",)
    assert rules.handle(I("意図:天気"), state).lines[0].trigger == "progression"
    assert rules.handle(I("なし"), state).line_ids == ("P1",)
    assert rules.handle(I("離脱"), state).line_ids == ()
    assert rules.handle(I("移動:庭"), state).line_ids == ()


def test_progression_follows_response_and_free_talk(make_rules):
    rules = make_rules(room=[("R1", "甲", "意図:天気"), ("P1", "乙", "入力")])
    state = rules.start().state
    step = rules.handle(I("意図:天気"), state)
    assert step.line_ids == ("R1", "P1")
    step = rules.handle(I("意図:花"), state)
    assert step.free_talk is not None and step.line_ids == ("P1",)


def test_start_term_holds_only_at_start(make_rules):
    rules = make_rules(room=[("S1", "甲", "開始"), ("S2", "乙", "開始")], garden=[("G0", "乙", "開始")])
    start = rules.start()
    assert start.line_ids == ("S1",)       # first 開始 line only, and only in the start place
    assert start.lines[0].trigger == "start"
    assert rules.handle(I("なし"), start.state).line_ids == ()
    assert rules.handle(I("移動:庭"), start.state).line_ids == ()


def test_arrival_term(make_rules):
    rules = make_rules(room=[("R0", "甲", "到着")], garden=[("G1", "乙", "到着 + 未:G1"), ("G2", "乙", "到着")])
    start = rules.start()
    assert start.line_ids == ()            # 到着 does not hold at start, even at the start place
    there = rules.handle(I("移動:庭"), start.state)
    assert there.line_ids == ("G1",)
    back = rules.handle(I("移動:部屋"), there.state)
    assert back.line_ids == ("R0",)
    again = rules.handle(I("移動:庭"), back.state)
    assert again.line_ids == ("G2",)       # G1 fired once; the next arrival line takes over
    assert rules.handle(I("なし"), again.state).line_ids == ()


# ---------------------------------------------------------------- 済 未 直後

def test_shown_and_unshown_gate(make_rules):
    rules = make_rules(room=[("R1", "甲", "意図:花 + 済:R2"), ("R2", "甲", "意図:天気 + 未:R3"),
                             ("R3", "乙", "意図:天気")])
    state = rules.start().state
    assert rules.handle(I("意図:花"), state).line_ids == ()
    after_weather = rules.handle(I("意図:天気"), state)
    assert after_weather.line_ids == ("R2",)
    assert rules.handle(I("意図:花"), after_weather.state).line_ids == ("R1",)
    # R2 is fired; R3 now answers 天気 (未:R3 on R2 no longer matters)
    assert rules.handle(I("意図:天気"), after_weather.state).line_ids == ("R3",)


def test_shown_counts_lines_earlier_in_the_same_step(make_rules):
    rules = make_rules(room=[("R1", "甲", "意図:天気"), ("P1", "乙", "入力 + 済:R1")])
    step = rules.handle(I("意図:天気"), rules.start().state)
    assert step.line_ids == ("R1", "P1")


def test_unshown_blocks_after_shown(make_rules):
    rules = make_rules(room=[("P1", "甲", "入力 + 未:X1"), ("X1", "乙", "意図:花")])
    state = rules.handle(I("意図:花"), rules.start().state).state
    assert state.has_shown("X1")
    # X1 (花) fired in the same step before progression looked, so P1 stays blocked
    assert not state.has_shown("P1")
    assert rules.handle(I("なし"), state).line_ids == ()


def test_after_chains_in_file_order_within_the_scene(make_rules):
    rules = make_rules(room=[
        ("R1", "甲", "意図:天気"),
        ("C1", "乙", "直後:R1 + 済:NEVER"),  # does not hold: skipped
        ("C2", "乙", "直後:R1"),
        ("C3", "乙", "直後:R1"),             # later in file: C2 wins
        ("C4", "甲", "直後:C2", ["表情:甲:smile"]),
        ("NEVER", "甲", "意図:花 + 済:C3"),
    ])
    step = rules.handle(I("意図:天気"), rules.start().state)
    assert step.line_ids == ("R1", "C2", "C4")
    assert [line.trigger for line in step.lines] == ["response", "chain", "chain"]


def test_after_holds_only_within_the_step(make_rules):
    rules = make_rules(room=[("R1", "甲", "意図:天気"), ("P1", "乙", "入力 + 直後:R1")])
    state = rules.start().state
    assert rules.handle(I("意図:天気"), state).line_ids == ("R1", "P1")
    only_r1 = make_rules(room=[("R1", "甲", "意図:天気"), ("P1", "乙", "入力 + 直後:R1 + 済:R9"),
                               ("R9", "甲", "意図:花")])
    s1 = only_r1.handle(I("意図:天気"), only_r1.start().state)
    assert s1.line_ids == ("R1",)
    s2 = only_r1.handle(I("意図:花"), s1.state)
    assert s2.line_ids == ("R9",)          # R1 was last in an earlier step: 直後:R1 does not hold
    assert s2.state.last_line == "R9"


def test_arrival_may_follow_the_parting_line(make_rules):
    rules = make_rules(room=[("R1", "甲", "移動:庭")],
                       garden=[("G1", "乙", "到着 + 直後:R1"), ("G2", "乙", "到着")])
    state = rules.start().state
    assert rules.handle(I("移動:庭"), state).line_ids == ("R1", "G1")


def test_a_line_fires_at_most_once(make_rules):
    rules = make_rules(room=[("R1", "甲", "意図:天気")])
    state = rules.handle(I("意図:天気"), rules.start().state).state
    assert rules.handle(I("意図:天気"), state).line_ids == ()


# ---------------------------------------------------------------- effects

def test_effects_apply_in_firing_order(make_rules):
    rules = make_rules(room=[("R1", "甲", "意図:天気", ["表情:甲:angry", "表情:乙:smile"]),
                             ("C1", "乙", "直後:R1", ["表情:甲:smile"]),
                             ("P1", "乙", "入力", ["表情:乙:neutral"])])
    start = rules.start()
    assert dict(start.state.expressions) == {"甲": "neutral", "乙": "neutral"}
    step = rules.handle(I("意図:天気"), start.state)
    assert [str(e) for e in step.effects] == ["表情:甲:angry", "表情:乙:smile", "表情:甲:smile", "表情:乙:neutral"]
    assert dict(step.state.expressions) == {"甲": "smile", "乙": "neutral"}
    assert step.lines[0].effects == (ExpressionEffect("甲", "angry"), ExpressionEffect("乙", "smile"))
    assert dict(start.state.expressions) == {"甲": "neutral", "乙": "neutral"}
