"""`butai lint` and `butai trace` play the scenario through the director's own path (a stage in memory): what
passes them cannot crash live; and lint's checks on words that collide, choices that cannot be picked,
questions talked over in their own turn, and characters without art."""
from __future__ import annotations

import json

import pytest

from butai_tools.scenario.commands import trace_steps
from butai_tools.scenario.explore import explore
from butai_tools.scenario.lint import lint_path
from chalicelib.director import Director
from chalicelib.scenario import GameRules, PlayerInput, load_scenario, load_scenario_data
from tests.feature_scenarios import every_feature, random_scenario


def write(tmp_path, data, name="t.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def found(path, severity=("error", "warning")):
    return [f"{p.where}: {p.message}" for p in lint_path(path) if p.severity in severity]


def test_the_feature_scenario_and_random_ones_play_without_an_error(tmp_path):
    assert [p for p in found(write(tmp_path, every_feature())) if "cannot be played" in p] == []
    for seed in range(8):
        path = write(tmp_path, random_scenario(seed), f"r{seed}.json")
        assert [p for p in found(path) if "cannot be played" in p] == [], seed


def test_the_walk_reaches_the_features(tmp_path):
    path = write(tmp_path, every_feature())
    walked = explore(path, load_scenario(path))
    assert walked.turns > 200
    assert {"S1", "S2", "R1", "R2", "R3", "Q1", "M1", "G1"} <= walked.fired
    assert walked.endings                                   # it leaves, and an ending is reached


def test_a_turn_that_crashes_live_is_a_lint_error_with_the_way_there(tmp_path, monkeypatch):
    # The engine as it was before: a フラグ: effect broke the turn's write (AttributeError on .key).
    real = Director._write

    def old_write(self, record, loaded, step, **kw):
        for line in step.lines:
            for effect in line.effects:
                _ = effect.key
        return real(self, record, loaded, step, **kw)
    monkeypatch.setattr(Director, "_write", old_write)
    errors = [p for p in lint_path(write(tmp_path, every_feature())) if p.severity == "error"]
    # the start line sets a flag: the game cannot even start
    assert errors and errors[0].where == "play"
    assert "the game cannot start (AttributeError: 'FlagEffect' object has no attribute 'key')" in errors[0].message

    def old_turn_write(self, record, loaded, step, **kw):      # the same, in a turn after the start
        if kw.get("claim"):
            return old_write(self, record, loaded, step, **kw)
        return real(self, record, loaded, step, **kw)
    monkeypatch.setattr(Director, "_write", old_turn_write)
    errors = [p for p in lint_path(write(tmp_path, every_feature())) if p.severity == "error"]
    assert errors and errors[0].where == "play"
    assert "a turn cannot be played (unplayable: AttributeError" in errors[0].message and "after:" in errors[0].message


def test_a_question_followed_by_a_progression_line_is_warned(tmp_path):
    data = every_feature()
    data["scenes"][0]["lines"].append({"id": "P9", "speaker": "乙", "condition": "入力 + 済:Q1 + 未:P9",
                                       "text": "ところで、お腹すいてない？"})
    path = write(tmp_path, data)
    warned = [p for p in found(path) if p.startswith("line Q1:")]
    assert warned and "the progression line P9 is said after it in the same turn" in warned[0]
    # the reference scenario's chains answer their own questions (O1 → O2): no warning
    assert found("scenarios/chinoike.json") == []


def test_words_that_collide_are_warned(tmp_path):
    data = every_feature()
    data["intents"][2]["words"].append("花")                       # 約束 and 花 share 花
    data["intents"][0]["words"].append("薔薇")                     # an option word of 飾る花 in 天気
    messages = found(write(tmp_path, data))
    assert any(m.startswith('intents: the word "花" narrows to 花 and 約束') for m in messages)
    assert any('option word "薔薇" of the choice "飾る花" is also a word of intent 天気' in m for m in messages)
    data["clarify"] = {"ambiguous": {"花": ["花", "約束"]}}
    assert not any(m.startswith('intents: the word "花"') for m in found(write(tmp_path, data)))


def test_a_choice_option_that_can_never_be_picked_is_warned(tmp_path):
    data = every_feature()
    knowledge = data["characters"][0]["knowledge"]
    knowledge[4]["words"] = ["赤"]                                  # 白 has no word of its own
    messages = found(write(tmp_path, data))
    assert any("knowledge #5: option of the choice \"飾る花\" has no word of its own" in m for m in messages)
    knowledge[4]["choice"] = "別の花"                              # alone in its choice
    messages = found(write(tmp_path, data))
    assert any('knowledge #5: is the only option of the choice "別の花"' in m for m in messages)


def test_characters_without_art_are_a_hint(tmp_path):
    hints = found(write(tmp_path, every_feature()), ("hint",))
    assert any(h.startswith("characters: 甲, 乙 have no portraits") for h in hints)
    (tmp_path / "characters" / "甲").mkdir(parents=True)
    hints = found(write(tmp_path, every_feature()), ("hint",))
    assert any(h.startswith("characters: 乙 have no portraits") for h in hints)
    assert not any("no portraits" in h for h in found("scenarios/chinoike.json", ("hint",)))


def test_trace_plays_on_the_stage_and_shows_an_unplayable_turn_as_the_page_does(tmp_path, monkeypatch):
    path = write(tmp_path, every_feature())
    rules = GameRules(load_scenario(path))
    steps = trace_steps(rules, [PlayerInput.parse("意図:約束"), "うん、もちろん来るよ", PlayerInput.parse("離脱")], path)
    assert [s.step.line_ids for s in steps[1:]] == [("Q1",), ("P1",), ("L1", "部屋/ending/約束の夜#1")]
    assert steps[2].answer["text"] == "よかった、待ってるね。"
    real = Director._write

    def broken(self, record, loaded, step, **kw):
        if step.lines and kw.get("claim"):
            raise RuntimeError("a bug")
        return real(self, record, loaded, step, **kw)
    monkeypatch.setattr(Director, "_write", broken)
    steps = trace_steps(rules, [PlayerInput.parse("意図:約束")], path)
    assert steps[1].errors == ["unplayable: RuntimeError: a bug"]
    assert steps[1].answer["text"] == "ふうん。"                   # 甲's fallback, as the page would show


@pytest.mark.parametrize("seed", range(3))
def test_random_scenarios_load_and_lint(seed):
    data = random_scenario(seed)
    assert load_scenario_data(data, source="r.json").title == f"乱数{seed}"
