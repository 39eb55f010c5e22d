"""Money the player did not agree to: words of ordering, treating or paying that do not do it, and questions
about the bill."""
from __future__ import annotations

import copy

from chalicelib.conversation import Conversation
from chalicelib.conversation.bill import disputes, itemised
from chalicelib.conversation.undone import DEFAULT_DECLINED, treats_not
from chalicelib.interpret.interpreter import Interpreter
from chalicelib.scenario import GameRules, load_scenario_data
from tests.director.playing import conversation_of, play, visit
from tests.director.test_conversation import CAFE, L, bar, diner


def priced(**menu_changes) -> Conversation:
    data = copy.deepcopy(CAFE)
    menu = data["characters"][0]["menu"]
    menu["items"][0].update(kind="drink", price=400)
    menu["items"][1].update(kind="food", price=700)
    menu.update(styles=[L("{item}を{style}で、了解。")], bill=[L("{total}円です。")], paid=[L("はい、確かに。")],
                prices=[L("{item}は{price}円。")], treat=[L("ごちそうになるよ。")], **menu_changes)
    return conversation_of(data, "priced.json")


def test_treat_words_that_do_not_treat():
    for text in ("おごるほどお金ないよ", "おごるって言ってないですよ", "おごりません", "奢れないっすよ", "奢ってもないって",
                 "おごってくれるなら飲むよ", "マスター、おごってよ"):
        end = next(i for i in range(len(text), 0, -1) if text[:i].endswith(("おごる", "おごり", "おごって", "奢")))
        assert treats_not(text, end), text
    for text in ("一杯おごります", "一杯おごるよ", "おごらせてください", "奢ります！", "おごってあげる"):
        end = next(i for i in range(len(text), 0, -1) if text[:i].endswith(("おごる", "おごり", "おごら", "おごって",
                                                                            "奢")))
        assert not treats_not(text, end), text


def test_a_treat_turned_down_is_answered_graciously_and_never_billed():
    conversation = priced()
    for text in ("マスター、おごるほど金ないですよ", "いや、おごるって言ってないです", "奢れませんよ、金欠なんで"):
        [turned] = play(conversation, "コーヒーください", text)[1:]
        assert turned.answer.text == DEFAULT_DECLINED, text
        assert turned.memory.orders == ["コーヒー"], text
    [authored] = play(priced(declined=[L("冗談だよ、気にしないで。")]), "おごりませんよ")
    assert authored.answer.text == "冗談だよ、気にしないで。"


def test_asking_to_be_treated_treats_nobody():
    [asked] = play(priced(), "マスター、おごってよ")
    assert asked.answer is None or asked.answer.text != "ごちそうになるよ。"
    assert asked.memory.orders == []


def test_an_item_the_object_of_another_verb_or_reported_is_not_ordered():
    conversation = priced()
    _, photo, only, suppose = play(conversation, "カレーください", "カレーだけ撮ってもいいですか",
                                   "カレーしか頼んでないんですけど", "コーヒーなら一つでいいかな")
    assert photo.memory.orders == only.memory.orders == ["カレー"]
    assert suppose.memory.orders == ["カレー"]


def test_a_question_about_the_bill_names_what_was_served_and_never_pays():
    conversation = priced()
    *_, bill, doubt, again = play(conversation, "コーヒーください", "カレーもお願い", "コーヒーもう一杯", "お会計",
                                  "え、1500円！？内訳を教えてもらえますか", "高くない？")
    assert bill.answer.text == "1,500円です。"
    assert doubt.answer.text == "コーヒー400円×2、カレー700円で、1,500円です。"    # the default line
    assert again.answer.text == doubt.answer.text and again.answer.ref.startswith("menu/店主/breakdown")
    [authored] = play(priced(breakdown=[L("{items}、しめて{total}円。")]), "カレーください", "お会計", "内訳は？")[2:]
    assert authored.answer.text == "カレー700円、しめて700円。"


def test_the_bill_questioned_or_an_item_taken_back_orders_nothing():
    conversation = priced()
    *_, named, taken_back, cancel = play(conversation, "コーヒーください", "カレーもお願い", "お会計",
                                         "コーヒー2杯とカレーで1100円？内訳聞いてもいい？",
                                         "コーヒーは1杯だよ！2杯目は頼んでないし飲んでない。取り消して",
                                         "キャンセル！お会計いくら？")
    for played in (named, taken_back, cancel):
        assert "order" not in played.context and played.answer.ref.startswith("menu/店主/breakdown"), played.context
        assert played.answer.text == "コーヒー400円、カレー700円で、1,100円です。"      # nothing added


def test_an_item_taken_back_comes_off_the_bill():
    conversation = priced()
    *_, extra, bill = play(conversation, "コーヒーください", "カレーもお願い", "コーヒーもう一杯", "コーヒーもう一杯",
                           "3杯目は頼んでないよ、取り消して", "お会計")
    assert extra.answer.text == "コーヒー400円×2、カレー700円で、1,500円です。"
    assert extra.memory.orders == ["コーヒー", "カレー", "コーヒー"] and extra.answer.detail["taken_back"] == ["コーヒー"]
    assert "order" not in extra.context and bill.answer.text == "1,500円です。"
    *_, only = play(conversation, "コーヒーください", "コーヒーもう一杯", "コーヒーもう一杯", "お会計",
                    "え？コーヒーは2杯しか頼んでないですよ")
    assert only.memory.orders == ["コーヒー", "コーヒー"] and only.answer.text == "コーヒー400円×2で、800円です。"
    *_, named = play(conversation, "コーヒーください", "カレーもお願い", "お会計", "カレーは頼んでないのに")
    assert named.memory.orders == ["コーヒー"] and named.answer.text == "コーヒー400円で、400円です。"
    # 「キャンセル」 alone takes back what was just served; with nothing left, the default line says so
    _, cancelled = play(conversation, "カレーください", "やっぱりキャンセルで")
    assert cancelled.memory.orders == [] and cancelled.answer.text == "失礼しました、カレーは取り消しておきますね。"


def test_what_takes_nothing_back():
    conversation = priced()
    # asked, not claimed; what was ordered said with しか; a count the bill already keeps; two items named
    for text in ("カレーは頼んでないよね？", "カレーしか頼んでないんですけど", "コーヒーは1杯だよ、2杯目は頼んでない",
                 "コーヒーとカレーは頼んでない"):
        *_, kept = play(conversation, "コーヒーください", "カレーもお願い", "お会計", text)
        assert kept.memory.orders == ["コーヒー", "カレー"], text
    # 「キャンセル」 not right after the order: which one is not clear
    *_, late = play(conversation, "カレーください", "おいしかった", "キャンセル")
    assert late.memory.orders == ["カレー"]


def test_bill_sums_and_what_disputes_it():
    assert itemised(["ビール", "水割り", "ビール", "お水"], {"ビール": 600, "水割り": 700}) == \
        ("ビール600円×2、水割り700円", 1900)
    assert disputes("2600円！？") and disputes("内訳教えて") and disputes("ちょっと高くないっすか？")
    assert not disputes("はい、2600円") and not disputes("お会計お願い")


def test_an_order_with_a_price_question_gets_both():
    [both] = play(priced(), "コーヒー、薄めでお願いします。あと、いくらですか？")
    assert both.answer.text == "コーヒーを薄めで、了解。コーヒーは400円。" and both.memory.orders == ["コーヒー"]


def test_the_kind_of_an_item_is_never_said_missing_before_serving_it():
    [snack] = play(bar(), "おつまみのカレー、もらえます？")
    assert snack.answer.detail["order"]["item"] == "カレー" and "ない" not in snack.answer.text


def test_a_known_word_far_from_food_is_no_order():
    [hint] = play(bar(), "ヒントくださいよ")
    assert hint.kind != "menu" and "order" not in hint.context


def test_diner_bill_unchanged():
    _, bill, paid = play(diner(), "カレーください", "お会計", "はい、千円。おつりはいいよ")
    assert bill.answer.text == "700円です。" and paid.answer.text == "はい、確かに。毎度どうも。"


def test_asking_whether_an_item_ordered_comes_is_no_second_order():
    conversation = priced(coming=[L("お待たせ、{item}だよ。")])
    _, comes = play(conversation, "カレーください", "カレーは出てくるんですか？")
    assert comes.answer.text == "お待たせ、カレーだよ。" and comes.memory.orders == ["カレー"]
    [before] = play(priced(coming=[L("お待たせ、{item}だよ。")]), "カレーってすぐ出てくる？")
    assert before.memory.orders == []                  # not ordered yet: a question about it, no order


def test_the_sum_checked_after_the_bill_is_answered_item_by_item():
    *_, checked = play(priced(), "カレーください", "お会計", "一皿だけなら700円ですよね")
    assert checked.answer.text == "カレー700円で、700円です。" and checked.memory.orders == ["カレー"]


def test_an_entry_thanking_for_a_treat_does_not_answer_asking_to_be_treated():
    data = copy.deepcopy(CAFE)
    data["characters"][0]["knowledge"].append({"info": "おごられたら飲む", "condition": "", "words": ["おごる", "奢る"],
                                               "lines": [L("じゃあ遠慮なく、いただくよ。")]})
    rules = GameRules(load_scenario_data(data, source="treated.json"))
    conversation = Conversation(rules, Interpreter(rules))
    [asked] = play(conversation, "マスター、おごってよ")
    assert asked.answer is None or asked.answer.text != "じゃあ遠慮なく、いただくよ。"


def test_words_after_an_order_that_do_not_take_it_back_keep_it():
    [same] = play(priced(), "コーヒーください、さっき飲んだのと同じで")
    assert same.memory.orders == ["コーヒー"]
    [polite] = play(priced(), "カレーを一つもらえないかな")
    assert polite.memory.orders == ["カレー"]


def test_a_word_that_praises_or_places_the_item_is_no_other_thing_asked_for():
    for text, item in (("じゃあ名物のナポリタン、いただけますか。", "ナポリタン"), ("自慢のおでんください", "おでん"),
                       ("いつものハイボールで", "ハイボール"), ("看板のナポリタンお願い", "ナポリタン")):
        _, ordered = visit("こんばんは", text)
        assert ordered.context["order"]["item"] == item and "instead" not in ordered.context["order"], text
        assert "ない" not in ordered.answer.text, text
    # a kind not served (焼酎 of 焼酎の水割り): said not to be had, the plain item never served in its place unasked
    _, other = visit("こんばんは", "焼酎の水割りください")
    assert other.context["order"]["kind"] == "missing" and other.memory.orders == [], other.context
    assert other.context["order"]["named"] == "焼酎の水割り"
    # asked for in so many words, it is served instead
    _, fallback = visit("こんばんは", "焼酎ある？なければ水割りで")
    assert fallback.context["order"]["instead"] == "焼酎" and fallback.memory.orders == ["水割り"]


def test_the_price_of_one_the_running_total_or_an_amount_asked_about_never_pays():
    conversation = priced()
    *_, unit = play(conversation, "コーヒーください", "コーヒーもう一杯", "今何杯目だっけ。勘定はきっちりしたいんで、一杯いくら？")
    assert unit.answer.ref.startswith("menu/店主/breakdown") and unit.answer.text == "コーヒー400円×2で、800円です。"
    *_, bill, asked = play(conversation, "コーヒーください", "お会計", "400円って何杯分？")
    assert bill.answer.text == "400円です。" and asked.answer.ref.startswith("menu/店主/breakdown")
    assert "order" not in asked.context or asked.context["order"]["kind"] != "paid"
    *_, running = play(conversation, "コーヒーください", "今のお勘定、確認させてください。まだ帰りませんよ")
    assert running.answer.ref.startswith("menu/店主/breakdown")
    # handing the money over after the bill still pays
    *_, paid = play(conversation, "コーヒーください", "お会計", "はい、400円")
    assert paid.answer.text == "はい、確かに。"


def test_asking_what_an_item_is_made_of_orders_nothing_more():
    _, ordered, asked = visit("こんばんは", "水割りください", "いや、だから中身は焼酎なのかウイスキーなのか、それだけ教えてください。")
    assert asked.memory.orders == ["水割り"] and "ウイスキー" in asked.answer.text


def test_an_item_served_with_a_question_offers_it_no_second_time():
    # 「また水割り？　気に入ってくれたのね。」 serves the drink; 「ええ、水割りで」 after it orders no other
    *_, again, yes = visit("こんばんは", "水割りください", "おかわり", "おかわりお願いします", "ええ、水割りで")
    assert again.answer.text.startswith("また水割り？"), again.answer.text
    assert again.memory.question is None and yes.memory.orders == again.memory.orders


def test_a_line_that_treats_in_one_part_is_no_treat_turned_down_in_another():
    _, treated = visit("こんばんは", "自分でおごってって言ったじゃないですか。乾杯しましょう、ママさんも飲んで。")
    assert "冗談" not in treated.answer.text and treated.answer.ref.startswith("menu/赤尾妙子/treat")


def test_an_item_said_not_eaten_is_taken_back_and_orders_nothing_more():
    *_, protest = play(priced(), "カレーください", "カレーもう一つ", "カレー2つは食べてないですよ！1つだけです")
    assert "order" not in protest.context and protest.memory.orders == ["カレー"]
    assert protest.answer.text == "カレー700円で、700円です。"


def test_money_handed_over_after_the_breakdown_or_with_the_sum_checked_pays():
    conversation = priced()
    *_, breakdown, paid = play(conversation, "コーヒーください", "内訳は？", "はい、400円。お釣りお願いします")
    assert breakdown.answer.ref.startswith("menu/店主/breakdown") and paid.answer.text == "はい、確かに。"
    *_, checked = play(conversation, "コーヒーください", "お会計", "払いますよ！400円ですよね、はい")
    assert checked.answer.text == "はい、確かに。"
    # a sum only asked about still pays nothing
    *_, asked = play(conversation, "コーヒーください", "お会計", "400円ですよね？何杯分？")
    assert asked.answer.text != "はい、確かに。"


def test_an_item_had_before_is_no_order_and_a_drink_made_some_way_is_one_thing_asked_for():
    # (after a line that offers: 「…ならあるわ」)
    _, offered, had = visit("こんばんは", "梅酒ください", "ナポリタンはさっきいただきましたよ。梅酒のソーダ割り、お願いできます？")
    assert offered.memory.question is not None and offered.memory.question.kind == "offer"
    assert had.memory.orders == [] and "ソーダ割り" in had.answer.text, had.answer.text
    _, hot = visit("こんばんは", "焼酎のお湯割りください")
    assert hot.memory.orders == [] and "お湯割り" in hot.answer.text


def test_the_bill_asked_for_is_answered_before_the_menus_story_line():
    *_, bill = visit("こんばんは", "ウーロン茶ください", "大根おいしい〜！ごちそうさま。今日は早めに帰りますね、お会計お願いします")
    assert bill.answer.ref.startswith("menu/赤尾妙子/bill") and not bill.step.lines


def test_an_amount_said_in_passing_before_a_question_about_something_else_asks_nothing_of_the_bill():
    from chalicelib.conversation.bill import disputes
    assert not disputes("1,600円ね。ありがとう！葵さん、BGMの件は結局どうするの？")
    assert disputes("まだ帰りませんよ。2,800円って何杯分？") and disputes("3500？")
    # a number with another counter is no money: 2020年, 100人
    assert not disputes("2020年に来たことある？") and not disputes("100人入るの？")
    _, _, year = visit("こんばんは", "ビールください", "1990年代の歌ってかかる？")
    assert not year.answer.ref.startswith("menu/")


def test_whether_something_is_counted_and_the_total_so_far_are_answered_without_the_bills_goodbye():
    *_, counted = visit("こんばんは", "ビールください", "一杯おごるよ", "それ俺の勘定につくのか？")
    assert counted.answer.ref.startswith("menu/赤尾妙子/breakdown")
    *_, so_far = visit("こんばんは", "ビールください", "じゃあ今んとこ合わせていくらだ？まだ帰らねえけどな。")
    assert so_far.answer.ref.startswith("menu/赤尾妙子/breakdown")
    *_, bill = visit("こんばんは", "ビールください", "いくら？")           # asked plainly, the bill as before
    assert bill.answer.ref.startswith("menu/赤尾妙子/bill")


def test_an_entry_that_takes_a_treat_is_never_said_as_news_sharing_a_word():
    _, _, aside = visit("こんばんは", "ビールください", "まあ叔母と姪か、道理で遠慮がねえわけだ。")
    assert "遠慮なく" not in aside.answer.text and aside.memory.orders == ["ビール"]
    _, _, treat = visit("こんばんは", "ビールください", "ママも一杯どう？")       # treating still gets the thanks
    assert treat.answer.ref.startswith("menu/赤尾妙子/treat")
