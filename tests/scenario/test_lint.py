"""`lint`: a clean scenario, the reference scenario, and broken ones built here."""
from __future__ import annotations

import json

import pytest

from butai_tools.scenario.lint import lint_path, lint_scenario, normalise
from chalicelib.scenario import load_scenario_data


def findings(data, severity=("error", "warning")):
    return [f"{p.where}: {p.message}" for p in lint_scenario(load_scenario_data(data, source="t.json"))
            if p.severity in severity]


def hints(data, where):
    return [f for f in findings(data, ("hint",)) if f.startswith(where + ":")]


def only(data, where):
    return [f for f in findings(data) if f.startswith(where + ":")]


def test_clean_scenario_has_no_findings(make_data):
    data = make_data(room=[("S1", "甲", "開始"), ("S2", "乙", "直後:S1", ["表情:乙:smile"]),
                           ("R1", "甲", "意図:天気"), ("P1", "乙", "入力 + 済:R1 + 未:P1"), ("R2", "甲", "移動:庭")],
                     garden=[("G1", "乙", "到着 + 未:G1"), ("G2", "乙", "意図:花 + 済:G1")])
    assert findings(data) == []


def test_reference_lints_clean_of_errors(reference_path):
    problems = lint_path(reference_path)
    assert [p for p in problems if p.severity != "hint"] == []
    # Hints only: e.g. narrowing words that no example of the intent uses (one hint per intent).
    assert sum(int(p.message.split()[0]) for p in problems if "of its words are in no example" in p.message) == 42
    assert f"{reference_path}:intent 音楽: hint: 7 of its words are in no example (音楽, BGM, カラオケ, レコード, " \
           "流して, かける, サントラ); examples using them would help model backends" in [p.format() for p in problems]


def test_load_errors_come_out_as_errors(tmp_path, reference_data):
    broken = json.loads(json.dumps(reference_data))
    broken["scenes"][0]["lines"][5]["condition"] = "直後O1"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken, ensure_ascii=False), encoding="utf-8")
    [problem] = lint_path(path)
    assert problem.severity == "error"
    assert problem.format().startswith(f'{path}:line O2: error: unknown term "直後O1"')


# ---------------------------------------------------------------- lines that can never fire

@pytest.mark.parametrize("room, dead, reason", [
    ([("R1", "甲", "済:R2"), ("R2", "甲", "意図:天気")], "R1", "no trigger term"),
    ([("R1", "甲", "")], "R1", "its condition is empty"),
    ([("R1", "甲", "意図:天気 + 意図:花")], "R1", "two different inputs"),
    ([("R1", "甲", "開始 + 入力")], "R1", "開始 holds only at start"),
    ([("S1", "甲", "開始"), ("S2", "甲", "開始")], "S2", "the 開始 line S1 always fires at start instead"),
    ([("S1", "甲", "開始 + 済:R2"), ("R2", "甲", "意図:天気")], "S1", "nothing has been shown yet"),
    ([("R1", "甲", "移動:部屋")], "R1", "from 部屋 itself is refused"),
    ([("R1", "甲", "意図:天気 + 済:R1")], "R1", "needs itself shown first"),
    ([("R1", "甲", "意図:天気 + 済:R2 + 未:R2"), ("R2", "甲", "なし")], "R1", "needs R2 both shown and not shown"),
    ([("R1", "甲", "入力 + 直後:R2 + 直後:R3"), ("R2", "甲", "なし"), ("R3", "甲", "なし")], "R1",
     "two different lines"),
    ([("R1", "甲", "済:R2"), ("R3", "甲", "意図:花 + 済:R1"), ("R2", "甲", "なし")], "R3",
     "it needs R1 shown, which can never fire"),
    ([("R1", "甲", "済:R2"), ("R3", "甲", "直後:R1"), ("R2", "甲", "なし")], "R3",
     "it follows R1 (直後:), which can never fire"),
    ([("R1", "甲", "到着 + 意図:天気")], "R1", "到着 only holds on a move to 部屋"),
])
def test_lines_that_can_never_fire(make_data, room, dead, reason):
    messages = only(make_data(room=room), f"line {dead}")
    assert any(m.startswith(f"line {dead}: can never fire: ") and reason in m for m in messages), messages


def test_move_to_a_non_exit_and_unreachable_places(make_data):
    data = make_data(room=[("R1", "甲", "移動:屋根")], garden=[("G1", "乙", "到着")])
    data["places"].append({"id": "屋根", "people": ["乙"], "exits": []})
    data["scenes"].append({"place": "屋根", "lines": [{"id": "T1", "speaker": "乙", "condition": "到着",
                                                        "text": "高い"}]})
    assert only(data, "line R1") == ["line R1: can never fire: 屋根 is not an exit of 部屋, so that move is refused "
                                     "before any line"]
    assert only(data, "line T1") == ["line T1: can never fire: its place 屋根 cannot be reached from the start"]
    assert only(data, "place 屋根") == ["place 屋根: cannot be reached from the start place 部屋 through exits"]


def test_cross_scene_after_without_trigger(make_data):
    data = make_data(room=[("R1", "甲", "移動:庭")], garden=[("G1", "乙", "直後:R1"), ("G2", "乙", "到着 + 直後:R1")])
    assert only(data, "line G1") == ["line G1: can never fire: 直後:R1 names a line of another scene (部屋); a chain "
                                     "only continues within its scene"]
    assert only(data, "line G2") == []


def test_chain_loop(make_data):
    data = make_data(room=[("L1", "甲", "入力 + 直後:L2"), ("L2", "乙", "直後:L1"), ("L3", "乙", "直後:L2")])
    messages = findings(data)
    assert "line L1: 直後: chain loops (L1 → L2 → L1); each of these lines waits for another, so none of them can " \
           "ever fire" in messages
    assert "line L3: can never fire: it follows L2 (直後:), which can never fire" in messages
    assert not any(m.startswith("line L2: can never fire") for m in messages)


# ---------------------------------------------------------------- other warnings

def test_intent_with_neither_line_nor_knowledge(make_data):
    data = make_data()
    data["intents"].append({"id": "月", "description": "月の話", "examples": ["月がきれい"], "words": ["月"]})
    assert only(data, "intent 月") == ["intent 月: has neither a line nor knowledge; choosing it leads to free "
                                       "conversation with nothing to say about it"]


def test_words_and_examples(make_data):
    data = make_data()
    data["intents"][0]["words"] = ["天気", "晴れ", "テンキ"]
    data["intents"][0]["examples"] = ["いい天気だね", "傘いる？"]
    assert hints(data, "intent 天気") == [
        'intent 天気: 2 of its words are in no example (晴れ, テンキ); examples using them would help model backends',
    ]
    assert only(data, "intent 天気") == [
        'intent 天気: example "傘いる？" contains none of the words, so word narrowing drops this intent for its '
        'own example',
    ]


def test_word_match_is_width_and_kana_folded():
    assert normalise("ＢＧＭ") == normalise("bgm")
    assert normalise("カラオケ") == normalise("からおけ")


def test_speakers_and_effects_for_absent_characters(make_data):
    data = make_data(garden=[("G1", "甲", "到着", ["表情:甲:smile"])])
    assert only(data, "line G1") == [
        "line G1: speaker 甲 is not present at 庭 (people: 乙)",
        'line G1: effect "表情:甲:smile" changes 甲, who is not present at 庭',
    ]


def test_character_warnings(make_data):
    data = make_data()
    data["characters"][1]["expressions"] = ["smile", "smile"]
    data["characters"][1]["fallbacks"] = []
    data["characters"][1]["aliases"] = ["甲さん"]
    data["characters"].append({"id": "丙", "name": "丙"})
    messages = findings(data)
    assert 'character 乙: expressions do not list "neutral"; the stage falls back to it, so it should have an ' \
           'image' in messages
    assert 'character 乙: expression "smile" is listed twice' in messages
    assert "character 乙: has no fallbacks; when free conversation fails there is no line to show" in messages
    assert 'character 乙: alias "甲さん" is also used for 甲; addressing by it is ambiguous' in messages
    assert "character 丙: is not among the people of any place, so the player can never meet them" in messages


def test_place_warnings(make_data):
    data = make_data()
    data["places"][0]["exits"] = ["庭", "部屋"]
    data["places"][1]["responder"] = "甲"
    messages = findings(data)
    assert 'place 部屋: exits include the place itself; moving there is always refused as "already here"' in messages
    assert 'place 庭: responder "甲" is not among its people (乙)' in messages


def test_knowledge_that_is_never_used(make_data):
    data = make_data()
    data["characters"][0]["knowledge"].append({"info": "始まり", "condition": "開始"})
    assert only(data, "character 甲 knowledge #4") == [
        'character 甲 knowledge #4: term "開始" never holds during free conversation (only 意図:/なし steps without '
        'a response line reach it), so this knowledge is never used']


# ---------------------------------------------------------------- reactions, arrivals, endings

def test_reactions_are_checked(make_data):
    data = make_data()
    data["characters"][0]["reactions"] = [
        {"act": "挨拶", "lines": [{"text": "やあ", "expression": "neutral"}, {"text": " ", "expression": "neutral"}]},
        {"act": "感謝", "lines": []},
        {"act": "挨拶", "lines": [{"text": "どうも"}]},
        {"act": "謝罪", "mode": "shuffle", "lines": [{"text": "いいよ"}, {"text": "いいよ"}]},
    ]
    who = data["characters"][0]["id"]
    assert only(data, f"character {who} reaction 挨拶 #2") == [
        f"character {who} reaction 挨拶 #2: is an empty line; the player would see nothing"]
    assert f"character {who} reaction 感謝: has no lines; add lines or remove it" in findings(data)
    assert f"character {who} reaction 挨拶: act 挨拶 has a second reaction; only the first is used" in findings(data)
    assert any("says \"いいよ\" more than once" in f for f in findings(data))
    assert f"character {who} reaction 謝罪 #1: has no expression; the speaker shows neutral" in \
        findings(data, ("hint",))


def test_unknown_expressions_in_authored_lines_are_load_errors(make_data):
    from chalicelib.scenario import ScenarioError
    data = make_data()
    data["characters"][0]["reactions"] = [{"act": "挨拶", "lines": [{"text": "やあ", "expression": "grin"}]}]
    data["characters"][0]["fallbacks"] = [{"id": "x", "text": "……", "expression": "smirk"}]
    with pytest.raises(ScenarioError) as caught:
        load_scenario_data(data, source="t.json")
    messages = [str(p) for p in caught.value.problems]
    who = data["characters"][0]["id"]
    assert any(m.startswith(f"t.json:character {who} reaction 挨拶 #1: unknown expression \"grin\"") for m in messages)
    assert any(m.startswith(f"t.json:character {who} fallback x: unknown expression \"smirk\"") for m in messages)


def test_arrival_and_ending_speakers_must_be_present(make_data):
    data = make_data()
    garden = data["places"][1]                     # 乙 is there, 甲 is not
    garden["arrival"] = {"lines": []}
    garden["ending"] = {"lines": [{"speaker": "乙", "text": "またね"}, {"speaker": "甲", "text": "じゃあね"}]}
    assert f"place {garden['id']} arrival: has no lines; add lines or remove it" in findings(data)
    assert only(data, f"place {garden['id']} ending #2") == [
        f"place {garden['id']} ending #2: speaker 甲 is not among the people of {garden['id']}"]
    assert only(data, f"place {garden['id']} ending #1") == []
