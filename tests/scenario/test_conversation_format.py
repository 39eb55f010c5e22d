"""The format's conversation parts: flags, repeatable lines, replies, menus, recall/clarify/chatter sets and the
clarify settings — loaded, checked, linted, played by the rules and stored in the state."""
from __future__ import annotations

import copy
import json

import pytest

from butai_tools.scenario.lint import lint_scenario
from chalicelib.scenario import GameRules, GameState, PlayerInput, ScenarioError, load_scenario_data
from tests.scenario.conftest import small_scenario


def load(data):
    return load_scenario_data(data, source="t.json")


def errors(data) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        load(data)
    return [str(p) for p in caught.value.problems]


def with_menu(**menu) -> dict:
    data = small_scenario([("L1", "甲", "意図:天気")])
    data["characters"][0]["menu"] = {"items": [{"id": "茶", "words": ["お茶"], "flag": "茶を飲んだ",
                                                 "lines": [{"text": "はい、お茶。"}]}], **menu}
    return data


def test_a_flag_is_set_by_a_line_and_tested_by_a_condition():
    data = small_scenario([("L1", "甲", "意図:天気", ["フラグ:晴れ"]), ("L2", "甲", "意図:花 + フラグ:晴れ")])
    rules = GameRules(load(data))
    state = rules.start().state
    assert rules.handle(PlayerInput.intent("花"), state).line_ids == ()       # not set yet
    after = rules.handle(PlayerInput.intent("天気"), state).state
    assert after.flags == frozenset({"晴れ"}) and "フラグ:晴れ" in after.shown
    assert rules.handle(PlayerInput.intent("花"), after).line_ids == ("L2",)
    stored = after.to_dict()
    assert stored["flags"] == ["晴れ"] and GameState.from_json(json.dumps(stored)) == after
    assert "flags" not in state.to_dict()                                     # written only when set


def test_a_flag_nothing_sets_is_a_load_error_and_a_menu_flag_counts():
    data = small_scenario([("L1", "甲", "意図:天気 + フラグ:虹")])
    [message] = errors(data)
    assert 'line L1: flag "虹" in term "フラグ:虹" is never set' in message
    data = with_menu()
    data["scenes"][0]["lines"].append({"id": "L2", "speaker": "甲", "condition": "入力 + フラグ:茶を飲んだ",
                                       "text": "おいしかった？"})
    assert load(data).flags == frozenset({"茶を飲んだ"})


def test_a_repeatable_line_fires_again_and_stays_a_candidate():
    data = small_scenario([("L1", "甲", "意図:天気")])
    data["scenes"][0]["lines"][0]["repeatable"] = True
    rules = GameRules(load(data))
    state = rules.handle(PlayerInput.intent("天気"), rules.start().state).state
    again = rules.handle(PlayerInput.intent("天気"), state)
    assert again.line_ids == ("L1",) and again.state.shown_lines.count("L1") == 1
    assert PlayerInput.intent("天気") in rules.input_candidates(again.state)


def test_replies_menus_and_line_sets_are_checked():
    data = with_menu(missing=[{"text": "ない", "expression": "grin"}])
    data["scenes"][0]["lines"][0]["replies"] = {"yes": [{"text": "うん", "expression": "wink"}]}
    data["characters"][0]["clarify"] = {"lines": [{"text": "{1}のこと？"}]}
    data["characters"][0]["recall"] = {"lines": [{"text": "前にも言ったよ"}]}
    data["characters"][0]["menu"]["items"].append({"id": "茶", "lines": [{"text": "また？"}]})
    data["clarify"] = {"ambiguous": {"雨": ["天気", "雪"]}}
    found = "\n".join(errors(data))
    assert 'line L1 replies yes #1: unknown expression "wink"' in found
    assert 'menu missing #1: unknown expression "grin"' in found
    assert 'clarify #1: a clarify line must hold "{1}" and "{2}"' in found
    assert 'recall #1: a recall line must hold "{said}"' in found
    assert 'duplicate menu item "茶"' in found
    assert 'clarify: unknown intent "雪" for the ambiguous word "雨"' in found


def test_lint_warns_of_a_word_naming_two_items_and_hints_at_an_untested_flag():
    data = with_menu()
    data["characters"][0]["menu"]["items"].append({"id": "紅茶", "words": ["お茶"], "lines": [{"text": "紅茶ね"}]})
    problems = [(p.severity, p.message) for p in lint_scenario(load(data))]
    assert ("warning", 'the word "お茶" names more than one item (紅茶, 茶); an order of it cannot tell which') in problems
    assert ("hint", 'flag "茶を飲んだ" is set but no condition tests it (フラグ:茶を飲んだ)') in problems


@pytest.mark.parametrize("where", ["until", "ending", "ending line"])
def test_a_flag_tested_only_by_an_until_or_an_ending_is_no_hint(where):
    data = small_scenario([("L1", "甲", "意図:天気", ["フラグ:晴れ"]), ("L2", "甲", "意図:花")])
    place = data["places"][0]
    if where == "until":
        data["characters"][0]["knowledge"][0]["until"] = "フラグ:晴れ"
    elif where == "ending":
        place["endings"] = [{"id": "晴", "condition": "フラグ:晴れ", "lines": [{"speaker": "甲", "text": "晴れた"}]}]
    else:
        place["ending"] = {"lines": [{"speaker": "甲", "text": "晴れた", "condition": "フラグ:晴れ"},
                                     {"speaker": "甲", "text": "またね"}]}
    hints = [p.message for p in lint_scenario(load(data)) if p.severity == "hint"]
    assert not [h for h in hints if "晴れ" in h]
    del data["scenes"][0]["lines"][0]["effects"]                  # the same flag set by nothing is an error
    assert any('flag "晴れ"' in e and "never set" in e for e in errors(data))


def test_knowledge_lines_are_said_once_unless_repeatable(reference_data):
    data = copy.deepcopy(reference_data)
    from chalicelib.answers import Answerer
    rules = GameRules(load(data))
    answerer = Answerer(rules)
    state = rules.handle(PlayerInput.none(), rules.start().state).state
    step = rules.handle(PlayerInput.intent("赤いドア"), state, "神楽坂葵")
    texts = []
    for _ in range(3):
        said = answerer.knowledge(step.free_talk, state, "ドア", state.turn + 1, only_speaker=True)
        if said is None:
            break
        texts.append(said[1])
        state = state.with_said(variation=said[5])
    assert len(texts) == len(set(texts)) == 2         # 葵's two door lines, then nothing of hers
