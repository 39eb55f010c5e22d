from __future__ import annotations

import json

import pytest

from chalicelib.scenario import SCHEMA_VERSION, GameState, PlayerInput, StateFormatError


def played(rules):
    state = rules.start().state
    for text in ["なし", "意図:音楽", "移動:控え室"]:
        state = rules.handle(PlayerInput.parse(text), state).state
    return state


def test_json_round_trip(rules):
    state = played(rules)
    data = json.loads(state.to_json())
    assert data == {
        "schema_version": SCHEMA_VERSION,
        "place": "控え室",
        "turn": 3,
        "shown": ["A01", "A02", "A03", "A04", "O1", "O2", "B01"],
        "last_line": "B01",
        "expressions": {"赤尾妙子": "troubled", "神楽坂葵": "angry"},
    }
    back = GameState.from_json(state.to_json())
    assert back == state
    assert back.to_dict() == state.to_dict()
    assert back.has_shown("O2") and not back.has_shown("M1")
    assert "A04" in back.shown and "F1" not in back.shown
    assert back.shown_count == 7


def test_restored_state_plays_on_identically(rules):
    state = played(rules)
    restored = rules.restore(state.to_json())
    for text in ["意図:宣伝の写真", "移動:店内", "意図:メニュー"]:
        a = rules.handle(PlayerInput.parse(text), state)
        b = rules.handle(PlayerInput.parse(text), restored)
        assert a.to_dict() == b.to_dict()
        state, restored = a.state, b.state


def test_each_line_stored_once():
    state = GameState("店内", ["A01", "A02"])
    assert state.to_dict()["shown"] == ["A01", "A02"]
    assert "shown_set" not in state.to_dict()


@pytest.mark.parametrize("data, fragment", [
    ({"schema_version": 99, "place": "店内", "turn": 0, "shown": []}, "schema_version 99 is not supported"),
    ({"place": "店内", "turn": 0, "shown": []}, "schema_version None"),
    ({"schema_version": 1, "place": "店内", "turn": -1, "shown": []}, "turn"),
    ({"schema_version": 1, "place": "店内", "turn": 0, "shown": ["A01", "A01"]}, "appears twice"),
    ({"schema_version": 1, "place": "店内", "turn": 0, "shown": [], "extra": 1}, "extra"),
    ([], "expected a JSON object"),
])
def test_bad_records_are_rejected(data, fragment):
    with pytest.raises(StateFormatError, match=fragment):
        GameState.from_dict(data)


def test_bad_json_is_rejected():
    with pytest.raises(StateFormatError, match="invalid game state JSON at 1:2"):
        GameState.from_json("{x")


def test_restore_checks_against_the_scenario(rules):
    with pytest.raises(ValueError, match='unknown place "屋上"'):
        rules.restore({"schema_version": 1, "place": "屋上", "turn": 0, "shown": []})
    # A character missing from an old record starts neutral.
    state = rules.restore({"schema_version": 1, "place": "店内", "turn": 2, "shown": ["A01"],
                           "expressions": {"赤尾妙子": "smile"}})
    assert dict(state.expressions) == {"赤尾妙子": "smile", "神楽坂葵": "neutral"}
    assert rules.check_state(GameState("店内", ["ZZ"])) == ["unknown lines shown: ZZ"]


def test_long_games_share_the_journal(rules):
    # Successive states see their own prefix of one journal; earlier states are unaffected.
    start = rules.start().state
    s1 = rules.handle(PlayerInput.none(), start).state
    s2 = rules.handle(PlayerInput.intent("音楽"), s1).state
    assert start.shown_lines == ("A01", "A02")
    assert s1.shown_lines == ("A01", "A02", "A03", "A04")
    assert s2.shown_lines[-2:] == ("O1", "O2")
    assert not s1.has_shown("O1")
