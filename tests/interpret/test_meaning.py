"""Meaning in narrowing and scoring, the confidence band, the cascade, leave phrases, and `butai suggest`."""
from __future__ import annotations

import json

import pytest

from chalicelib.interpret import Interpreter
from chalicelib.interpret.backends import build_backend
from chalicelib.interpret.backends.cascade import CascadeBackend
from chalicelib.interpret.confidence import is_unsure
from chalicelib.interpret.ja import available
from chalicelib.interpret.phrases import SaidPhrases
from chalicelib.interpret.related import IntentMeaning
from tests.interpret.test_openai import FakeServer, completion

pytestmark = pytest.mark.skipif(not available(), reason="SudachiPy or its dictionary is not installed")


@pytest.fixture(scope="module")
def meaning(rules):
    return IntentMeaning.of(rules.scenario)


@pytest.mark.parametrize("text, intent", [
    ("ジンジャーエールある？", "意図:メニュー"),      # the examples of world knowledge
    ("焼き鳥とか置いてる？", "意図:メニュー"),
    ("ピアノの生演奏があったら素敵だね", "意図:音楽"),
])
def test_words_related_in_meaning_keep_and_choose_the_intent(interpreter, states, meaning, text, intent):
    assert intent in {m.intent for m in meaning.matches(text)}
    turn = interpreter.interpret_turn(text, states["none"])
    assert str(turn.input) == intent
    assert intent not in {n.input for n in turn.debug.narrowing.words}


def test_meaning_never_gives_a_move_or_a_leave(meaning):
    for text in ("奥の部屋に移りたい気分", "そろそろ帰宅したいな", "退店します"):
        assert all(m.intent.startswith("意図:") for m in meaning.matches(text))


def test_names_of_characters_and_places_are_not_topic_words(meaning):
    assert meaning.matches("ママ") == () and meaning.matches("控え室") == ()


@pytest.mark.parametrize("text", ["看板猫がいたらいいのに", "葵の名前って素敵だね", "ママって名前、誰がつけたの？"])
def test_a_word_in_another_sense_is_not_the_topic(interpreter, states, text):
    assert str(interpreter.interpret_turn(text, states["none"]).input) == "なし"


def test_every_result_has_best_margin_and_unsure(interpreter, states):
    sure = interpreter.interpret_turn("ナポリタンを看板メニューにしようよ", states["none"]).interpretation
    assert sure.best >= 1.0 and sure.margin > 0 and not sure.unsure
    weak = interpreter.interpret_turn("お酒が進む曲だね", states["none"]).interpretation
    assert weak.unsure and 0 < weak.margin < 0.3
    assert "margin" in weak.to_dict() and "unsure" in weak.to_dict()


def test_unsure_band():
    assert not is_unsure(0.0, 0.0)          # no evidence: sure it is none
    assert not is_unsure(1.2, 0.5)
    assert is_unsure(0.58, 0.58)            # a word related only in meaning
    assert is_unsure(1.0, 0.05)             # two topics named alike
    assert is_unsure(0.9, 0.25)


@pytest.fixture
def server():
    fake = FakeServer()
    fake.thread.start()
    yield fake
    fake.httpd.shutdown()
    fake.httpd.server_close()


def test_cascade_asks_the_model_only_when_unsure_and_keeps_lexical_on_failure(rules, states, server):
    backend = build_backend("lexical+openai", base_url=server.base_url, model="tiny", timeout=2)
    assert isinstance(backend, CascadeBackend) and backend.name == "lexical+openai"
    interpreter = Interpreter(rules, backend)
    sure = interpreter.interpret_turn("ナポリタンを看板メニューにしようよ", states["none"])
    assert str(sure.input) == "意図:メニュー" and server.chats() == []
    # lexical: 意図:音楽 (a one-character word; the menu's 酒 only in a clause about the song), unsure
    server.queue.append((200, completion("B"), 0.0))            # B = A2 = 意図:メニュー after なし
    asked = interpreter.interpret_turn("お酒が進む曲だね", states["none"])
    assert len(server.chats()) == 1 and str(asked.input) == "意図:メニュー"
    assert "model asked" in asked.interpretation.detail
    server.queue.append((503, {"error": "down"}, 0.0))
    kept = interpreter.interpret_turn("お酒が進む曲だね", states["none"])
    assert str(kept.input) == "意図:音楽" and "lexical kept" in kept.interpretation.detail
    moved = interpreter.interpret_turn("控え室に行こう", states["none"])
    assert str(moved.input) == "移動:控え室" and len(server.chats()) == 2


def test_leave_phrases_come_from_the_scenario_and_need_a_committing_form(rules, interpreter, states):
    assert "店を出る" in rules.scenario.scenario.leave_phrases
    phrases = SaidPhrases(["店を出る"])
    assert phrases.said("じゃあ、そろそろ店を出るよ") and phrases.said("お店を出ましょうか")
    for text in ("店を出る前にもう一杯だけ", "店を出たら電話するね", "店を出ないよ", "店を出たよ"):
        assert not phrases.said(text), text
    assert str(interpreter.interpret_turn("今日はもう店を出るね", states["none"]).input) == "離脱"
    assert str(interpreter.interpret_turn("店を出る前にもう一杯だけ", states["none"]).input) != "離脱"


def test_suggest_lists_missed_inputs_per_intent_with_reasons_and_words(reference_path, tmp_path, capsys):
    from butai_tools.cli import main
    dataset = tmp_path / "played.json"
    dataset.write_text(json.dumps({"cases": [
        {"id": "p1", "setup": ["なし"], "text": "口コミで広めたら？", "expect": "意図:宣伝の写真"},
        {"id": "p2", "setup": ["なし"], "text": "ナポリタンを食べながら聴く歌謡曲はいいね", "expect": "意図:音楽"},
        {"id": "p3", "setup": [], "text": "おでんある？", "expect": "意図:メニュー"},
        {"id": "p4", "setup": ["なし"], "text": "看板を新しくしようよ", "expect": "意図:店名と看板"},
    ]}, ensure_ascii=False), encoding="utf-8")
    assert main(["suggest", str(reference_path), str(dataset), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    intents = out["intents"]
    assert "意図:店名と看板" not in intents                        # caught: nothing to suggest
    (ad,) = intents["意図:宣伝の写真"]
    assert ad["reason"] == "narrowed" and "口コミ" in ad["add_words"]
    (music,) = intents["意図:音楽"]
    assert music["reason"] == "classifier" and "意図:メニュー" in music["detail"]
    assert music["add_example"] == "ナポリタンを食べながら聴く歌謡曲はいいね" and "ナポリタン" not in music["add_words"]
    (menu,) = intents["意図:メニュー"]
    assert menu["reason"] == "not_offered"
    assert main(["suggest", str(reference_path), str(dataset)]) == 0
    text = capsys.readouterr().out
    assert "意図:宣伝の写真" in text and "add to words: 口コミ" in text
