"""How many of an item an order asks for, several items in one order, a service done once, and money handed over:
the bill counts what the player asked for, once, and what was paid is not billed again."""
from __future__ import annotations

import copy

import pytest

from chalicelib.conversation import Conversation
from chalicelib.interpret.counts import count_of, joined, orders_by_count
from chalicelib.interpret.money import handed_amount
from tests.director.playing import conversation_of, play
from tests.director.test_conversation import CAFE, L


def shop(**menu_changes) -> Conversation:
    data = copy.deepcopy(CAFE)
    menu = data["characters"][0]["menu"]
    menu["items"][0].update(kind="drink", price=400)
    menu["items"][1].update(kind="food", price=700)
    menu["items"].append({"id": "出前", "words": ["出前", "届けて"], "kind": "service", "price": 300,
                          "lines": [L("出前ね、あとで届けるよ。")]})
    menu.update(bill=[L("{total}円です。")], paid=[L("はい、確かに。")], breakdown=[L("{items}で{total}円。")],
                **menu_changes)
    return conversation_of(data, "shop.json")


@pytest.mark.parametrize(("text", "item", "n", "total"), [
    ("コーヒーを3杯ください", "コーヒー", 3, False),
    ("コーヒー、ふたつ", "コーヒー", 2, False),
    ("2杯のコーヒー", "コーヒー", 2, False),
    ("コーヒーを十二杯", "コーヒー", 12, False),
    ("コーヒーは合計4杯にしてください", "コーヒー", 4, True),
    ("コーヒーを99杯", "コーヒー", 50, False),          # a typo's 99 is not 99 on the bill
    ("赤い薔薇を25本", "赤い薔薇", 25, False),           # a bouquet for a 25th anniversary is
])
def test_the_count_said_with_an_item(text, item, n, total):
    start = text.index(item)
    found = count_of(text, start, start + len(item))
    assert found is not None and (found.n, found.total) == (n, total), text


def test_a_count_over_the_most_is_said_back_as_booked():
    found = count_of("コーヒーを99杯", 0, 4)
    assert found is not None and (found.n, found.said) == (50, "50杯")


@pytest.mark.parametrize("text", ["コーヒーが好き", "コーヒーを一杯ずつ", "コーヒー二人で飲む"])
def test_no_count(text):
    start = text.index("コーヒー")
    assert count_of(text, start, start + 4) is None, text


def test_what_joins_two_items_and_a_count_that_orders_alone():
    assert joined("を3杯と、") and joined("と") and not joined("が好きだけど、")
    assert orders_by_count("コーヒーをあと2杯", 4) and orders_by_count("コーヒー、二杯！", 4)
    assert not orders_by_count("コーヒーって2杯ある？", 4) and not orders_by_count("コーヒー2杯くらい飲んだかな", 4)


def test_money_handed_over():
    assert [handed_amount(t) for t in ("はい、3,000円", "一万円で", "5千円札で", "これで")] == [3000, 10000, 5000, None]


def test_an_order_counts_each_one_asked_for():
    counted = shop(counted=[L("{item}を{count}ね。")])
    order, bill = play(counted, "コーヒーを3杯ください", "お会計")
    assert order.answer.text == "コーヒーを3杯ね。" and order.memory.orders == ["コーヒー"] * 3
    assert bill.answer.text == "1,200円です。"
    # without `counted` lines the item's own line answers, and the bill still counts three
    plain, plain_bill = play(shop(), "コーヒーを3杯ください", "お会計")
    assert plain.answer.text == "はい、ブレンド。" and plain_bill.answer.text == "1,200円です。"


def test_several_items_in_one_order_are_each_served_and_billed():
    counted = shop(counted=[L("{item}を{count}ね。"), L("{item}、{count}。")])
    order, bill = play(counted, "コーヒーを2杯と、カレーを3皿ください", "お会計")
    assert order.answer.text == "コーヒーを2杯ね。カレー、3皿。"
    assert bill.answer.text == f"{2 * 400 + 3 * 700:,}円です。"
    [two] = play(shop(), "コーヒーとカレーお願いします")
    assert two.answer.text == "はい、ブレンド。カレー、少し辛いよ。" and sorted(two.memory.orders) == ["カレー", "コーヒー"]


def test_a_new_total_and_one_more():
    *_, more, total, bill = play(shop(), "コーヒーください", "コーヒーをあと2杯", "コーヒーは合計2杯にしてください",
                                 "お会計")
    assert more.memory.orders == ["コーヒー"] * 3 and total.memory.orders == ["コーヒー"] * 2
    assert bill.answer.text == "800円です。"


def test_a_service_is_billed_once_and_a_bill_paid_is_not_billed_again():
    *_, bill, paid, again, bill_two = play(shop(), "カレーください", "出前お願いします", "出前も頼めますか", "お会計",
                                           "はい、1000円", "コーヒーください", "お会計")
    assert bill.answer.text == "1,000円です。" and paid.answer.text == "はい、確かに。"
    assert bill_two.answer.text == "400円です。"


def test_money_short_of_the_bill_pays_nothing_and_more_gets_change():
    with_change = shop(change=[L("{change}円のお返しです。")])
    *_, bill, short, paid, after = play(with_change, "カレーください", "お会計", "はい、500円", "じゃあ、はい、1000円",
                                        "お会計")
    assert short.answer.text == bill.answer.text == "700円です。"
    assert paid.answer.text == "300円のお返しです。"
    assert after.answer is None or after.answer.text != "700円です。"


def priced_shop() -> Conversation:
    return shop(prices=[L("{item}は{price}円。")], suggest=[L("うちにあるのは{menu}だよ。")],
                called={"food": ["料理", "ごはん"], "drink": ["飲み物"]})


def test_each_price_asked_for_and_a_follow_up_naming_only_another_item():
    both, then, other = play(priced_shop(), "コーヒーとカレーはいくら？", "で、出前は？", "カレーは好き？")
    assert both.answer.text == "コーヒーは400円。カレーは700円。"
    assert then.answer.text == "出前は300円。"
    assert other.answer is None or "円" not in other.answer.text       # no price was asked this time
    [fee] = play(priced_shop(), "出前ってお金かかる？")
    assert fee.answer.text == "出前は300円。"


def test_what_the_menu_holds_is_listed_not_said_missing():
    asked, kind = play(priced_shop(), "まず、何があるの？", "どんな料理がありますか？")
    assert asked.answer.text == "うちにあるのはコーヒー、カレーだよ。"
    assert kind.answer.text == "うちにあるのはカレーだよ。"
    assert asked.memory.orders == kind.memory.orders == []


def test_a_count_naming_no_item_is_of_the_item_named_before_or_just_ordered():
    *_, changed, more, photo, bill = play(shop(), "カレーを2皿ください", "カレー2皿じゃ足りないな。4皿にして。",
                                          "あと1皿", "写真は3枚にしよう", "お会計")
    assert changed.memory.orders == ["カレー"] * 4 and more.memory.orders == ["カレー"] * 5
    assert photo.memory.orders == ["カレー"] * 5
    assert bill.answer.text == f"{5 * 700:,}円です。"


def test_a_new_total_said_of_one_item_while_another_is_ordered():
    *_, line, bill = play(shop(), "カレーを3皿ください", "カレーは2皿でいい。その分コーヒーを1杯足してくれ。", "お会計")
    assert line.memory.orders.count("カレー") == 2 and line.memory.orders.count("コーヒー") == 1
    assert bill.answer.text == f"{2 * 700 + 400:,}円です。"


def test_one_more_of_one_and_another_item_and_an_order_taken_back_at_once():
    [both] = play(shop(), "コーヒーもう一杯と、カレーもお願いします。")
    assert sorted(both.memory.orders) == ["カレー", "コーヒー"]
    [back] = play(shop(), "カレー、もう一皿…いや、やっぱりやめとこう。")
    assert back.memory.orders == []


def test_what_a_line_asks_is_its_last_question():
    *_, other = play(priced_shop(), "出前お願いします", "出前で300円取るのか。まあいい。ところで猫の名前は？")
    assert other.answer is None or "300円" not in other.answer.text
    *_, contents = play(priced_shop(), "カレーください", "カレーって何が入ってるの？")
    assert contents.answer is None or "円" not in contents.answer.text


def test_the_other_one_as_a_topic_and_a_count_settled_on():
    *_, other = play(shop(), "カレーください", "一つは私の、もう一つは友達のです。")
    assert other.memory.orders == ["カレー"]
    *_, settled = play(shop(), "カレーを3皿ください", "まあいい。カレー三皿で決まりだ。")
    assert settled.memory.orders == ["カレー"] * 3


def test_the_bill_put_off_and_a_why_question_that_is_no_doubt_of_the_bill():
    *_, later = play(priced_shop(), "カレーください", "まあ、あとでまとめてお勘定しましょう。それと、飲み物は何がありますか。")
    assert later.answer.text == "うちにあるのはコーヒーだよ。"
    *_, why = play(priced_shop(), "カレーください", "マスター、どうしてそんな名前をつけたんです？")
    assert why.answer is None or "円" not in why.answer.text


def test_the_prices_of_what_was_just_listed():
    listed, each = play(priced_shop(), "お品書きを見せてもらえますか", "それぞれおいくらですか？")
    assert listed.answer.text == "うちにあるのはコーヒー、カレーだよ。"
    assert each.answer.text == "コーヒーは400円。カレーは700円。"


def test_a_sum_supposed_pays_nothing_and_a_whole_sum_asked_is_the_bill():
    *_, bill, supposed, whole = play(priced_shop(), "カレーください", "出前お願いします", "お会計",
                                     "1000円ならいける！", "出前込みで合計いくら？")
    assert bill.answer.text == "1,000円です。" and supposed.answer.text != "はい、確かに。"
    assert whole.answer.text == "カレー700円、出前300円で1,000円。"
    *_, claimed = play(priced_shop(), "カレーください", "お会計", "さっき払ったじゃん")
    assert claimed.answer is None or claimed.answer.text != "はい、確かに。"


def test_a_price_said_back_orders_nothing_even_after_an_offer():
    *_, said_back, bill = play(priced_shop(), "カレーください", "何があるの？", "なるほど、カレーは一皿七百円なのですね。", "お会計")
    assert said_back.memory.orders == ["カレー"] and bill.answer.text == "700円です。"


def goods_shop() -> Conversation:
    data = copy.deepcopy(CAFE)
    menu = data["characters"][0]["menu"]
    menu["items"] = [{"id": "豆", "words": ["豆", "コーヒー豆"], "kind": "goods", "price": 500, "flag": "一杯目",
                      "lines": [L("豆ね。挽いておくよ。")]},
                     {"id": "カップ", "words": ["カップ"], "kind": "goods", "price": 800, "lines": [L("カップね。")]}]
    menu.update(bill=[L("{total}円です。")], paid=[L("はい、確かに。")])
    return conversation_of(data, "goods.json")


def test_goods_chosen_then_counted_are_one_basket_and_a_count_taken_back_is_replaced():
    *_, counted, more, bill = play(goods_shop(), "豆にしようかな", "豆を3袋ください", "あと1袋", "お会計")
    assert counted.memory.orders == ["豆"] * 3 and more.memory.orders == ["豆"] * 4
    assert bill.answer.text == "2,000円です。"
    *_, fixed = play(goods_shop(), "カップを3個", "カップ3個ちゃうで、2個や")
    assert fixed.memory.orders == ["カップ"] * 2
    # a drink ordered again is another drink, not a basket
    *_, drinks = play(shop(), "コーヒーください", "コーヒーを2杯ください")
    assert drinks.memory.orders == ["コーヒー"] * 3


def test_a_count_said_alone_after_the_item_and_a_count_claimed():
    [two] = play(shop(), "コーヒー一杯ください。友達の分も、コーヒーで。二杯ね")
    assert two.memory.orders == ["コーヒー"] * 2
    *_, claimed = play(shop(), "コーヒーください", "コーヒーは三杯だと思うんだけど")
    assert claimed.memory.orders == ["コーヒー"]
    [asked] = play(priced_shop(), "カレーって何が入ってるの？玉ねぎとか人参とか")
    assert asked.memory.orders == []
