"""The dialogue-act recogniser behind reactions, and `butai eval-acts`."""
import json

import pytest

from butai_tools.cli import main
from chalicelib.interpret.acts import ActRecogniser
from chalicelib.interpret.cues import SceneNames
from chalicelib.scenario import load_scenario
from tests.conftest import ROOT

SCENARIO = ROOT / "scenarios" / "chinoike.json"
DATASET = ROOT / "scenarios" / "eval" / "acts.json"


@pytest.fixture(scope="module")
def recognise():
    return ActRecogniser(SceneNames.of(load_scenario(SCENARIO))).recognise


@pytest.mark.parametrize("text, act", [
    ("こんばんは", "挨拶"), ("ありがとう", "感謝"), ("ごめんね", "謝罪"), ("ばーか", "暴言"),
    ("ママ、お会計おねがい", "注文"), ("葵ちゃん、映画は何が好き？", "本人"), ("そうだね", "同意"),
    ("そんなことないよ", "反対"), ("明日雨降るかな", "質問"), ("すてきなお店", "称賛"), ("うーん", "なし"),
])
def test_acts(recognise, text, act):
    assert recognise(text).act == act


def test_an_insult_or_apology_is_not_taken_for_a_question(recognise):
    assert recognise("ばかじゃないの？").act == "暴言"
    assert recognise("ごめん、何て言った？").act == "謝罪"


def test_quoted_words_are_not_the_players_act(recognise):
    assert recognise("「ばーか」って言われたんだ").act != "暴言"


def test_eval_acts_report(capsys):
    assert main(["eval-acts", str(SCENARIO), str(DATASET), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["splits"]) == {"dev", "heldout", "fresh"}
    assert set(result["per_act"]) >= {"挨拶", "感謝", "謝罪", "称賛", "暴言", "同意", "反対", "質問", "注文", "本人", "なし"}
    assert result["total"] == len(json.loads(DATASET.read_text(encoding="utf-8"))["cases"])
    # a misread act falls to なし (the fallback), almost never to another act
    wrong_act = [c for c in result["cases"] if not c["correct"] and c["got"] != "なし"]
    assert len(wrong_act) <= 2, wrong_act


def test_eval_acts_split_and_bad_dataset(tmp_path, capsys):
    assert main(["eval-acts", str(SCENARIO), str(DATASET), "--split", "heldout"]) == 0
    assert "split heldout: " in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cases": [{"id": "x", "text": "やあ", "expect": "挨拶す"}]}), encoding="utf-8")
    assert main(["eval-acts", str(SCENARIO), str(bad)]) == 1
    assert 'unknown act \'挨拶す\'' in capsys.readouterr().err
