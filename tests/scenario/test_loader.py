"""Loading: the reference scenario, and every kind of load error.  Each error
names the file, the where (line id, intent, character, place), the offending
term and what was expected."""
from __future__ import annotations

import json

import pytest

from chalicelib.scenario import ScenarioError, load_scenario, load_scenario_data, load_scenario_text

EXPECTED_TERMS = "expected one of 意図:X, 移動:P, 離脱, なし, 入力, 開始, 到着, 済:ID, 未:ID, 直後:ID"


@pytest.fixture
def load_broken(tmp_path, monkeypatch):
    """Write `data` as chinoike.json in a temp dir and load it by its bare name,
    returning the problem messages."""
    monkeypatch.chdir(tmp_path)

    def load(data, name="chinoike.json"):
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, indent=2)
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pytest.raises(ScenarioError) as err:
            load_scenario(name)
        messages = [str(p) for p in err.value.problems]
        assert str(err.value) == "\n".join(messages)
        assert "Traceback" not in str(err.value)
        return messages
    return load


def line(data, line_id):
    return next(ln for scene in data["scenes"] for ln in scene["lines"] if ln["id"] == line_id)


def character(data, char_id):
    return next(c for c in data["characters"] if c["id"] == char_id)


def place(data, place_id):
    return next(p for p in data["places"] if p["id"] == place_id)


# ---------------------------------------------------------------- the good case

def test_reference_loads_and_is_indexed(compiled):
    assert compiled.title == "血の池の夜"
    assert compiled.start_place == "店内"
    assert list(compiled.intents) == ["音楽", "メニュー", "二人の先の話", "赤いドア", "店名と看板", "宣伝の写真",
                                      "いい店とは", "今のままでいい"]
    assert list(compiled.lines)[:4] == ["A01", "A02", "A03", "A04"]
    shop = compiled.scene("店内")
    assert [ln.id for ln in shop.starts] == ["A01"]
    assert [ln.id for ln in shop.progressions] == ["A03"]
    assert [ln.id for ln in shop.chains["O1"]] == ["O2"]
    assert compiled.scene("控え室").arrivals[0].id == "B01"
    assert compiled.responder("店内") == "赤尾妙子"
    assert str(compiled.lines["O1"].condition) == "意図:音楽 + 済:A04"


def test_text_dict_and_path_load_alike(reference_path, reference_data):
    from_text = load_scenario_text(reference_path.read_text(encoding="utf-8"))
    from_dict = load_scenario_data(reference_data)
    assert from_text.scenario == from_dict.scenario == load_scenario(reference_path).scenario


def test_conditions_are_parsed_once_at_load(make_data, monkeypatch):
    from chalicelib.scenario import GameRules, PlayerInput, conditions, loader

    data = make_data(room=[("P1", "甲", "入力 + 未:P2"), ("P2", "乙", "入力 + 未:P2"), ("R1", "甲", "意図:天気")])
    compiled = load_scenario_data(data)
    assert compiled.lines["P1"].condition.shown == ()
    assert compiled.lines["R1"].condition.input == PlayerInput.intent("天気")

    def refuse(*args, **kwargs):
        raise AssertionError("conditions must not be parsed after load")

    monkeypatch.setattr(conditions, "parse_condition", refuse)
    monkeypatch.setattr(conditions, "parse_term", refuse)
    monkeypatch.setattr(loader, "parse_condition", refuse)
    rules = GameRules(compiled)
    step = rules.handle(PlayerInput.intent("天気"), rules.start().state)
    assert step.line_ids == ("R1", "P1")
    assert rules.candidates(step.state)


# ---------------------------------------------------------------- term errors

def test_spec_example_message(reference_copy, load_broken):
    line(reference_copy, "O2")["condition"] = "直後O1"
    [message] = load_broken(reference_copy)
    assert message.startswith('chinoike.json:line O2: unknown term "直後O1" in condition; ' + EXPECTED_TERMS)


def test_unknown_line_id(reference_copy, load_broken):
    line(reference_copy, "O1")["condition"] = "意図:音楽 + 済:A4"
    [message] = load_broken(reference_copy)
    assert message == ('chinoike.json:line O1: unknown line "A4" in term "済:A4"; expected one of A01, A02, A03, '
                       'A04, O1, O2, M1, M2, F1, B01, … (13 in all) (did you mean "A04"?)')


def test_unknown_intent_and_place(reference_copy, load_broken):
    line(reference_copy, "O1")["condition"] = "意図:おんがく + 済:A04"
    line(reference_copy, "A03")["condition"] = "移動:裏口"
    messages = load_broken(reference_copy)
    assert messages[0].startswith('chinoike.json:line A03: unknown place "裏口" in term "移動:裏口"; '
                                  'expected one of 店内, 控え室')
    assert messages[1].startswith('chinoike.json:line O1: unknown intent "おんがく" in term "意図:おんがく"; '
                                  'expected one of 音楽, メニュー')


def test_after_with_input_term_is_an_error(reference_copy, load_broken):
    line(reference_copy, "O2")["condition"] = "直後:O1 + 意図:音楽"
    [message] = load_broken(reference_copy)
    assert message.startswith('chinoike.json:line O2: term "直後:O1" cannot be combined with input term "意図:音楽"')
    assert "expected either 直後:ID or an input term" in message


@pytest.mark.parametrize("term", ["なし", "離脱", "移動:控え室"])
def test_after_with_each_input_term(reference_copy, load_broken, term):
    line(reference_copy, "A04")["condition"] = f"{term} + 直後:A03"
    [message] = load_broken(reference_copy)
    assert f'line A04: term "直後:A03" cannot be combined with input term "{term}"' in message


def test_knowledge_condition_errors_name_the_character(reference_copy, load_broken):
    character(reference_copy, "赤尾妙子")["knowledge"][2]["condition"] = "意図:店名"
    [message] = load_broken(reference_copy)
    assert message.startswith('chinoike.json:character 赤尾妙子 knowledge #3: unknown intent "店名" in term '
                              '"意図:店名"; expected one of')
    assert '(did you mean "店名と看板"?)' in message


# ---------------------------------------------------------------- effects

def test_unknown_effect_kind(reference_copy, load_broken):
    line(reference_copy, "O2")["effects"] = ["音:ドア"]
    [message] = load_broken(reference_copy)
    assert message == ('chinoike.json:line O2: unknown effect kind "音" in effect "音:ドア"; '
                       'expected 表情:CHARACTER:KEY or フラグ:NAME')


def test_effect_with_unknown_character(reference_copy, load_broken):
    line(reference_copy, "O2")["effects"] = ["表情:神楽葵:angry"]
    [message] = load_broken(reference_copy)
    assert message.startswith('chinoike.json:line O2: unknown character "神楽葵" in effect "表情:神楽葵:angry"; '
                              'expected one of 赤尾妙子, 神楽坂葵')


def test_article_expression_key_is_rejected(reference_copy, load_broken):
    line(reference_copy, "O2")["effects"] = ["表情:神楽坂葵:怒り"]
    [message] = load_broken(reference_copy)
    assert message.startswith('chinoike.json:line O2: unknown expression "怒り" for 神楽坂葵 in effect '
                              '"表情:神楽坂葵:怒り"; expected one of neutral, smile, troubled, surprised, embarrassed, '
                              'angry')


def test_neutral_is_always_allowed(reference_copy):
    aoi = character(reference_copy, "神楽坂葵")
    aoi["expressions"] = [k for k in aoi["expressions"] if k != "neutral"]
    line(reference_copy, "A04")["effects"] = ["表情:神楽坂葵:neutral"]
    compiled = load_scenario_data(reference_copy)
    assert str(compiled.lines["A04"].effects[0]) == "表情:神楽坂葵:neutral"


# ---------------------------------------------------------------- references between sections

def test_start_place_must_exist(reference_copy, load_broken):
    reference_copy["start"]["place"] = "入口"
    [message] = load_broken(reference_copy)
    assert message.startswith('chinoike.json:start: unknown place "入口" as start.place; expected one of 店内, 控え室')


def test_place_references(reference_copy, load_broken):
    shop = place(reference_copy, "店内")
    shop["people"].append("常連")
    shop["responder"] = "マスター"
    shop["exits"].append("裏口")
    messages = load_broken(reference_copy)
    assert messages == [
        'chinoike.json:place 店内: unknown character "常連" in people; expected one of 赤尾妙子, 神楽坂葵',
        'chinoike.json:place 店内: unknown character "マスター" as responder; expected one of 赤尾妙子, 神楽坂葵',
        'chinoike.json:place 店内: unknown place "裏口" in exits; expected one of 店内, 控え室',
    ]


def test_speaker_must_exist(reference_copy, load_broken):
    line(reference_copy, "A02")["speaker"] = "葵"
    [message] = load_broken(reference_copy)
    assert message.startswith('chinoike.json:line A02: unknown character "葵" as speaker; expected one of 赤尾妙子, '
                              '神楽坂葵')


def test_scene_place_must_exist_once(reference_copy, load_broken):
    reference_copy["scenes"].append({"place": "店内", "lines": []})
    reference_copy["scenes"].append({"place": "屋上", "lines": []})
    messages = load_broken(reference_copy)
    assert messages[0].startswith('chinoike.json:scene 店内: a second scene for place "店内"')
    assert messages[1].startswith('chinoike.json:scene 屋上: unknown place "屋上" for a scene')


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d["scenes"][1]["lines"].append(dict(line(d, "O1"))),
     'chinoike.json:line O1: duplicate line id "O1"; expected each line id once'),
    (lambda d: d["intents"].append(dict(d["intents"][0])),
     'chinoike.json:intent 音楽: duplicate intent id "音楽"; expected each intent id once'),
    (lambda d: d["characters"].append(dict(d["characters"][1])),
     'chinoike.json:character 神楽坂葵: duplicate character id "神楽坂葵"; expected each character id once'),
    (lambda d: d["places"].append(dict(d["places"][1])),
     'chinoike.json:place 控え室: duplicate place id "控え室"; expected each place id once'),
    (lambda d: character(d, "神楽坂葵")["fallbacks"].append({"id": "赤尾妙子-拒1", "text": "x"}),
     'chinoike.json:character 神楽坂葵 fallback 赤尾妙子-拒1: duplicate fallback id "赤尾妙子-拒1"; '
     'expected each fallback id once'),
])
def test_duplicate_ids(reference_copy, load_broken, mutate, expected):
    mutate(reference_copy)
    messages = load_broken(reference_copy)
    assert expected in messages


def test_ids_must_be_usable_in_conditions(reference_copy, load_broken):
    reference_copy["intents"][0]["id"] = "音+楽"
    line(reference_copy, "O1")["condition"] = "意図:音楽 + 済:A04"
    messages = load_broken(reference_copy)
    assert messages[0].startswith('chinoike.json:intent 音+楽: intent id "音+楽" is not usable in conditions')


# ---------------------------------------------------------------- JSON and shape

def test_json_syntax_error_has_line_and_column(reference_path, load_broken):
    text = reference_path.read_text(encoding="utf-8").replace('"title": "血の池の夜",',
                                                              '"title": "血の池の夜"', 1)
    [message] = load_broken(text)
    assert message == "chinoike.json:3:3: invalid JSON: Expecting ',' delimiter"


def test_duplicate_json_key(reference_path, load_broken):
    text = reference_path.read_text(encoding="utf-8").replace(
        '"condition": "直後:O1",', '"condition": "直後:O1", "condition": "直後:A01",', 1)
    [message] = load_broken(text)
    assert message.startswith('chinoike.json:object "O2": duplicate key "condition" in one JSON object')


def test_missing_and_unknown_keys(reference_copy, load_broken):
    del line(reference_copy, "O1")["text"]
    line(reference_copy, "O2")["efects"] = line(reference_copy, "O2").pop("effects")
    del reference_copy["intents"][1]["description"]
    messages = load_broken(reference_copy)
    assert 'chinoike.json:intent メニュー: missing required key "description"' in messages
    assert 'chinoike.json:line O1: missing required key "text"' in messages
    assert ('chinoike.json:line O2: unknown key "efects"; expected one of id, speaker, condition, effects, text, '
            'repeatable, replies (did you mean "effects"?)') in messages


def test_wrong_types(reference_copy, load_broken):
    place(reference_copy, "店内")["exits"] = "控え室"
    messages = load_broken(reference_copy)
    assert messages == ['chinoike.json:place 店内: key "exits": expected a valid list']


def test_all_problems_are_reported_together(reference_copy, load_broken):
    line(reference_copy, "O2")["condition"] = "直後O1"
    line(reference_copy, "M2")["effects"] = ["表情:神楽坂葵:怒り"]
    reference_copy["start"]["place"] = "入口"
    messages = load_broken(reference_copy)
    assert [m.split(": ")[0] for m in messages] == ["chinoike.json:start", "chinoike.json:line O2",
                                                   "chinoike.json:line M2"]


def test_missing_file(tmp_path):
    with pytest.raises(ScenarioError) as err:
        load_scenario(tmp_path / "nope.json")
    assert str(err.value) == f"{tmp_path / 'nope.json'}:file: cannot read the scenario: no such file"


def test_schema_reference_key_is_allowed(reference_copy):
    reference_copy = {"$schema": "schema.json", **reference_copy}
    assert load_scenario_data(reference_copy).scenario.schema_ == "schema.json"
