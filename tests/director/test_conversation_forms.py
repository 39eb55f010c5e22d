"""Questions and requests of a known form (chalicelib/conversation/forms.py): the form read from the line's
shape, the character's answer for it (their stance on the thing first), after everything authored, and the
format's checks of the sets."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from butai_tools.scenario.lint import lint_scenario
from chalicelib.conversation import Conversation
from chalicelib.conversation.forms import FormFound, read_form
from chalicelib.scenario import load_scenario_data
from chalicelib.scenario.loader import ScenarioError
from tests.director.playing import conversation_of, visit
from tests.director.test_conversation_focus import STALL, L, play


def stall(forms: dict[str, Any] | None) -> Conversation:
    data = copy.deepcopy(STALL)
    if forms is not None:
        data["characters"][0]["forms"] = forms
    return conversation_of(data, "stall.json")


FORMS: dict[str, Any] = {
    "permission": {"lines": [L("おう、好きにしな。")]},
    "offer": {"lines": [L("いいって、座ってな。")]},
    "request": {"lines": [L("しょうがねえな。")]},
    "preference": {"lines": [L("{word}？　嫌いじゃねえよ。")]},
    "have": {"lines": [L("{word}？　うちにはねえなあ。")]},
    "confirm": {"lines": [L("おう、それでいい。")]},
    "stances": [{"words": ["撮", "写真"], "forms": ["permission", "offer"], "lines": [L("屋台はいいが、俺は撮るなよ。")]}],
}


@pytest.mark.parametrize("text, form", [
    ("まず座っていい？", "permission"), ("ここ座っても？", "permission"), ("タバコ吸ってもいいですか", "permission"),
    ("撮らせてもらっていい？", "permission"), ("入っちゃだめ？", "permission"), ("お店、撮影OKですか？", "permission"),
    ("撮るのは大丈夫？", "permission"), ("ここって写真撮影大丈夫ですか？", "permission"),
    ("手伝おうか？", "offer"), ("僕が撮りましょうか？", "offer"), ("運びますよ", "offer"), ("持ってあげるよ", "offer"),
    ("一曲かけて", "request"), ("写真見せてくれる？", "request"), ("アルバム見せてもらえたら", "request"),
    ("ちょっと待って", "request"), ("名刺もらえますか？", "request"), ("ママ、何か手伝えることある？", "offer"),
    ("葵さんはこの曲、好き？", "preference"), ("ママ、甘いもの好き？", "preference"), ("この曲どう思う？", "preference"),
    ("灰皿あります？", "have"), ("アルバムってあるんですか？", "have"), ("灰皿ない？", "have"),
    ("撮影OKってことでいいですか？", "confirm"), ("じゃあそれで決まりね？", "confirm"), ("じゃあ、撮影はOKってことで", "confirm"),
    ("就活で全然受からなくて。ママ、どう思います？", "advice"), ("仕事辞めたいんだけど、どうしたらいいかな", "advice"),
    ("夜勤ばっかりで疲れちゃって。ママならどうする？", "advice"), ("俺の将来、どうしよう", "advice"),
    ("映像系の会社受けてるんすけど、倍率やばくて。どう思います？", "advice"),
])
def test_the_form_is_read_from_the_lines_shape(text, form):
    found = read_form(text)
    assert found is not None and found.form == form, (text, found)


@pytest.mark.parametrize("text", [
    # a wh-word asks for something; a verb's て is not a case particle's で; a story told, not a request;
    # an opinion asked for agreement, not a thing kept; a story or plans asked for, not a thing
    "何を手伝えばいい？", "どこに座ればいい？", "これでいい？", "好きな歌手は？", "一緒に行かない？",
    "雨に降られて", "彼女と別れて", "ちょっと疲れちゃって", "最近ハマってて", "ねえ聞いて", "名前教えてください",
    "いいんじゃない？", "夏におでんは暑くない？", "何か面白い話ある？", "行ったことある？", "帰ろうかな",
    "僕もよく映画観ますよ", "今日は雨だね", "体調大丈夫？", "仕事大丈夫なの？", "ママ大丈夫？", "時間大丈夫？",
])
def test_lines_of_no_form_are_left_alone(text):
    assert read_form(text) is None, text


def test_a_line_of_a_form_gets_the_characters_answer_for_it_instead_of_a_stock_line():
    before = play(stall(None), "まず座っていい？", "大将、猫好き？")
    assert [p.answer.text for p in before] == ["さあな。", "おう。"]          # the stock brush-offs
    sit, like, have, agreed = play(stall(FORMS), "まず座っていい？", "大将、猫好き？", "灰皿あります？",
                                   "じゃあそれで決まりね？")
    assert sit.kind == "form" and sit.answer.text == "おう、好きにしな。" and sit.context["form"] == "permission"
    assert like.answer.text == "猫？　嫌いじゃねえよ。"                 # {word}: what the line is about
    assert have.answer.text == "灰皿？　うちにはねえなあ。"
    assert agreed.answer.text == "おう、それでいい。"


def test_a_stance_on_the_thing_answers_before_the_forms_set():
    photo, sit = play(stall(FORMS), "屋台の写真撮っていい？", "座ってもいい？")
    assert photo.answer.text == "屋台はいいが、俺は撮るなよ。" and photo.answer.ref == "forms/大将/stance1#1"
    assert sit.answer.text == "おう、好きにしな。"


def test_what_is_authored_answers_first():
    # the menu answers what is served, a knowledge line what the character knows
    beer, toilet = play(stall(FORMS), "ビールある？", "トイレ借りてもいい？")
    assert beer.kind != "form" and toilet.kind == "knowledge" and "裏の公園" in toilet.answer.text


def test_a_question_about_someone_else_is_not_answered_as_ones_own_liking():
    [other] = play(stall(FORMS), "大将、由美ちゃんって焼き鳥好き？")
    assert other.kind != "form"


def test_the_reference_characters_answer_each_form_in_their_voice():
    sit, offer, album, sweet = visit("まず座っていい？", "洗い物手伝おうか？", "ダーツってあるんですか？",
                                     "ママ、甘いもの好き？")
    assert all(p.kind == "form" and p.answer.speaker == "赤尾妙子" for p in (sit, offer, album, sweet))
    [song] = visit("葵さんはこの曲、好き？", to="神楽坂葵")
    assert song.kind == "form" and song.answer.speaker == "神楽坂葵"
    # ママ lets the shop be photographed, never herself (as her knowledge says)
    [photo] = visit("僕が撮りましょうか？")
    assert photo.kind == "form" and "写さないで" in photo.answer.text


@pytest.mark.parametrize("change, message", [
    (lambda f: f["permission"]["lines"].append(L("{item}ならいいぞ")), "unknown slot {item} in a forms line"),
    (lambda f: f["stances"][0].update(words=[]), "stances"),
    (lambda f: f["stances"][0].update(forms=["greeting"]), "expected 'permission'"),
    (lambda f: f["offer"]["lines"].append(L("おう", "angry")), 'unknown expression "angry"'),
])
def test_the_forms_sets_are_checked_at_load(change, message):
    forms = copy.deepcopy(FORMS)
    change(forms)
    data = copy.deepcopy(STALL)
    data["characters"][0]["forms"] = forms
    with pytest.raises(ScenarioError) as raised:
        load_scenario_data(data, source="stall.json")
    assert message in str(raised.value)


def test_lint_says_which_forms_a_character_has_no_lines_for():
    data = copy.deepcopy(STALL)
    data["characters"][0]["forms"] = {"permission": {"lines": [L("おう。"), L("おう。")]}}
    found = lint_scenario(load_scenario_data(data, source="stall.json"))
    messages = [(p.where, p.message) for p in found]
    assert ("character 大将 forms permission", 'says "おう。" more than once; variation cannot avoid repeating it') \
        in messages
    assert any(w == "character 大将 forms" and "no offer, request, preference, have, confirm, advice, wellbeing lines" in m
               for w, m in messages)


@pytest.mark.parametrize("text", [
    # someone else's matter, or a view asked of no matter of the player's
    "葵ちゃんの夢、どう思う？", "ママの仕事ってどう思う？", "お店の将来、どうしたらいいと思う？", "僕は賛成だけど、どう思う？",
])
def test_a_view_asked_of_someone_elses_matter_is_no_advice(text):
    found = read_form(text)
    assert found is None or found.form != "advice", (text, found)


@pytest.mark.parametrize("text, word", [
    ("弟と喧嘩しちゃって。大将だったら、こういう時どうします？", "喧嘩"),
    ("友達に連絡しづらくて。大将ならどうする？", "友達"),
])
def test_what_the_one_named_would_do_asks_their_view_of_the_players_matter(text, word):
    found = read_form(text)
    assert found is not None and (found.form, found.cue) == ("advice", word)


def test_a_fight_with_the_players_own_kin_is_theirs():
    from chalicelib.interpret.belonging import read_own
    assert read_own("弟と喧嘩したままなんです").kin
    assert not read_own("弟さんと喧嘩したの？").kin            # someone else's brother, and a question


ADVICE = {**FORMS, "advice": {"lines": [L("{word}か。まあ、焦るな。")]}}


def test_the_players_own_matter_asked_about_gets_the_characters_view_not_a_line_of_their_world():
    # 仕事 shares no entry here, but 屋号 and スープ would: the player's matter is answered as theirs
    before = play(stall(FORMS), "スープの仕込みみたいに仕事が終わらなくて。大将、どう思う？")
    after = play(stall(ADVICE), "スープの仕込みみたいに仕事が終わらなくて。大将、どう思う？")
    assert before[0].kind != "form"
    assert after[0].kind == "form" and after[0].answer.text == "仕事か。まあ、焦るな。"


def test_the_reference_characters_give_their_view_of_the_players_matter():
    [mama] = visit("就活で全然受からなくて。ママ、どう思います？")
    assert mama.kind == "form" and mama.answer.speaker == "赤尾妙子" and "就活" in mama.answer.text
    [aoi] = visit("彼氏とうまくいかなくて。どうしたらいいと思う？", to="神楽坂葵")
    assert aoi.kind == "form" and aoi.answer.speaker == "神楽坂葵" and "彼氏" in aoi.answer.text


@pytest.mark.parametrize("text, who", [
    ("元気？", ""), ("ママ、最近どう？", "ママ"), ("葵ちゃん元気してた？", "葵ちゃん"), ("調子はどう？", ""),
    ("お変わりありませんか", ""), ("久しぶり！元気だった？", ""), ("先代は元気？", "先代"), ("ママは元気にしてた？", "ママ"),
])
def test_how_are_you_is_read_with_whom_it_asks_of(text, who):
    assert read_form(text) == FormFound("wellbeing", who), text


@pytest.mark.parametrize("text", ["元気出して", "元気ないね", "相変わらず元気そうだね", "元気になったよ", "お元気で"])
def test_what_is_no_how_are_you(text):
    found = read_form(text)
    assert found is None or found.form != "wellbeing", (text, found)


def test_how_are_you_is_answered_by_the_one_asked_before_a_line_sharing_its_word():
    mama, aoi = visit("ママ、元気？", "葵ちゃん元気してた？")
    assert (mama.kind, mama.answer.speaker, aoi.kind, aoi.answer.speaker) == ("form", "赤尾妙子", "form", "神楽坂葵")
    assert mama.answer.ref.startswith("forms/赤尾妙子/wellbeing")       # not the knowledge line of 元気 in the shop
    [greeted] = visit("こんばんは。最近どう？", to="神楽坂葵")
    assert greeted.kind == "form" and greeted.answer.speaker == "神楽坂葵"
    # asked of someone who is no one here, what is known of them answers
    [elder] = visit("先代は元気？")
    assert elder.kind == "knowledge" and "九十近い" in elder.answer.text
