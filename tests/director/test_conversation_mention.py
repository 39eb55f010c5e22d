"""A character only mentioned does not take the turn (chalicelib/conversation/mention.py): named in a case role
(ママに, ママと, ママも, ママが) they are talked about — the one tapped, called or talked with answers; named as the
topic or owner of what is asked (ママって…？, ママの…は？) they are asked about; a line passing on their words is news
for the one spoken to, not the player's own yes or no."""
from __future__ import annotations

import pytest

from chalicelib.conversation.focus import FocusReader
from chalicelib.conversation.mention import asked_about, only_mentioned, reports_other
from chalicelib.interpret import detect_addressee
from chalicelib.interpret.acts import CALL_ONLY, ActRecogniser
from chalicelib.interpret.cues import SceneNames
from chalicelib.interpret.text import nfkc
from tests.director.playing import reference, visit

AOI, MAMA = "神楽坂葵", "赤尾妙子"


def reader() -> FocusReader:
    return FocusReader(SceneNames.of(reference().rules.scenario))


@pytest.mark.parametrize("text", [
    "ママにはもう話してあるの？", "ママと映画の話ってする？", "ママも喜ぶんじゃない？", "ママが知ったら怒るかな",
    "ママから何か言われた？", "妙子さんへのプレゼント、何がいいと思う？", "ママより詳しいの？",
])
def test_a_name_in_a_case_role_is_only_mentioned(text):
    assert only_mentioned(nfkc(text), reader(), MAMA)
    assert asked_about(nfkc(text), reader(), (MAMA,)) == ()


@pytest.mark.parametrize("text", ["ママって独身なの？", "ママの好きな歌手は？", "ママは何歳なの？", "ママとかどう？"])
def test_a_topic_or_an_owner_is_asked_about(text):
    assert not only_mentioned(nfkc(text), reader(), MAMA)
    assert asked_about(nfkc(text), reader(), (MAMA,)) == (MAMA,)


def test_passing_on_someone_elses_words():
    assert reports_other(nfkc("ママ、葵ちゃんはそれじゃいやだって"), reader(), MAMA) == AOI
    assert reports_other(nfkc("葵ちゃんがもっと明るくしたいって言ってたよ"), reader(), None) == AOI
    assert reports_other(nfkc("ママ、それはいやだって"), reader(), MAMA) is None       # the player's own no
    assert reports_other(nfkc("葵ちゃんは映画が好きだよね"), reader(), None) is None


@pytest.mark.parametrize("text", ["ママに聞いたんだけど、それ本当？", "ママに相談してみたら？", "ママに話せばいいのに"])
def test_a_phrase_naming_someone_calls_them_only_while_the_player_asks(text):
    rules = reference().rules
    found = detect_addressee(text, rules, rules.start().state, AOI)
    assert (found.character, found.how) == (AOI, "given")


def test_the_one_tapped_answers_a_line_that_mentions_someone_else():
    *_, tapped = visit("こんばんは", "ママに素直に打ち明けてみたら？", to=AOI)
    assert tapped.answer.speaker == AOI and "about_other" not in tapped.context
    *_, tapped = visit("こんばんは", "葵ちゃんとはよく話すの？", to=MAMA)
    assert tapped.answer.speaker == MAMA and "about_other" not in tapped.context


def test_the_one_called_answers_a_line_that_mentions_someone_else():
    *_, called = visit("こんばんは", "葵ちゃん、ママと映画の話ってする？")
    assert called.answer.speaker == AOI


def test_the_one_talked_with_answers_a_line_that_mentions_someone_else():
    *_, followed = visit("こんばんは", "葵ちゃんは休みの日は何してるの？", "ママにも教えてあげた？")
    assert followed.answer.speaker == AOI


def test_words_passed_on_are_news_for_the_one_called_not_an_answer():
    *_, told = visit("こんばんは", "ママ、葵ちゃんはそれじゃいやだって")
    assert told.answer.speaker == MAMA and "reply" not in told.context


def test_a_question_about_someone_here_still_reaches_them():
    *_, asked = visit("こんばんは", "葵ちゃん、ママって結婚してないのか？", to=AOI)
    assert asked.answer.speaker == MAMA or "ママ" in asked.answer.text


@pytest.mark.parametrize("text, who", [
    ("ママ？", MAMA), ("ママ？ちょっといいかな", MAMA), ("ママってば", MAMA), ("葵ちゃんね、ちょっと聞いて", AOI),
    ("葵さんよ、それ本気？", AOI),
])
def test_a_name_called_with_a_question_mark_or_a_particle_calls(text, who):
    rules = reference().rules
    other = AOI if who == MAMA else MAMA
    found = detect_addressee(text, rules, rules.start().state, other)
    assert (found.character, found.how) == (who, "head")


def test_a_call_picks_the_one_who_answers_over_a_tap():
    *_, called = visit("こんばんは", "葵ちゃんね、休みの日って何してるの？", to=MAMA)
    assert called.answer.speaker == AOI


@pytest.mark.parametrize("text, who", [("ママ？", MAMA), ("ねえ、葵ちゃん！", AOI), ("ちょっと葵さん？", AOI), ("あなた？", MAMA)])
def test_a_line_that_only_calls_is_answered_as_an_opening_not_a_question(text, who):
    acts = ActRecogniser(SceneNames.of(reference().rules.scenario))
    found = acts.recognise(text)
    assert (found.act, found.cue) == ("なし", CALL_ONLY)
    [_, called] = visit("こんばんは", text)
    assert called.answer.speaker == who and called.answer.ref.startswith("chatter/"), called.answer
    # a name with something asked is no call only
    assert acts.recognise("ママ？元気？").cue != CALL_ONLY and acts.recognise("ママ、ありがとう").act == "感謝"


def test_a_name_alone_after_a_wh_question_answers_it_and_is_no_call():
    from chalicelib.stage.records import AskedQuestion
    from tests.director.playing import play
    [greeted] = visit("こんばんは")
    memory = greeted.memory.model_copy(deep=True)
    memory.question = AskedQuestion(ref="chatter/赤尾妙子#9", speaker=MAMA, turn=greeted.step.state.turn, kind="wh")
    [named] = play(reference(), "葵ちゃん？", state=greeted.step.state, memory=memory)
    assert not (named.answer and named.answer.ref.startswith("chatter/")), named.answer


@pytest.mark.parametrize("text", ["クロちゃんは何歳まで生きたんですか？", "先代は何歳？", "このお店の名前の由来は？"])
def test_a_personal_topic_asked_of_someone_or_something_else_is_not_the_characters_own(text):
    acts = ActRecogniser(SceneNames.of(reference().rules.scenario))
    assert acts.recognise(text).act != "本人", text
    for own in ("出身は？", "休みの日は何してるの？", "葵ちゃん彼氏いるの？", "ママは何歳？"):
        assert acts.recognise(own).act == "本人", own


def test_a_pet_called_by_name_is_asked_about_not_the_one_spoken_to():
    [cat] = visit("クロちゃんは何歳まで生きたんですか？")
    assert "二十歳" in cat.answer.text and "女の歳" not in cat.answer.text
    assert reader().read(nfkc("クロちゃんは何歳？")).third and not reader().read(nfkc("葵ちゃんは何歳？")).third
