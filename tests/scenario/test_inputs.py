from __future__ import annotations

import pytest

from chalicelib.scenario import LEAVE, NONE, InputSyntaxError, PlayerInput
from chalicelib.scenario.inputs import InputKind


@pytest.mark.parametrize("text, kind, target", [
    ("意図:音楽", "intent", "音楽"),
    ("移動:控え室", "move", "控え室"),
    ("離脱", "leave", None),
    ("なし", "none", None),
    ("意図:二人の先の話", "intent", "二人の先の話"),
])
def test_parse_and_print(text, kind, target):
    parsed = PlayerInput.parse(text)
    assert parsed.kind == kind
    assert parsed.target == target
    assert str(parsed) == text
    assert PlayerInput.parse(str(parsed)) == parsed


def test_constructors_match_parse():
    assert PlayerInput.intent("音楽") == PlayerInput.parse("意図:音楽")
    assert PlayerInput.move("店内") == PlayerInput.parse("移動:店内")
    assert PlayerInput.leave() is LEAVE and PlayerInput.parse("離脱") is LEAVE
    assert PlayerInput.none() is NONE and PlayerInput.parse("なし") is NONE
    assert PlayerInput.intent("音楽").target_id == "音楽" and PlayerInput.intent("音楽").is_intent
    assert PlayerInput.move("店内").target_id == "店内" and PlayerInput.move("店内").is_move
    assert PlayerInput.intent("音楽") != PlayerInput.move("音楽")
    assert len({PlayerInput.intent("a"), PlayerInput.intent("a"), NONE}) == 2


@pytest.mark.parametrize("text, fragment", [
    ("意図音楽", "not a player input"),
    ("意図:", "missing the intent"),
    ("移動:", "missing the place"),
    ("意図： 音楽", 'ASCII colon'),
    ("意図:音楽 ", "remove the spaces"),
    (" なし", "remove the surrounding spaces"),
    ("", "not a player input"),
    ("none", "not a player input"),
])
def test_bad_syntax_is_a_clear_error(text, fragment):
    with pytest.raises(InputSyntaxError) as err:
        PlayerInput.parse(text)
    assert fragment in str(err.value)
    assert "意図:X, 移動:P, 離脱 or なし" in str(err.value) or "missing" in str(err.value) or "spaces" in str(err.value)


def test_invalid_construction_is_rejected():
    with pytest.raises(InputSyntaxError):
        PlayerInput("intent", None)
    with pytest.raises(InputSyntaxError):
        PlayerInput("leave", "x")
    with pytest.raises(InputSyntaxError):
        PlayerInput("jump", "x")  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["intent", "move"])
@pytest.mark.parametrize("target", ["音楽", "二人の先の話", "a b", "離脱", "なし", "意図:x", "移動:店内", "ｘ", "🎵",
                                    "A" * 200, "控え室\n2"])
def test_round_trip_any_target(kind, target):
    value = PlayerInput(kind, target)
    assert PlayerInput.parse(str(value)) == value
    assert str(PlayerInput.parse(str(value))) == str(value)


def test_kinds_are_one_enum_whatever_made_the_input():
    assert {PlayerInput.parse(t).kind for t in ("意図:a", "移動:b", "離脱", "なし")} == set(InputKind)
    assert PlayerInput("move", "店内").kind is InputKind.MOVE          # a written kind becomes the enum
    assert PlayerInput("move", "店内") == PlayerInput.move("店内")
    assert [i.moves_away for i in (PlayerInput.move("b"), LEAVE, NONE, PlayerInput.intent("a"))] == [
        True, True, False, False]
    with pytest.raises(InputSyntaxError):
        PlayerInput("walk", "店内")
