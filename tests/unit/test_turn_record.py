"""The turn record is typed end to end, and records written before it was still load."""
import json

from chalicelib.turn_record import AnswerSource, InterpretationRecord, TurnRecord

# A turn as the director stored it before the record was typed: the judged face of a model's line
# under free_talk.expression, the interpretation and the notices as plain objects.
OLDER = {
    "id": "01TURN", "game": 1, "text": "こんばんは", "to": None, "move": None, "place_before": "店内",
    "place_after": "店内", "input": "なし", "addressee": None,
    "interpretation": {"text": "こんばんは", "place": "店内",
                       "addressee": {"character": None, "how": None, "ignored": None},
                       "candidates": [{"token": "A1", "input": "移動:控え室", "label": "控え室へ", "source": "input"}],
                       "narrowing": {"addressee": [], "words": [{"token": "A2", "input": "意図:音楽"}]},
                       "offered": ["A1"], "backend": {"name": "lexical", "choice": None, "input": "なし",
                                                      "answer": "none", "scores": {"A1": 0.1}, "error": None,
                                                      "detail": None, "prompt_tokens": None, "mode": None},
                       "rule": None, "input": "なし", "token": None, "error": None, "examples_dropped": False,
                       "ms": {"total": 1.5}},
    "lines": ["A03"],
    "free_talk": {"speaker": "赤尾妙子", "intent": None, "text": "ありがとね", "source": "model", "reason": None,
                  "fallback_id": None, "attempts": [{"text": "ありがとね", "rejected": None}], "ms": 3.0,
                  "mode": "standard",
                  "expression": {"expression": "smile", "scores": {"smile": 0.8}, "judge": "lexicon", "ms": 0.2,
                                 "error": None, "detail": None, "cues": ["ありがと"]}},
    "notices": [{"kind": "exits", "destinations": ["控え室"]}],
    "errors": [], "ms": {"total": 9.0},
}


def test_an_older_record_loads_typed_with_the_judged_face_in_its_own_field():
    turn = TurnRecord.from_json(json.dumps(OLDER, ensure_ascii=False))
    assert turn.turn is None and turn.place_before == "店内"
    assert turn.interpretation.narrowing.words[0].input == "意図:音楽"
    assert turn.interpretation.backend.scores == {"A1": 0.1}
    assert turn.free_talk.source is AnswerSource.MODEL
    assert turn.free_talk.expression == "smile" and turn.free_talk.judgment.cues == ["ありがと"]
    assert turn.free_talk.attempts[0].text == "ありがとね"
    assert turn.notices[0].kind == "exits" and turn.notices[0].destinations == ["控え室"]


def test_a_record_round_trips_and_keeps_fields_it_does_not_know():
    newer = {**OLDER, "turn": 3, "mood": {"topic": "音楽"}}       # a field a later version adds
    turn = TurnRecord.model_validate(newer)
    again = TurnRecord.from_json(turn.to_json())
    assert again == turn and again.model_extra == {"mood": {"topic": "音楽"}}
    assert "restart" not in turn.to_dict() and "unplayable" not in turn.to_dict()


def test_a_button_tap_is_recorded_as_the_move_it_chose():
    record = InterpretationRecord.of_button("店内へ行く", "移動:店内")
    assert (record.rule, record.input, record.candidates, record.backend) == ("destination_button", "移動:店内", [],
                                                                              None)
