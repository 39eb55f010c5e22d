"""What is set aside before a line is read, and kana spellings of known words read as those words
(chalicelib/interpret/spelling.py)."""
from __future__ import annotations

from functools import lru_cache

import pytest

from chalicelib.interpret.spelling import Respeller, authored_nouns, neutral, scenario_words
from chalicelib.scenario import load_scenario
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def respeller():
    return Respeller(scenario_words(load_scenario(ROOT / "scenarios" / "chinoike.json")))


@pytest.mark.parametrize("said, meant", [
    ("えっと、このお店って何年？", "このお店って何年？"),
    ("あのさ、ところで、葵ちゃんは？", "葵ちゃんは？"),
    ("ビールください😊", "ビールください"),
    ("ママかわいいww", "ママかわいい"),
    ("そうなんだ笑", "そうなんだ"),
    ("そっか、ははは", "そっか、"),
    ("👍🏻✨ いいね", "いいね"),
    ("うーん、考えさせて", "考えさせて"),          # hesitation before what the line does
    ("えー、いや、やめといたほうがいいよ", "いや、やめといたほうがいいよ"),
    ("葵さんは何歳笑？", "葵さんは何歳？"),          # after a kanji, 笑 the analyser reads alone is laughter
    ("撮ったのは誰笑？", "撮ったのは誰？"),
])
def test_neutral_material_is_set_aside(said, meant):
    assert neutral(said).text == meant


@pytest.mark.parametrize("line", ["笑", "😊", "えっと", "ええ、そうです", "あの店が好き", "笑顔がいい", "うーん", "えー！",
                                  "えっ、三十年も？", "苦笑いした", "思わず苦笑", "微笑"])
def test_what_is_not_neutral_stays(line):
    assert neutral(line).text == line


@pytest.mark.parametrize("said, meant", [
    ("このおみせ、何年？", "このお店、何年？"),
    ("あおいちゃんは何歳？", "葵ちゃんは何歳？"),
    ("ひかえしつに行きたい", "控え室に行きたい"),
    ("なまひとつ！", "生ひとつ！"),
    ("おかいけいお願いします", "お会計お願いします"),
    ("せんだいのママってどんな人？", "先代のママってどんな人？"),
    ("げんきにしてた？", "元気にしてた？"),
    ("なまえは何？", "名前は何？"),              # 名前, not the 生 of なま (a word boundary)
    ("えっ、三十ねんも？", "えっ、三十年も？"),    # a counter in kana after a number
    ("で、何ねんだっけ？", "で、何年だっけ？"),
    ("ビールなら600えんっすよね", "ビールなら600円っすよね"),
    ("ハイボールは1ばいしか飲んでない", "ハイボールは1杯しか飲んでない"),
])
def test_kana_spellings_of_known_words_read_as_the_words(respeller, said, meant):
    assert respeller.respell(said) == meant


@pytest.mark.parametrize("line", [
    "カウンターのほうがいいな",      # ほう|が is no 邦画 (a particle)
    "早くしろよ",                   # a verb the analyser read is no 白 or 城
    "あおい空がきれい",              # an adjective is no 葵
    "いつからあるの？",             # いつ is normalised 何時, which reads なんじ
    "2ほんとにいいの？",            # the analyser reads ほんと there, not a counter
])
def test_kana_that_is_something_else_stays(respeller, line):
    assert respeller.respell(line) == line


def test_set_phrases_stay_in_kana():
    assert Respeller(["休み"]).respell("おやすみなさい") == "おやすみなさい"      # a goodbye, not お休み (a day off)
    assert Respeller(["休み"]).respell("やすみの日は何してる？") == "休みの日は何してる？"


def test_a_goodbye_said_to_someone_by_name_is_a_goodbye():
    from chalicelib.interpret.cues import SceneNames, farewell
    names = SceneNames.of(load_scenario(ROOT / "scenarios" / "chinoike.json"))
    assert farewell("帰ります。おやすみなさい、ママさん、葵さん", names)
    assert farewell("ごちそうさま、また来ます、おやすみ", names)
    assert not farewell("おやすみって何時から？", names)


def test_an_adverbial_noun_in_kana_stays():
    from chalicelib.interpret.spelling import Respeller
    with_the_word = Respeller(["跡", "居間"])
    assert with_the_word.respell("薔薇をあと3本") == "薔薇をあと3本"      # あと, not 跡
    assert with_the_word.respell("いまの時期は？") == "いまの時期は？"    # いま, not 居間


@pytest.mark.parametrize("said, meant", [
    ("すどおりする人、そんなに多いの？", "素通りする人、そんなに多いの？"),    # read す|どおり by the analyser
    ("ナポリタンってきっさの頃からあるんだ？", "ナポリタンって喫茶の頃からあるんだ？"),   # read as a verb
    ("とりあえずなまで！", "とりあえず生で！"),                            # read な|まで
    ("何かのみものちょうだい", "何か飲み物ちょうだい"),                      # read のみ|も|の
    ("ししょうさんって、どんな人柄だったの？", "師匠さんって、どんな人柄だったの？"),
])
def test_a_word_of_what_the_characters_say_in_kana_the_analyser_cut_otherwise(said, meant):
    assert speaking().respell(said) == meant


@pytest.mark.parametrize("line", [
    "おかわり！",                    # one word the analyser reads as meant (no お代わり, whose お代 is money)
    "しょうがないね",                # one word across the reading of 生姜
    "ちょっとまってね",              # a verb in kana stays a verb
    "週末はキャンプばっかりしてるんだ",  # a word starts where one does: the かり of ばっかり is no 借り
])
def test_what_the_analyser_reads_as_meant_stays(line):
    assert speaking().respell(line) == line


@lru_cache(maxsize=1)
def speaking() -> Respeller:
    """The respeller a reference scenario's turn has: its words, and the nouns of what its characters say."""
    scenario = load_scenario(ROOT / "scenarios" / "chinoike.json")
    return Respeller(scenario_words(scenario), authored_nouns(scenario))


def test_a_word_with_its_head_in_kana_and_the_rest_as_written_reads_as_the_word():
    # words of no scenario of ours: the mechanism, not the reference's lines
    speller = Respeller(["図書館", "初対面", "今の時期", "郵便局"])
    assert speller.respell("としょ館って近くにある？") == "図書館って近くにある？"
    assert speller.respell("はつ対面だよね") == "初対面だよね"
    assert speller.respell("いまの時期って寒い？") == "今の時期って寒い？"
    assert speller.respell("ゆうびん局まで歩ける？") == "郵便局まで歩ける？"
    # kana that only ends like a word's head stays: the の of 「ぼくの時期」 is no 今の
    assert speller.respell("ぼくの時期じゃない") == "ぼくの時期じゃない"


@pytest.mark.parametrize("said, meant", [
    ("葵ちゃ〜ん、銀星座って何曜日が空いてる？", "葵ちゃん、銀星座って何曜日が空いてる？"),
    ("ママ～、ビールちょうだい", "ママ、ビールちょうだい"),
])
def test_a_voice_drawn_out_reads_as_the_words(said, meant):
    assert neutral(said).text == meant
    assert neutral("3〜4本ください").text == "3〜4本ください"     # a range stays
    assert "stretch" not in neutral("うーん、どうしよう").set_aside   # ー stays: うーん is no うん
