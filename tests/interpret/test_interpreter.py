"""The turn-level entry point: result, addressee and the debug record."""
from __future__ import annotations

import json

from chalicelib.interpret import ErrorKind, Interpretation, Interpreter
from chalicelib.scenario import PlayerInput


class Broken:
    name = "broken"

    def interpret(self, text, choices, context):
        raise RuntimeError("boom")


class Outside:
    """Claims an input that is not among the options it was given."""
    name = "outside"

    def interpret(self, text, choices, context):
        return Interpretation(PlayerInput.intent("音楽"), "A1", backend=self.name)


class Recorder:
    name = "recorder"

    def __init__(self):
        self.offered = None

    def interpret(self, text, choices, context):
        self.offered = [str(o.input) for o in choices]
        self.context = context
        return Interpretation(backend=self.name)


def test_turn_result_and_debug_record(rules, states):
    turn = Interpreter(rules).interpret_turn("葵はどう思う？流す曲を変えたら", states["none"])
    assert turn.input == PlayerInput.intent("音楽")
    assert turn.addressee == "神楽坂葵"
    debug = json.loads(turn.debug.to_json())                    # what the debug view publishes
    assert debug["input"] == "意図:音楽" and debug["token"] == "A1"
    assert [c["token"] for c in debug["candidates"]][:3] == ["A1", "A2", "A3"]
    assert debug["addressee"] == {"character": "神楽坂葵", "how": "question", "ignored": None}
    assert {n["input"] for n in debug["narrowing"]["words"]} >= {"意図:メニュー", "意図:赤いドア"}
    assert "A1" in debug["offered"] and "A2" not in debug["offered"]
    assert debug["backend"]["name"] == "lexical" and debug["backend"]["choice"] == "A1"
    assert set(debug["ms"]) == {"candidates", "narrowing", "model", "refinement", "total"}
    assert debug["examples_dropped"] is False and debug["error"] is None


def test_words_narrowing_happens_before_the_backend(rules, states):
    backend = Recorder()
    Interpreter(rules, backend).interpret_turn("ナポリタンおいしい", states["none"])
    assert "意図:メニュー" in backend.offered and "意図:音楽" not in backend.offered
    assert "移動:控え室" in backend.offered and "意図:いい店とは" in backend.offered   # no words: never narrowed
    assert backend.context.last_line == "……あなたはどう思う？"


def test_a_failing_backend_gives_none(rules, states):
    turn = Interpreter(rules, Broken()).interpret_turn("流す曲を変えたら？", states["none"])
    assert turn.input == PlayerInput.none() and turn.error == ErrorKind.INTERNAL
    assert turn.debug.error == "internal"


def test_result_must_be_offered(rules, states):
    # 音楽 was removed by word narrowing, so the backend's claim is not trusted
    turn = Interpreter(rules, Outside()).interpret_turn("こんばんは", states["none"])
    assert turn.input == PlayerInput.none()
    # not a candidate at the start at all
    turn = Interpreter(rules, Outside()).interpret_turn("流す曲", states["start"])
    assert turn.input == PlayerInput.none() and turn.rule == "not_a_candidate"


def test_plain_words_and_no_refine_switches(rules, states):
    plain = Interpreter(rules, variant_words=False)
    assert plain.interpret_turn("ジャズでも流したら？", states["none"]).input == PlayerInput.none()
    assert Interpreter(rules).interpret_turn("ジャズでも流したら？", states["none"]).input == PlayerInput.intent("音楽")
    bare = Interpreter(rules, refine=False)
    assert bare.interpret_turn("じゃあ、そろそろ失礼します", states["none"]).rule is None


def test_handle_accepts_every_result(rules, states):
    interpreter = Interpreter(rules)
    for name, state in states.items():
        for text in ("控え室に行こう", "店に戻ろう", "失礼します", "うん", "ナポリタン", "葵、聞いて"):
            turn = interpreter.interpret_turn(text, state)
            rules.handle(turn.input, state, turn.addressee)     # never raises
