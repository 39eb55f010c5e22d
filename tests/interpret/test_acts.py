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


def test_an_act_added_as_data_is_recognised_and_answered_by_its_reaction():
    # 乾杯 is only data: its entry, pattern and place in acts.json, a reaction in the scenario
    from chalicelib.dialogue_acts import ACT
    from chalicelib.interpret.cues import SceneNames
    from chalicelib.scenario import load_scenario
    from tests.conftest import ROOT
    scenario = load_scenario(ROOT / "scenarios" / "chinoike.json")
    recogniser = ActRecogniser(SceneNames.of(scenario))
    assert "乾杯" in ACT.all and "乾杯" in ACT.group("social")
    assert recogniser.recognise("じゃあ、かんぱーい！").act == "乾杯"
    assert recogniser.recognise("ビールください").act == "注文"           # an order is still an order
    assert "乾杯" in scenario.reactions["赤尾妙子"]


def test_an_order_of_the_scenarios_own_menu_is_an_order_and_no_other_scenarios_dish_is():
    from chalicelib.interpret.cues import SceneNames
    with_ramen = SceneNames(items=("ラーメン", "餃子"))
    assert ActRecogniser(with_ramen).recognise("ラーメンください").act == "注文"
    assert ActRecogniser(SceneNames()).recognise("ラーメンください").act != "注文"
    assert ActRecogniser(SceneNames()).recognise("ナポリタンください").act != "注文"   # the reference's dish is its data


@pytest.mark.parametrize("text", [
    "そうかなあって、俺の話だよ。継いだときの話。まあいいや",      # the character's words quoted back
    "え、どうだろうって…！プロポーズなんで、ほんとに頼みますよ",
    "付き合って三年になるんです。来週の土曜、レストランで…渡そうかなって",   # そうかな inside 渡そうかな, quoted
    "でも潰すのだけはいやだったんだよな",                          # a dislike told in the past
])
def test_a_cue_quoted_or_told_is_no_disagreement(recognise, text):
    assert recognise(text).act != "反対"


def test_an_emphatic_tte_still_disagrees(recognise):
    assert recognise("違うって！").act == "反対"


@pytest.mark.parametrize("text", [
    "ありがとうございます。あの、配達、本当に土曜の7時前で大丈夫ですよね？念のため",
    "うーん、じゃあ、土曜日にもう一回来て買ったほうがいいのかな…",
])
def test_a_question_after_thanks_or_a_hesitation_asks(recognise, text):
    assert recognise(text).act == "質問"


def test_a_paying_word_marked_as_topic_still_asks_for_the_bill(recognise):
    found = recognise("ですよね、コンビニで買います。…あの、お会計って、今日してもいいですか？")
    assert (found.act, found.paying) == ("注文", True)


def test_a_cue_asked_about_is_not_done(recognise):
    assert recognise("ママ、葵ちゃんの言う変えるって話、ママはどうなの？ 反対なのかい").act != "反対"
    assert recognise("そうかな？").act == "反対"        # the cue alone with a question mark still doubts


def test_thanks_named_as_a_thing_is_no_thanks(recognise):
    assert recognise("あ、あとかすみ草も少し添えてもらえますか？感謝って花言葉、いいなと思って").act != "感謝"
    assert recognise("本当に感謝してます").act == "感謝"
