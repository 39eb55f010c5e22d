"""The tab as a ledger: what goes on it needs an order, what comes off it a cancel, and money counts only when it
is handed over — read from the line's form, not from the one sentence a player happened to say (the lines below
are new variants of what blind players met)."""
from __future__ import annotations

from collections import Counter
from functools import cache

from chalicelib.conversation import Conversation
from chalicelib.interpret.interpreter import Interpreter
from chalicelib.interpret.money import amounts, asks_to_pay, handed_amount
from chalicelib.scenario import GameRules, load_scenario
from tests.conftest import ROOT
from tests.director.playing import play, reference, said, visit


@cache
def florist() -> Conversation:
    rules = GameRules(load_scenario(ROOT / "scenarios" / "hanaya.json"))
    return Conversation(rules, Interpreter(rules))


def shop(*texts: str) -> list:
    return play(florist(), *texts)


def test_asking_whether_a_service_is_done_puts_nothing_on_the_tab_and_offers_it_at_its_price():
    _, asked, yes = shop("こんにちは", "配送ってお願いしたらやってもらえたりします？", "はい、お願いします")
    assert asked.memory.orders == [] and "500" in asked.answer.text, asked.answer.text
    assert yes.memory.orders == ["配達"]                                   # a yes to the offer orders it
    *_, plain = shop("包装ってできますか？")
    assert plain.memory.orders == []


def test_a_service_asked_for_goods_being_bought_is_ordered():
    *_, asked = shop("ひまわりを2本ください", "これ、包んでもらうことってできます？")
    assert asked.memory.orders[-1] == "ラッピング"


def test_a_price_asked_of_an_item_named_in_the_sentence_before_orders_nothing():
    *_, asked = shop("スズランも置いてるんですね。一本おいくら？")
    assert asked.memory.orders == [] and "500" in asked.answer.text, asked.answer.text
    *_, ordered = shop("スズランを2本ください。いくら？")
    assert ordered.memory.orders == ["スズラン", "スズラン"]


def test_a_price_asked_of_something_not_on_the_tab_is_not_the_bill():
    assert not asks_to_pay("生け込みの出張ってやってます？費用いくらくらい？")
    assert not asks_to_pay("出張っておいくら？")
    assert asks_to_pay("いくら？") and asks_to_pay("合計でいくら？") and asks_to_pay("お会計はいくら？")
    *_, asked = shop("かすみ草を1本ください", "生け込みの出張ってやってます？費用いくらくらい？")
    assert not asked.answer.ref.startswith("menu/千代/bill"), asked.answer.ref


def test_a_budget_named_in_a_question_is_no_question_of_the_bill():
    *_, asked = shop("かすみ草を1本ください", "予算は月5000円なんですけど、それで足りるものですか？")
    assert not asked.answer.ref.startswith("menu/"), asked.answer.ref


def test_a_sum_said_back_pays_nothing_the_sum_handed_over_does_and_its_change_is_given():
    *_, bill, checked = shop("ひまわりを2本ください", "お会計で", "700円ですね。ひまわりって何日くらいもちます？")
    assert bill.answer.ref.startswith("menu/千代/bill")
    assert checked.memory.paid == 0, checked.answer.text
    *_, paid = shop("ひまわりを2本ください", "お会計で", "700円ね、はいじゃあ千円で。おつりください")
    assert paid.memory.paid == 2 and "300" in paid.answer.text, paid.answer.text


def test_sums_are_read_in_digits_and_in_kanji_and_the_last_one_named_is_handed_over():
    assert handed_amount("はい、二千五百円") == 2500 and handed_amount("一万円で") == 10000
    assert handed_amount("800円だよね、じゃあ1000円で") == 1000
    assert amounts("ビール600円と、おでん三百円") == [600, 300]


def test_an_item_said_not_wanted_comes_off_the_bill_and_a_cancel_names_the_item_of_the_sentence_before():
    *_, off = shop("スズランを1本ください", "スズランはやっぱりいらないです")
    assert off.memory.orders == [], off.answer.text
    *_, off = shop("ひまわりを1本ください", "ひまわりは結構です。取り消しで")
    assert off.memory.orders == [], off.answer.text


def test_restating_what_was_ordered_orders_nothing_again():
    *_, restated = shop("かすみ草2本とひまわり1本ください", "え、さっき頼みましたよね？かすみ草とひまわり")
    assert sorted(restated.memory.orders) == ["かすみ草", "かすみ草", "ひまわり"]


def test_one_more_of_an_item_said_with_its_count_is_no_treat_and_a_change_of_mind_orders_nothing():
    *_, counted = visit("こんばんは", "ビールください", "ビールください", "いや、ビールも一杯しか飲んでないですよ")
    assert counted.memory.orders == ["ビール"], counted.memory.orders
    *_, kept = visit("こんばんは", "ハイボールもう一杯…いや、やっぱりやめておきます。")
    assert kept.memory.orders == []


def test_what_was_had_recounted_to_check_the_bill_orders_nothing_and_is_answered_with_the_breakdown():
    *_, recounted = visit("こんばんは", "ビールください", "ナポリタンひとつ",
                          "ちょっと確認させて。食べたのはナポリタン、飲んだのはビール。それだけだよね")
    assert recounted.memory.orders == ["ビール", "ナポリタン"], recounted.memory.orders
    assert recounted.answer.ref.startswith("menu/赤尾妙子/breakdown"), recounted.answer.ref
    *_, listed = visit("こんばんは", "ビールください", "ナポリタンひとつ", "今いくら？", "えっと、ビールとナポリタンね")
    assert listed.memory.orders == ["ビール", "ナポリタン"], listed.memory.orders
    *_, more = visit("こんばんは", "ビールください", "今いくら？", "ビールもう一杯")
    assert more.memory.orders == ["ビール", "ビール"]


def test_a_sum_said_with_something_else_pays_nothing_a_sum_said_alone_does():
    *_, said = shop("ひまわりを2本ください", "お会計で", "700円なら思ったより安いですね。リボンって何色があります？")
    assert said.memory.paid == 0, said.answer.text
    *_, waiting = shop("ひまわりを2本ください", "お会計で", "700円か、ちょっと財布探すから待ってて")
    assert waiting.memory.paid == 0, waiting.answer.text
    *_, alone = shop("ひまわりを2本ください", "お会計で", "はい、700円")
    assert alone.memory.paid == 2


def test_the_cost_of_something_supposed_is_no_bill_and_a_question_whether_one_can_order_is_no_yes_to_an_offer():
    assert not asks_to_pay("温室の屋根、張り替えるならいくらくらいかかるんだろう")
    *_, asked = shop("こんにちは", "配達ってお願いできたりします？", "ネットでも注文できますか？母の誕生日に送りたくて")
    assert "配達" not in asked.memory.orders, asked.memory.orders


def test_a_recount_right_after_the_bill_orders_only_what_the_tab_does_not_hold():
    *_, recount = visit("こんばんは", "ビールください", "ナポリタンひとつ", "今いくら？", "ナポリタンとビールと、あとハイボールね")
    assert recount.memory.orders == ["ビール", "ナポリタン", "ハイボール"], recount.memory.orders


def test_an_item_had_already_and_more_declined_orders_nothing_and_shows_no_bill():
    *_, bar = visit("おでんの大根ください", "大根はもう頂いてるので追加はいらないです")
    assert bar.memory.orders == ["おでん"], bar.memory.orders
    assert "/breakdown#" not in (bar.answer.ref or "") and "/bill#" not in (bar.answer.ref or ""), bar.answer
    *_, shop = play(florist(), "スズラン2本ください", "スズランはもう頂いてますし、追加はいらないです")
    assert shop.memory.orders == ["スズラン", "スズラン"], shop.memory.orders
    assert "円" not in shop.answer.text, shop.answer


def test_a_prohibition_to_cancel_takes_nothing_off():
    *_, bar = visit("水割りください", "おいおい、取り消すな！俺の水割り勝手に消すなよ")
    assert bar.memory.orders == ["水割り"], bar.memory.orders
    *_, shop = play(florist(), "ひまわり3本ください", "取り消すなよ！ひまわりはちゃんと買うから")
    assert shop.memory.orders.count("ひまわり") == 3, shop.memory.orders


def test_what_do_you_mean_asks_about_the_bill_only_right_after_one():
    *_, chat = visit("水割りください", "え、失恋が好き…？？ どういうこと笑")
    assert "円" not in chat.answer.text, chat.answer
    *_, billed = visit("水割りください", "お会計", "え、どういうこと？")
    assert "/breakdown#" in (billed.answer.ref or ""), billed.answer
    *_, shop = play(florist(), "スズラン2本ください", "颯太くんが温室の王子？どういうこと？")
    assert "円" not in said(shop), said(shop)


def test_a_sum_handed_over_with_its_count_and_here_you_go_pays():
    *_, bar = visit("水割りください", "水割りもう一杯", "お勘定", "二杯で千四百円な、ほらよ")
    assert bar.memory.paid == 2, (bar.memory.orders, bar.memory.paid)
    *_, shop = play(florist(), "スズラン2本ください", "お会計", "2本で1000円ね、はいよ")
    assert shop.memory.paid == 2, (shop.memory.orders, shop.memory.paid)
    # a sum with a complaint pays nothing
    *_, dear = visit("水割りください", "水割りもう一杯", "お勘定", "二杯で千四百円は高いな")
    assert dear.memory.paid == 0, dear.memory.paid


def test_an_item_said_and_another_said_instead_in_one_line_orders_only_the_second():
    *_, bar = visit("こんばんは", "では水割りを一杯……いや、やっぱりハイボールにします")
    assert bar.memory.orders == ["ハイボール"], bar.memory.orders
    *_, tea = visit("こんばんは", "ビール…いや、ウーロン茶ください")
    assert tea.memory.orders == ["ウーロン茶"], tea.memory.orders
    *_, shop = play(florist(), "こんにちは", "ひまわりを3本……いや、やっぱりスズランにします")
    assert shop.memory.orders == ["スズラン"], shop.memory.orders
    # two items joined are both ordered
    *_, both = visit("こんばんは", "ビールとウーロン茶ください")
    assert sorted(both.memory.orders) == ["ウーロン茶", "ビール"], both.memory.orders


def test_a_sum_asked_back_as_change_is_no_money_handed():
    from chalicelib.interpret.money import change_asked
    assert handed_amount("はい、じゃあこれ4000円。お釣り500円お願いします") == 4000
    assert change_asked("はい、じゃあこれ4000円。お釣り500円お願いします") == 500
    assert handed_amount("釣り、八百円くれ") is None and change_asked("釣り、八百円くれ") == 800
    # handed with the change asked, in one line of two sentences: read whole, the right change counted back
    *_, bar = visit("ハイボールください", "ナポリタンも", "お会計お願いします", "はい、これ4000円。お釣り500円お願いします")
    assert bar.memory.paid == 2 and "2,600円のお返し" in said(bar), said(bar)
    # only the change asked: what was handed is the bill and the change
    *_, terse = visit("ハイボールください", "ナポリタンも", "お会計", "釣り、六百円くれ")
    assert terse.memory.paid == 2 and "600円のお返し" in said(terse), said(terse)
    *_, shop = play(florist(), "スズラン2本ください", "お会計お願いします", "5000円渡しますね。おつり4000円ください")
    assert shop.memory.paid == 2 and "4,000円のお返し" in said(shop), said(shop)


def test_the_tab_so_far_asked_is_itemised_and_says_no_goodbye():
    for line in ("ここまででいくらになってる", "ちなみに今いくらくらいになってます？"):
        *_, bar = visit("ハイボールください", "ナポリタンも", line)
        assert "/breakdown#" in (bar.answer.ref or "") and bar.memory.paid == 0, (line, bar.answer)
    *_, shop = play(florist(), "ひまわり3本ください", "今の時点でいくらですか？")
    assert "/breakdown#" in (shop.answer.ref or "") and "1,050" in said(shop), said(shop)
    # the bill asked for is still the bill
    *_, bill = visit("ハイボールください", "お会計お願いします")
    assert "/bill#" in (bill.answer.ref or ""), bill.answer


def test_paying_said_as_what_comes_later_pays_nothing_and_one_more_question_orders_nothing():
    *_, shop = play(florist(), "ひまわり3本ください", "お会計お願いします",
                    "払う前にちょいと聞くけどさ、颯太くんは学校どうしてるんだい？")
    assert shop.memory.paid == 0, (shop.memory.orders, shop.memory.paid, said(shop))
    *_, bar = visit("ハイボールください", "お会計の前に、もう一つだけ聞いていい？")
    assert bar.memory.orders == ["ハイボール"] and bar.memory.paid == 0, (bar.memory.orders, said(bar))
    *_, favour = play(florist(), "スズラン2本ください", "もう一つお願いがあるんですけど")
    assert favour.memory.orders == ["スズラン", "スズラン"], favour.memory.orders
    # one more of the last order still orders it
    *_, again = visit("ハイボールください", "もう一杯！")
    assert again.memory.orders == ["ハイボール", "ハイボール"]


def test_a_service_declined_by_another_of_its_words_or_in_rough_speech_comes_off():
    wrapped = ("ひまわり三本ください", "さっき頼んだひまわり三本、包んでもらえるかい")
    *_, plain = play(florist(), *wrapped, "包装なしで頼むよ。で、全部でいくらになる？")
    assert "ラッピング" not in plain.memory.orders and "1,050" in said(plain), said(plain)
    *_, rough = play(florist(), *wrapped, "ラッピングはいらねえってことさ。そのままでいいよ")
    assert "ラッピング" not in rough.memory.orders, rough.memory.orders
    *_, bar = visit("ハイボールください", "水割りも", "水割りはいらねえ")
    assert bar.memory.orders == ["ハイボール"], bar.memory.orders


def test_an_addition_with_that_s_all_orders_it():
    *_, added = play(florist(), "ひまわり三本ください", "贈り物じゃねえよ、自分の店用さ。かすみ草を一つ追加、それだけ")
    assert added.memory.orders.count("かすみ草") == 1, added.memory.orders
    *_, put_in = play(florist(), "ひまわり三本ください", "じゃあ、かすみ草も一束入れといておくれ")
    assert put_in.memory.orders.count("かすみ草") == 1, put_in.memory.orders
    *_, bar = visit("ハイボールください", "おでんを一つ追加、それだけ")
    assert bar.memory.orders == ["ハイボール", "おでん"], bar.memory.orders
    # a recount that only names what was had still orders nothing
    *_, recount = visit("ハイボールください", "ナポリタンも", "飲み食いしたのはハイボールとナポリタン。それだけ")
    assert recount.memory.orders == ["ハイボール", "ナポリタン"], recount.memory.orders


def test_a_kind_the_menu_does_not_hold_is_said_missing_never_served_as_the_plain_item():
    *_, bar = visit("こんばんは", "昔はあったんだがな。じゃあ焼酎の水割りでいい")
    assert bar.memory.orders == [] and "焼酎の水割り" in said(bar), said(bar)
    for line, named in (("白いバラください", "白いバラ"), ("ピンクの薔薇を3本ください", "ピンクの薔薇")):
        *_, shop = play(florist(), "こんにちは", line)
        assert shop.memory.orders == [] and shop.context["order"]["named"] == named, (line, shop.context)
    # the item's own colour, or none, is the item
    *_, red = play(florist(), "こんにちは", "赤いバラを2本ください")
    assert red.memory.orders == ["赤い薔薇", "赤い薔薇"]


def test_more_said_after_the_count_adds_to_the_basket():
    *_, added = play(florist(), "赤いバラを2本ください", "バラ1本追加で")
    assert added.memory.orders.count("赤い薔薇") == 3, added.memory.orders
    *_, more = play(florist(), "かすみ草を3本", "かすみ草を2本足してください")
    assert more.memory.orders.count("かすみ草") == 5, more.memory.orders
    # a count said alone is still the basket's new total
    *_, total = play(florist(), "かすみ草を3本", "かすみ草を2本にしてください")
    assert total.memory.orders.count("かすみ草") == 2, total.memory.orders


def test_a_service_counted_is_booked_as_many_times():
    *_, wrapped = play(florist(), "スズラン3本ください", "ラッピングはお願いできますか？",
                       "包みを二つに分けてほしいんです。スズランで一つ、ひまわりで一つ。")
    assert wrapped.memory.orders.count("ラッピング") == 2, wrapped.memory.orders
    *_, once = play(florist(), "スズラン3本ください", "ラッピングお願いします", "ラッピングもお願いね")
    assert once.memory.orders.count("ラッピング") == 1, once.memory.orders


def test_goods_asked_of_another_day_a_stock_question_or_a_past_bouquet_go_on_no_tab():
    *_, later = play(florist(), "こんにちは", "六月の土曜日、ひまわりを30本、配達でお願いすることはできますか？")
    assert later.memory.orders == [], later.memory.orders
    *_, tomorrow = visit("こんばんは", "明日ナポリタン二つ頼めますか？")
    assert tomorrow.memory.orders == [], tomorrow.memory.orders
    *_, stock = play(florist(), "こんにちは", "在庫は今何本くらいありますか？かすみ草で。")
    assert stock.memory.orders == [], stock.memory.orders
    *_, told = play(florist(), "こんにちは", "赤い薔薇4本とかすみ草3本とひまわり1本の花束だったんですけど。")
    assert told.memory.orders == [], told.memory.orders
    # asked for now, they are ordered
    *_, now = play(florist(), "こんにちは", "どれにしようかな？ひまわりで！")
    assert now.memory.orders == ["ひまわり"], now.memory.orders


def test_a_count_asked_about_orders_nothing_and_change_asked_after_paying_is_settled():
    *_, shop = play(florist(), "赤い薔薇を4本ください", "颯太さんはどう思います？薔薇とかすみ草にひまわり一本って合いますか？")
    assert shop.memory.orders == ["赤い薔薇"] * 4, shop.memory.orders
    *_, bar = visit("こんばんは", "ハイボール一杯って多い？")
    assert bar.memory.orders == [], bar.memory.orders
    *_, asked = visit("こんばんは", "ビール一杯って頼める？")
    assert asked.memory.orders == ["ビール"], asked.memory.orders
    # change asked again once paid: the ledger says it is settled
    *_, again = visit("水割りください", "お会計", "五千円で。釣りは四千三百円だな", "釣り、四千三百円くれ")
    assert again.memory.paid == 1 and "/settled#" in (again.answer.ref or ""), again.answer


def test_the_price_of_a_thing_done_or_the_meaning_of_a_thing_named_is_no_question_of_the_tab():
    *_, glass = play(florist(), "ひまわり3本ください", "じゃあ颯太くん、温室のガラス、何枚か替えるといくらぐらいかかるんだい？")
    assert (glass.context or {}).get("money") is None, glass.context
    *_, meant = visit("ハイボールください", "お会計", "葵さん、さっきのチラシの話って結局どういうことなんです？お店変えたいの？")
    assert (meant.context or {}).get("money") is None and meant.answer.speaker == "神楽坂葵", meant.context
    # of the bill itself, right after it: the breakdown
    *_, sum_meant = visit("ハイボールください", "お会計", "600円ってどういうこと？")
    assert "/breakdown#" in (sum_meant.answer.ref or ""), sum_meant.answer


def test_thanks_for_the_meal_with_the_tab_unpaid_brings_the_bill_and_the_visit_goes_on():
    *_, done = visit("ナポリタンください", "ごちそうさまでした！")
    assert not done.step.state.ended and "/bill#" in (done.answer.ref or ""), said(done)
    *_, shop = play(florist(), "ひまわり1本ください", "ごちそうさまでした")
    assert not shop.step.state.ended and "350" in said(shop), said(shop)
    # with a word of leaving, or once paid, it is a goodbye
    *_, bye = visit("ナポリタンください", "ごちそうさま、また来ます")
    assert bye.step.state.ended
    *_, paid = visit("ナポリタンください", "お会計", "はい、800円", "ごちそうさまでした")
    assert paid.step.state.ended


def test_a_service_asked_of_days_to_come_is_not_booked_and_declined_with_ii_comes_off():
    *_, weekly = play(florist(), "かすみ草2本ください", "颯太くん、毎週お花頼んだら届けてくれる？")
    assert "配達" not in weekly.memory.orders, weekly.memory.orders
    *_, declined = play(florist(), "かすみ草2本ください", "配達お願いします", "今日は持って帰るから配達はいいわ。お会計、今いくらになってる？")
    assert "配達" not in declined.memory.orders and "600" in said(declined), said(declined)


def test_a_thing_pointed_at_is_taken_off_and_a_fare_pointed_at_is_no_question_of_the_tab():
    *_, pointed = play(florist(), "スズラン1本とひまわり3本ください", "スズランは別に包んでください",
                       "スズランはやめます。キャンセルできますか？",
                       "ラッピング200円は、スズランを別に包む分でしたよね？それも外してください。")
    assert pointed.memory.orders == ["ひまわり"] * 3, pointed.memory.orders
    *_, fare = visit("ハイボールください", "葵さん、さっき私に電車賃を貸したって言ってましたけど、それ、いくらでした？")
    assert (fare.context or {}).get("money") is None and fare.memory.paid == 0, fare.context


def test_a_greeting_on_coming_in_and_tears_told_are_read_as_such():
    *_, came = visit("……邪魔するよ")
    assert came.answer.act == "挨拶", came.answer
    *_, shop = play(florist(), "邪魔するよ")
    assert shop.answer.act == "挨拶", shop.answer
    *_, sad = visit("こんばんは", "測定のデータが三か月分パーになっちゃって。泣きそうですよ")
    assert sad.answer.act == "悲報", sad.answer
    # an item ordered with a word of what it is is ordered, not only talked about
    *_, daruma = visit("こんばんは", "じゃあそのダルマの水割り、一杯くれ")
    assert daruma.memory.orders == ["水割り"], daruma.context


def test_casual_orders_a_count_asked_alone_and_an_order_not_come_yet():
    for line in ("んー、でもせっかくだしハイボールいっちゃお！1杯ください🍻", "ハイボールにしよ！1杯ください", "ハイボール行こうかな"):
        *_, ordered = visit("ナポリタンください", line)
        assert ordered.memory.orders == ["ナポリタン", "ハイボール"], (line, ordered.memory.orders)
    *_, shop = play(florist(), "こんにちは", "ひまわりにしよ！3本ください")
    assert shop.memory.orders == ["ひまわり"] * 3, shop.memory.orders
    # not come yet, asked: brought, not ordered again
    for line in ("ハイボールまだ来てない？", "あれ、ハイボールまだ来てなくないっすか？"):
        *_, asked = visit("ハイボールください", line)
        assert asked.memory.orders == ["ハイボール"] and asked.context["order"]["kind"] == "coming", (line, asked.context)


def test_a_drink_said_to_be_on_the_player_is_the_named_one_s_treat_and_the_change_left_in_slang():
    *_, treat = visit("ナポリタンください", "あと葵ちゃんのウーロン茶は俺のおごりなんで、それも付けといてくださいね")
    assert treat.context["order"]["treated"] == "神楽坂葵" and treat.memory.orders == ["ナポリタン", "ウーロン茶"]
    *_, kept = visit("ナポリタンください", "お会計", "はい、1000円で！おつりいいっす")
    assert kept.memory.paid == 1 and "お返し" not in said(kept), said(kept)


def test_a_price_asked_with_a_count_says_what_that_many_come_to_and_cash_handed_pays_a_bill_said_before():
    *_, two = play(florist(), "こんにちは", "ひまわり2本でいくら？")
    assert "700" in said(two) and two.memory.orders == [], said(two)
    *_, bar = visit("こんばんは", "ビール2本だといくら？")
    assert "1,200" in said(bar) and bar.memory.orders == [], said(bar)
    *_, one = play(florist(), "こんにちは", "ひまわりはいくら？")
    assert "350" in said(one), said(one)
    # money handed in so many words pays though the bill was said a while ago
    *_, cash = play(florist(), "ひまわり3本ください", "お会計お願いします", "颯太くんは学生？", "彼女喜んでくれるかな…",
                    "じゃあ現金で。二千円でお願いします")
    assert cash.memory.paid == 3 and "950" in said(cash), said(cash)


def test_a_promise_to_come_again_said_in_passing_brings_the_bill_and_a_sum_only_exclaimed_pays_nothing():
    *_, passing = visit("ナポリタンください", "妙子さん、素敵な名前。私は美咲っていいます。今日初めて来たんですけど、また来ますね")
    assert not passing.step.state.ended and "/bill#" in (passing.answer.ref or ""), said(passing)
    *_, shop = play(florist(), "ひまわり1本ください", "また来ますね")
    assert not shop.step.state.ended, said(shop)
    # with a lead of leaving, or with thanks for the meal, it is the goodbye
    for line in ("じゃあ、また来ますね", "ごちそうさま、また来ます"):
        *_, bye = visit("ナポリタンください", line)
        assert bye.step.state.ended, (line, said(bye))
    *_, exclaimed = play(florist(), "かすみ草3本とひまわり2本ください", "合計いくら？",
                         "1600円！予算ぴったりくらい🙌 包装代ってかかりますか？")
    assert exclaimed.memory.paid == 0, said(exclaimed)


def test_keeping_the_change_only_wished_for_still_counts_it_back_and_a_change_question_pays_nothing():
    *_, wished = visit("ウーロン茶ください", "お会計お願い",
                       "はい、一万円で。お釣りはいいよって言いたいところだけど、今月厳しいからお釣りください")
    assert wished.memory.paid == 1 and "9,600" in said(wished), said(wished)
    *_, kept = visit("ウーロン茶ください", "お会計お願い", "はい、千円。お釣りはとっといて")
    assert kept.memory.paid == 1 and "600" not in said(kept), said(kept)
    # the change asked after with nothing handed pays nothing: the ledger answers with what is owed
    *_, asked = shop("こんにちは", "かすみ草2本ください", "お会計お願いします", "おつりってある？")
    assert asked.memory.paid == 0 and "600" in said(asked), said(asked)
    # and money handed with a rough request pays, its change counted back
    *_, rough = shop("こんにちは", "かすみ草2本ください", "お会計お願いします", "ほれ、千円で頼まあ")
    assert rough.memory.paid == 2 and "400" in said(rough), said(rough)


def test_a_treat_naming_no_item_bills_what_the_one_treated_has():
    *_, treated, bill = visit("ハイボールください", "葵ちゃんにも一杯、俺から", "ママ、内訳頼むよ")
    assert treated.answer.speaker == "神楽坂葵" and treated.memory.orders == ["ハイボール", "ウーロン茶"], said(treated)
    assert "ウーロン茶400円" in said(bill), said(bill)
    *_, mama = visit("ママも何か飲んでよ。ごちそうするから")
    assert mama.memory.orders == ["水割り"] and "水割り" in said(mama), said(mama)


def test_treated_to_must_name_a_menu_item(tmp_path):
    import json

    import pytest

    from chalicelib.scenario.loader import ScenarioError
    data = json.loads((ROOT / "scenarios" / "chinoike.json").read_text(encoding="utf-8"))
    data["characters"][0]["menu"]["treated_to"] = "シャンパン"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ScenarioError, match="treated_to"):
        load_scenario(path)
    # without it, a treat naming nothing is thanks only
    for character in data["characters"]:
        if character.get("menu"):
            character["menu"].pop("treated_to", None)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    rules = GameRules(load_scenario(path))
    *_, thanks = play(Conversation(rules, Interpreter(rules)), "こんばんは", "ママも一杯どうぞ")
    assert thanks.memory.orders == [] and thanks.context["order"]["kind"] == "treat", said(thanks)


def test_a_cancel_is_read_in_its_own_clause_and_sentence():
    # a count in another sentence does not keep what is cancelled
    *_, cancelled = shop("こんにちは", "スズラン一本ください", "ひまわり一本ください", "あ、スズランはキャンセルで。一本しか持てないんで")
    assert cancelled.memory.orders == ["ひまわり"], said(cancelled)
    # what is said after the clause that gives something up is not given up
    *_, swapped = shop("こんにちは", "ひまわり一本ください", "スズランやめて、ひまわり一本で")
    assert swapped.memory.orders == ["ひまわり"], said(swapped)
    # the one just served, pointed at, comes off alone
    *_, latest = visit("ナポリタンください", "ナポリタンもう一皿", "ママ、今のナポリタンは頼んでないから取り消して")
    assert latest.memory.orders == ["ナポリタン"], said(latest)


def test_counts_told_or_questioned_and_other_acts_asked_order_nothing():
    *_, told = visit("水割りください", "水割りもう一杯", "ママ、水割りはもう二杯飲んだ。おでんは一皿だ")
    assert told.memory.orders == ["水割り", "水割り"], said(told)
    *_, questioned = visit("ナポリタンください", "ナポリタン三つ？一皿しか食べてないよ")
    assert questioned.memory.orders == ["ナポリタン"], said(questioned)
    *_, asked = shop("こんにちは", "ひまわりはいくら？", "かすみ草と薔薇の値段も教えてください")
    assert asked.memory.orders == [], said(asked)
    *_, shown = shop("こんにちは", "スズラン見せてもらえますか")
    assert shown.memory.orders == [], said(shown)


def test_tohoku_requests_and_reasons_read_as_standard():
    from chalicelib.interpret.dialect import standard
    assert standard("おでんは頼んでねぇがら、取り消してけろ") == "おでんは頼んでないから、取り消してくれ"
    *_, back = visit("おでんください", "おでんもう一皿", "今のおでんは頼んでねぇがら、取り消してけろ")
    assert back.memory.orders == ["おでん"], said(back)


def test_what_is_at_hand_supposed_or_imagined_orders_nothing():
    *_, praised = visit("おでんください", "うまいなあ、この卵。うちの鶏の卵も今が旬なんだ")
    assert praised.memory.orders == ["おでん"], said(praised)
    *_, more = visit("おでんください", "この卵、もう一つちょうだい")
    assert more.memory.orders == ["おでん", "おでん"], said(more)
    *_, supposed = shop("こんにちは", "かすみ草三本ください", "ラッピングをお願いすると1,100円ですよね。ちょっと考えます")
    assert supposed.memory.orders == ["かすみ草"] * 3, said(supposed)
    *_, idea = visit("ねえ葵ちゃん、お店の宣伝なんだけど、チラシ持ってきた人はハイボール一杯無料とかどう？")
    assert idea.memory.orders == [], said(idea)
    *_, proposed = shop("こんにちは", "赤と白でまとめるのはどうですか？薔薇とかすみ草で。")
    assert proposed.memory.orders == [], said(proposed)


def test_counts_asked_for_with_can_you_set_the_basket():
    *_, counted = shop("こんにちは", "スズランとかすみ草ください", "では、スズランを三本と、かすみ草を三本でお願いできますか？")
    assert counted.memory.orders.count("スズラン") == 3 and counted.memory.orders.count("かすみ草") == 3, said(counted)


def test_a_count_waved_off_orders_nothing_and_a_question_after_taking_in_is_a_question():
    *_, waved = visit("ナポリタンください", "ナポリタン三つなんて食べられるわけないよ")
    assert waved.memory.orders == ["ナポリタン"], said(waved)
    from chalicelib.interpret.acts import ActRecogniser
    assert ActRecogniser().recognise("なるほど、赤が多めに。では白も足すのはどうですか？").act == "質問"
    assert ActRecogniser().recognise("なるほどね").act == "同意"


def test_a_sum_handed_with_its_change_asked_after_pays_and_counts_it_back():
    *_, paid = visit("ハイボールください", "お会計お願い", "じゃあ五千円から…お釣りってある？")
    assert paid.memory.paid == 1 and "4,400" in said(paid), said(paid)


def test_paying_after_eating_pays_nothing_and_presents_no_bill_now():
    *_, later = visit("ナポリタンください", "ママ、ナポリタン持ってきてくれる？食べてから払うわ")
    assert later.memory.paid == 0 and "800円" not in said(later), said(later)
    *_, bill_later = visit("ナポリタンください", "お会計は食べてからにするね")
    assert bill_later.memory.paid == 0 and "800円" not in said(bill_later), said(bill_later)
    *_, flowers = shop("こんにちは", "ひまわり一本ください", "見終わってから払いますね")
    assert flowers.memory.paid == 0 and "350円" not in said(flowers), said(flowers)
    # asked now, the bill comes, and money handed pays
    *_, now = visit("ナポリタンください", "お会計お願い", "はい、千円")
    assert now.memory.paid == 1, said(now)


def test_a_count_taken_off_beside_a_sum_said_takes_that_many_off():
    *_, fewer = shop("ひまわりを十本とかすみ草を四本ください", "五千円超えちゃうな…じゃあ、ひまわりを1本減らしてください")
    assert fewer.memory.orders.count("ひまわり") == 9 and fewer.memory.orders.count("かすみ草") == 4, said(fewer)
    *_, drinks = visit("ハイボール三杯ちょうだい", "三千円超えそうやな…ハイボール1杯減らしてくれる？")
    assert drinks.memory.orders.count("ハイボール") == 2, said(drinks)


def test_a_dish_declined_or_sent_back_is_not_served_and_comes_off_the_tab():
    *_, declined = visit("水割りください", "いえ、きんぴらは結構です。おでんで十分ですから。お通しは付けないでくださいね")
    assert declined.memory.orders == ["水割り"], said(declined)
    *_, sent_back = visit("水割りください", "お通しください", "ママ、きんぴらは下げてください")
    assert sent_back.memory.orders == ["水割り"], said(sent_back)
    *_, wrapping = shop("ひまわり一本ください", "ラッピングは付けないでくださいね")
    assert wrapping.memory.orders == ["ひまわり"], said(wrapping)
    # asked for, it is served
    *_, wanted = visit("水割りください", "お通しもつけてください")
    assert wanted.memory.orders == ["水割り", "お通し"], said(wanted)


def test_how_an_item_is_wanted_said_after_it_is_of_that_item():
    for line in ("いや、だからナポリタン食べたいねん。大盛りでお願いします", "ハイボールください。薄めで"):
        *_, styled = visit("水割りちょうだい", line)
        assert "水割り、" not in said(styled) and styled.memory.orders.count("水割り") == 1, (line, said(styled))
        assert (styled.context or {}).get("order", {}).get("style"), styled.context


def test_one_more_taken_back_for_another_item_to_try_orders_only_that_one():
    *_, bar = visit("ハイボールちょうだい", "ハイボールもう一杯いこかな…いや、やっぱ水割りにしてみよか。ダルマで")
    assert bar.memory.orders == ["ハイボール", "水割り"], said(bar)
    *_, florist_ = shop("ひまわり一本ください", "ひまわりもう一本いこかな…いや、やっぱスズランにしてみよか")
    assert florist_.memory.orders == ["ひまわり", "スズラン"], said(florist_)


def test_a_receipt_asked_about_is_the_receipts_matter_not_the_bill():
    *_, asked = visit("ウーロン茶ください", "一つお願いがあるんですけど、お会計のとき領収書って出せます？")
    assert "400円" not in said(asked) and "領収書" in said(asked), said(asked)
    *_, after = visit("ウーロン茶ください", "お会計お願いします", "はい、五千円",
                      "ありがとうございます。で、領収書なんですけど、宛名は会社名でお願いできますか？")
    assert "お勘定" not in said(after) and "領収書" in said(after), said(after)
    *_, florist_ = shop("ひまわり一本ください", "レシートもらえますか？")
    assert "350円" not in said(florist_) and "レシート" in said(florist_), said(florist_)
    # the bill asked for with it is still the bill
    *_, both = visit("ウーロン茶ください", "お会計と領収書お願い")
    assert "400円" in said(both), said(both)


def test_giving_up_an_item_right_before_its_particle_takes_only_that_one():
    *_, passed = visit("ナポリタンください", "ナポリタンでお腹いっぱいですから、今夜はきんぴらはやめておきますわ。")
    assert passed.memory.orders == ["ナポリタン"], said(passed)
    assert not said(passed).startswith("いっぱい"), said(passed)
    *_, flowers = shop("ひまわり一本ください", "ひまわりで十分だから、スズランはやめとくね")
    assert flowers.memory.orders == ["ひまわり"], said(flowers)
    # named right before the particle and on the tab, it comes off
    *_, gone = visit("ナポリタンください", "ナポリタンはやめとく")
    assert gone.memory.orders == [], said(gone)


def test_a_part_of_a_dish_given_up_where_it_is_named_is_not_served():
    for line, parts in (("あ、やっぱ卵やめて、牛すじにしてもらえる？", ["牛すじ"]),
                        ("大根はいらんって。卵と牛すじで", ["卵", "牛すじ"])):
        *_, swapped = visit("おでんください。卵と大根で", line)
        assert swapped.context["order"]["parts"] == parts, (line, swapped.context)
    # the parts asked for are all served
    *_, asked = visit("おでんください。卵と牛すじで")
    assert asked.context["order"]["parts"] == ["卵", "牛すじ"], asked.context


def test_a_service_turned_down_with_a_change_of_mind_comes_off():
    *_, wrapped = shop("ひまわり一本ください", "ラッピングお願いします", "ラッピングはやっぱりいいです。ひまわりだけでおねがいします")
    assert wrapped.memory.orders == ["ひまわり"], said(wrapped)
    *_, bar = visit("水割りください", "お通しください", "お通しはやっぱりいいです。水割りだけで")
    assert bar.memory.orders == ["水割り"], said(bar)


def test_an_item_asked_for_with_a_polite_wish_is_ordered():
    *_, flowers = shop("こんにちは", "いえ、ですから、かすみ草を五本いただきたいんです。")
    assert flowers.memory.orders == ["かすみ草"] * 5, said(flowers)
    *_, dish = visit("こんばんは", "ナポリタンをいただきたいです")
    assert dish.memory.orders == ["ナポリタン"], said(dish)
    # told in the past, it orders nothing
    *_, had = visit("こんばんは", "ナポリタンはさっきいただきました")
    assert had.memory.orders == [], said(had)


def test_a_line_that_takes_one_item_off_and_adds_another_does_both():
    *_, changed, bill = shop("ひまわりを10本ください", "全部でいくらになります？",
                             "五千円超えちゃうな…ひまわりを1本減らして、スズランを1本足して", "お会計お願いします")
    assert changed.memory.orders.count("ひまわり") == 9 and changed.memory.orders.count("スズラン") == 1
    assert "3,650" in changed.answer.text and "3,650" in bill.answer.text, (changed.answer.text, bill.answer.text)
    *_, bar = visit("ハイボール2杯ください", "ハイボール1杯キャンセルして、水割りを1杯追加で")
    assert sorted(bar.memory.orders) == ["ハイボール", "水割り"], bar.context
    # the one taken off is never added back, and a count taken off alone adds nothing
    *_, fewer = visit("ハイボール2杯ください", "ハイボール1杯減らして")
    assert fewer.memory.orders == ["ハイボール"], fewer.context


def test_an_item_said_with_a_count_of_more_beside_a_cancel_is_added_not_taken_back():
    *_, swapped = shop("赤い薔薇を1本とスズランを1本とかすみ草を2本ください", "やっぱスズランやめて、薔薇もう一本にしてもいい？")
    assert sorted(swapped.memory.orders) == ["かすみ草", "かすみ草", "赤い薔薇", "赤い薔薇"], swapped.context
    assert "1,400" in swapped.answer.text, swapped.answer.text
    *_, bar = visit("水割りとハイボールください", "やっぱハイボールやめて、水割りもう一杯にしてもいい？")
    assert bar.memory.orders == ["水割り", "水割り"], bar.context


def test_a_total_said_as_what_the_tab_holds_orders_nothing():
    *_, kept = visit("ハイボールください", "ハイボールは一杯だけにしとこ。明日も朝から会議なんで…はぁ")
    assert kept.memory.orders == ["ハイボール"] and (kept.context or {}).get("order") is None, kept.context
    *_, flowers = shop("かすみ草を3本ください", "かすみ草は3本だけにしとこ。予算もあるし")
    assert flowers.memory.orders == ["かすみ草"] * 3, flowers.context
    # a larger total still adds
    *_, more = shop("かすみ草を3本ください", "かすみ草は5本にしてください")
    assert more.memory.orders == ["かすみ草"] * 5


def test_a_thing_declined_in_a_later_sentence_or_sent_back_is_not_served():
    *_, later = visit("ビールください", "いや話じゃなくてさ、お通し。小鉢のやつ。今日はなしでいいってこと")
    assert later.memory.orders == ["ビール"], later.context
    *_, wrap = shop("かすみ草を3本ください", "ラッピング。リボンのやつ。今日はなしでいいってこと")
    assert wrap.memory.orders == ["かすみ草"] * 3, wrap.context
    *_, back = visit("ビールください", "お通しください", "ドアの話はいいからさ、ママ、このきんぴら下げてくんない？")
    assert back.memory.orders == ["ビール"], back.context
    # the sound turned down is no dish sent back
    *_, sound = visit("ビールください", "お通しください", "ママ、音量下げてください")
    assert sound.memory.orders == ["ビール", "お通し"], sound.context


def test_a_thing_said_to_be_fine_without_after_an_offer_is_declined():
    # 「ナポリタン、食べていく？」 offered the dish: 「ナポリタンはいい。」 turns it down, 「ナポリタンでいい」 takes it
    people = ["赤尾妙子", "神楽坂葵"]
    for line, ordered in (("ナポリタンはいい。腹いっぱいだ。", False), ("ナポリタンはもういいです", False),
                          ("ナポリタンでいい", True), ("うん、ナポリタン", True)):
        found = reference().orders.read(line, people, None, "赤尾妙子", offered="ナポリタン", offer_open=True)
        assert (found is not None and found.kind == "item") == ordered, (line, found)
    found = florist().orders.read("ラッピングはいい。そのままで", ["千代", "颯太"], None, "千代", offered="ラッピング",
                                  offer_open=True)
    assert found is None, found
    # praise is no decline
    *_, praised = visit("ナポリタンください", "ナポリタンはいいね。懐かしい味")
    assert praised.memory.orders == ["ナポリタン"], praised.context


def test_leaving_soon_beside_an_order_is_not_leaving_now():
    for world, order, item in ((reference(), "ビール一杯。すぐ帰る", "ビール"), (florist(), "かすみ草一本ください。すぐ帰るね", "かすみ草")):
        *_, soon = play(world, order)
        assert soon.memory.orders == [item] and not soon.step.state.ended, (said(soon), soon.context)


def test_an_item_given_up_in_one_sentence_for_one_chosen_in_the_next_is_swapped():
    *_, bar = visit("ビールください", "ハイボール一つ。", "やっぱりハイボールやめる。ウーロン茶にしてくれ。")
    assert bar.memory.orders == ["ビール", "ウーロン茶"] and bar.context["order"]["swapped"] == "ハイボール", bar.context
    *_, flowers = shop("スズランを1本ください", "やっぱりスズランやめる。かすみ草にして。")
    assert flowers.memory.orders == ["かすみ草"], flowers.context


def test_paying_promised_for_something_asked_of_a_character_asks_for_no_bill():
    *_, job = visit("水割りください", "仕事の話だよ、ちゃんとお代は払うから、店のポップ描いてくんねえかって")
    assert "money" not in (job.context or {}) and not job.step.state.ended, job.context
    *_, lesson = shop("かすみ草を1本ください", "ちゃんとお金は払うから、花束の作り方教えてくれない？")
    assert "money" not in (lesson.context or {}), lesson.context
    # paying asked for outright still brings the bill
    *_, bill = visit("水割りください", "払うから、お会計して")
    assert "bill#" in bill.context["money"], bill.context


def test_a_thing_told_as_served_elsewhere_is_no_order_and_paying_talked_of_is_no_bill():
    *_, told = visit("水割りください", "夏のおでん、俺は賛成だね。うちも夏に汁粉出してんだけど、意外と出るんだよ")
    assert told.memory.orders == ["水割り"] and (told.context or {}).get("order") is None, told.context
    *_, own = shop("かすみ草を1本ください", "うちの店でもひまわり出してんだけど、夏は人気だよ")
    assert own.memory.orders == ["かすみ草"], own.context
    # asked to be brought out, it is ordered (「出してんか」 asks, in Kansai speech)
    *_, asked = visit("ハイボール出してんか")
    assert asked.memory.orders == ["ハイボール"], asked.context
    *_, talk = visit("水割りください", "違う違う、まだ会計じゃねえって！ 葵ちゃんにデザイン代払うって話だよ")
    assert "money" not in (talk.context or {}), talk.context
    *_, thanks = shop("かすみ草を1本ください", "まだ会計じゃないって！颯太くんにお礼払うって話だよ")
    assert "money" not in (thanks.context or {}), thanks.context


def test_a_denial_takes_back_only_an_item_named_before_it():
    # (「お酒飲んでない」 denies no item; the item named after it, with しか, is what was ordered — both scenarios)
    *_, kept = visit("ウーロン茶とナポリタンください", "いや、俺今日お酒飲んでないっすよ笑 ウーロン茶しか頼んでないです")
    assert sorted(kept.memory.orders) == ["ウーロン茶", "ナポリタン"], kept.memory.orders
    *_, kept_flowers = shop("こんにちは", "ひまわりを1本ください", "いや、今日は寄り道してないですよ笑 ひまわりしか買ってないです")
    assert kept_flowers.memory.orders == ["ひまわり"], kept_flowers.memory.orders
    # an item named before the denial is taken back
    *_, denied = visit("ウーロン茶とナポリタンください", "ナポリタンは頼んでないよ")
    assert denied.memory.orders == ["ウーロン茶"], denied.memory.orders


def test_an_item_made_another_thing_by_a_suffix_is_no_order():
    # (包み方 is a way of wrapping, おでん屋 a shop: neither puts the item on the tab — both scenarios)
    *_, asked = shop("こんにちは", "颯太さん、花瓶なしで飾れる包み方ってあります？")
    assert asked.memory.orders == [], (asked.memory.orders, said(asked))
    *_, compared = visit("近所のおでん屋さんより美味しそうだね")
    assert compared.memory.orders == [], (compared.memory.orders, said(compared))
    *_, ordered = shop("こんにちは", "ラッピングお願いします")
    assert ordered.memory.orders == ["ラッピング"]


def test_a_status_asked_alone_asks_after_the_last_order_and_orders_nothing_more():
    # (「もうすぐですか？」「まだかな？」 name nothing: what they ask after is what was ordered last — both scenarios)
    *_, asked = visit("ナポリタンください", "あ、ナポリタンいい匂いしてきた。もうすぐですか？")
    assert asked.context["order"]["kind"] == "coming" and asked.memory.orders == ["ナポリタン"], asked.context
    *_, waiting = shop("ひまわりを1本ください", "まだかな？")
    assert waiting.context["order"]["kind"] == "coming" and waiting.memory.orders == ["ひまわり"], waiting.context


def test_asking_whether_a_thing_is_on_the_bill_asks_for_no_bill():
    *_, asked = visit("ハイボールください", "お水はタダやんな？会計に入ってへんよな？")
    assert "また来てくれる" not in said(asked) and asked.step.state.ended is False, said(asked)


def test_an_item_named_alone_to_a_characters_wh_question_answers_it_and_orders_nothing():
    # (「何の花が知りたいの？」 then 「スズラン」: the flower whose meaning was asked, no sale)
    *_, answered = shop("こんにちは", "スズランの花言葉は何ですか", "スズラン")
    assert answered.memory.orders == [] and "スズラン" in said(answered), (answered.memory.orders, said(answered))
    # to an offer, the item named alone orders it (the reference's 「何にする？」)
    *_, ordered = visit("こんばんは", "何がある？", "ハイボール")
    assert ordered.memory.orders == ["ハイボール"], (ordered.memory.orders, said(ordered))


def test_an_order_told_as_what_the_talk_is_about_orders_nothing():
    # (「夏でもおでん出してほしいって話！」: an opinion on the menu, 〜って話 — both scenarios)
    *_, opinion = visit("こんばんは", "いや部屋はどうでもよくて（笑）夏でもおでん出してほしいって話！")
    assert opinion.memory.orders == [], (opinion.memory.orders, said(opinion))
    *_, florist_opinion = shop("こんにちは", "いや、冬でもひまわり置いてほしいって話ですよ")
    assert florist_opinion.memory.orders == [], (florist_opinion.memory.orders, said(florist_opinion))
    *_, wish = visit("こんばんは", "おでん出してほしいな")
    assert wish.memory.orders == ["おでん"]


def test_an_item_said_bare_as_what_a_thing_is_orders_nothing():
    # (「結婚式のブーケがスズラン。」: the item is what the subject before it is, told — both scenarios)
    *_, told = shop("こんにちは", "へえ、結婚式のブーケがスズラン。旦那さんが選んだの？")
    assert told.memory.orders == [], (told.memory.orders, said(told))
    *_, bar = visit("こんばんは", "ママの十八番がナポリタン。意外だな")
    assert bar.memory.orders == [], (bar.memory.orders, said(bar))
    # said alone, or with a person as the one it is for, it orders
    *_, bare = visit("こんばんは", "じゃあ、ビール。")
    assert bare.memory.orders == ["ビール"]
    *_, each = visit("こんばんは", "彼女がウーロン茶、僕がビール。")
    assert "ビール" in each.memory.orders


def test_an_item_said_after_its_count_and_no_more_is_what_a_thing_asked_after_is_of():
    # (「俺の花束は？ひまわり十二本の」: the bouquet paid for, described — no second bouquet)
    *_, asked = shop("ひまわりを二本ください", "お会計で", "700円です", "それで、私の花束は？ひまわり二本の")
    assert asked.memory.orders == ["ひまわり", "ひまわり"] and asked.memory.paid == 2, (asked.memory.orders, said(asked))
    *_, waiting = visit("ビールを一杯ください", "さっきのまだかな？ビール一杯の")
    assert waiting.memory.orders == ["ビール"], (waiting.memory.orders, said(waiting))


def test_a_count_said_of_each_item_of_a_list_is_booked_for_each():
    *_, flowers = shop("ひまわりとスズランを二本ずつもらおうかな")
    assert Counter(flowers.memory.orders) == {"スズラン": 2, "ひまわり": 2}, flowers.memory.orders
    *_, one_each = shop("スズランとかすみ草を一つずつください")
    assert Counter(one_each.memory.orders) == {"スズラン": 1, "かすみ草": 1}, one_each.memory.orders
    *_, drinks = visit("ビールとウーロン茶を二杯ずつください")
    assert Counter(drinks.memory.orders) == {"ウーロン茶": 2, "ビール": 2}, drinks.memory.orders


def test_goods_named_again_alone_stay_as_the_basket_holds_them_and_a_drink_again_is_another():
    # (a player unsure they were heard names the flower again and again: one in the basket)
    *_, again = shop("スズランを一つください", "スズランにします", "スズランがほしいんです")
    assert again.memory.orders == ["スズラン"], (again.memory.orders, said(again))
    *_, more = shop("スズランを一つください", "スズランもう一本")
    assert more.memory.orders == ["スズラン", "スズラン"], more.memory.orders
    *_, drink = visit("ビールください", "ビールください")
    assert drink.memory.orders == ["ビール", "ビール"], drink.memory.orders


def test_a_new_total_said_down_beside_another_items_new_total_sets_both():
    for line in ("じゃあひまわり十二本にして、かすみ草は二本に減らして", "かすみ草は二本に減らして、ひまわりは十二本にして"):
        *_, changed = shop("ひまわりを十本と、かすみ草を三本ください", line)
        orders = changed.memory.orders
        assert (orders.count("ひまわり"), orders.count("かすみ草")) == (12, 2), (line, orders)
    *_, fewer = shop("ひまわりを十本と、かすみ草を三本ください", "ひまわり8本キャンセル")
    assert (fewer.memory.orders.count("ひまわり"), fewer.memory.orders.count("かすみ草")) == (2, 3)
    *_, drinks = visit("水割りを三杯ください", "水割りは二杯に減らして")
    assert drinks.memory.orders == ["水割り", "水割り"], drinks.memory.orders


def test_a_promise_to_come_again_after_other_talk_is_no_goodbye_even_with_the_tab_settled():
    talk = "それ聞けてうれしいです。この商店街にお花屋さんがあってほしいし。ご近所なので、また買いに来ますね"
    *_, stays = shop("ひまわりを一本ください", "お会計で", "350円です", talk)
    assert not stays.step.state.ended, said(stays)
    *_, bar = visit("ビールください", "お会計", "600円です", "この店が続いてくれたらうれしいな。近いから、また寄りますね")
    assert not bar.step.state.ended, said(bar)
    # alone, with a lead of leaving, or after words that close the visit, it is the goodbye
    for line in ("また来ますね", "じゃあ、また来ますね", "美味しかった！また来ます", "今日はありがとうございました。また来ますね"):
        *_, bye = visit("ビールください", "お会計", "600円です", line)
        assert bye.step.state.ended, (line, said(bye))


def test_the_making_of_an_item_asked_after_as_going_on_orders_no_second():
    # (「ナポリタンはもう作ってくれてるのかな」: the one ordered asked after, not a second plate)
    *_, asked = visit("ナポリタンください", "まあいいや。ナポリタンはもう作ってくれてるのかな")
    assert asked.memory.orders == ["ナポリタン"] and asked.context["order"]["kind"] == "coming", asked.memory.orders
    *_, ready = visit("おでんください", "おでん、もう用意してもらってます？")
    assert ready.memory.orders == ["おでん"], ready.memory.orders
    *_, wrapped = shop("ひまわりを三本ください", "ひまわり、もう包んでくれてます？")
    assert wrapped.memory.orders.count("ひまわり") == 3, wrapped.memory.orders
    # asked for, it is made: 「作ってくれる？」
    *_, made = visit("こんばんは", "ナポリタン作ってくれる？")
    assert made.memory.orders == ["ナポリタン"], made.memory.orders
    # (asked for with もらえる, it is ordered: 「きれいに包んでもらえる？」「ビールもらえる？」)
    *_, wrap = shop("ひまわりください", "きれいに包んでもらえる？")
    assert "ラッピング" in wrap.memory.orders, wrap.memory.orders
    *_, beer = visit("こんばんは", "ビールもらえる？")
    assert beer.memory.orders == ["ビール"], beer.memory.orders


def test_a_service_asked_for_with_no_goods_bought_is_offered_at_its_price_and_a_denial_takes_it_off():
    # (「配達ってお願いできますか？」 before any flower: whether it is done, at its price — a yes books it)
    _, asked, yes = shop("こんにちは", "あの、配達ってお願いできますか？うちのカフェ、ここから歩いて5分くらいなんです。",
                         "はい、お願いします")
    assert asked.memory.orders == [] and "500" in said(asked), (asked.memory.orders, said(asked))
    assert yes.memory.orders == ["配達"], yes.memory.orders
    # with flowers bought it is asked for them
    *_, booked = shop("ひまわりを3本ください", "ラッピングってお願いできますか？")
    assert "ラッピング" in booked.memory.orders
    # said not to have been asked for (お願いしてない), it comes off — on both scenarios
    *_, denied = shop("ひまわりを3本ください", "あの、配達ってお願いできますか？", "あれ、配達はお願いしてないですよ。今日は自分で持って帰ります。")
    assert denied.memory.orders == ["ひまわり"] * 3, (denied.memory.orders, said(denied))
    *_, bar = visit("ビールください", "ナポリタンください", "ナポリタンはお願いしてないですよ")
    assert bar.memory.orders == ["ビール"], (bar.memory.orders, said(bar))
    # a service asked for on a day told before (その日) is asked of that day: nothing goes on today's tab
    *_, later = shop("ひまわりを3本ください", "オープンは来月の15日なんです。その日にお花を届けてもらうことってできますか？")
    assert "配達" not in later.memory.orders, later.memory.orders


def test_an_item_named_then_a_count_alone_is_that_many_of_it_and_a_kansai_correction_swaps():
    # (「ほな無難にひまわりにしとこか。三本ください」: the count is of the item just chosen, not of the last order)
    *_, counted = shop("今日はどんな花がありますか？", "スズランを一本ください", "ほな無難にひまわりにしとこか。三本ください")
    assert Counter(counted.memory.orders) == {"スズラン": 1, "ひまわり": 3}, counted.memory.orders
    *_, drinks = visit("ビールください", "じゃあハイボールにしようか。二杯ください")
    assert Counter(drinks.memory.orders) == {"ビール": 1, "ハイボール": 2}, drinks.memory.orders
    # 「スズランやのうてひまわり」 reads as じゃなくて: the one given up comes off
    *_, swapped = shop("スズランを三本ください", "ちゃうちゃう、スズランやのうてひまわり！ひまわり三本や")
    assert swapped.memory.orders == ["ひまわり"] * 3, swapped.memory.orders
    # 「どないです？」 asks how it is — no ないです of asking for it
    *_, asked = shop("今日はどんな花がありますか？", "スズランはどないです？あれ可愛らしいけど、お見舞いにええんかな")
    assert asked.memory.orders == [], asked.memory.orders


def test_an_order_mused_over_then_doubted_changes_nothing_and_whether_there_is_one_orders_nothing():
    # (「四本にしようかな…いや、四って縁起悪いですか？」: still weighed; said again, it is the order)
    *_, doubted, decided = shop("赤い薔薇を三本ください", "うーん、やっぱり薔薇はもう一本増やして四本にしようかな…いや、四って縁起悪いですか？",
                                "じゃあ四本にします")
    assert doubted.memory.orders == ["赤い薔薇"] * 3, doubted.memory.orders
    assert decided.memory.orders == ["赤い薔薇"] * 4, decided.memory.orders
    *_, bar = visit("ビールください", "ハイボールにしようかな。でも濃いのかな？")
    assert bar.memory.orders == ["ビール"], bar.memory.orders
    # 「おでんもあるの？」 asks whether there is: nothing on the tab (「おでんある？」 in a bar still asks for it)
    *_, asked = visit("ビールください", "なるほどね〜。おでんもあると？そこの鍋、おでんやろ？")
    assert asked.memory.orders == ["ビール"], (asked.memory.orders, said(asked))
    *_, florist_asked = shop("こんにちは", "スズランもあるの？")
    assert florist_asked.memory.orders == [], florist_asked.memory.orders


def test_the_same_one_recognised_is_no_order_and_a_denial_pointing_at_the_one_served_takes_off_only_it():
    # (「あ、同じやつか（笑）」: the same film recognised — no second helping of the last order)
    *_, recognised = visit("おでんください", "あ、同じやつか（笑）。じゃあDVD借りて帰りに観るわ。")
    assert recognised.memory.orders == ["おでん"], recognised.memory.orders
    *_, again = visit("おでんください", "同じのください")
    assert again.memory.orders == ["おでん", "おでん"], again.memory.orders
    # 「…これお金かかると？」 of the plate just served: that one comes off, the one had before stays
    *_, pointed = visit("おでんください", "ビールください", "おでん、もう一皿", "え、おでん頼んでないけど…これお金かかるの？")
    assert Counter(pointed.memory.orders) == {"おでん": 1, "ビール": 1}, pointed.memory.orders
    *_, denied = visit("おでんください", "ビールください", "おでん、もう一皿", "おでんは頼んでないです")
    assert denied.memory.orders == ["ビール"], denied.memory.orders


def test_a_count_said_with_a_verb_of_having_had_orders_nothing_and_a_denial_naming_nothing_is_of_the_one_just_served():
    # (「大根とたまごとはんぺん、三ついただきましたけれど、二つ分でよろしいの？」: what was had, told — no new plate)
    *_, told = visit("大根と卵とはんぺんください", "ビールください",
                     "おでんは大根とたまごとはんぺん、三ついただきましたけれど、二つ分でよろしいの？")
    assert Counter(told.memory.orders) == {"おでん": 1, "ビール": 1}, told.memory.orders
    *_, flowers = shop("ひまわりを2本ください", "ひまわり、二本もらいましたけど、包みはどうなってます？")
    assert flowers.memory.orders == ["ひまわり", "ひまわり"], flowers.memory.orders
    # 「注文したのではありませんよ…それは結構です」 right after a plate was served: that plate comes off
    *_, denied = visit("ウーロン茶ください", "大根ください", "ビールください", "おでん、もう一皿",
                       "あらあら、注文したのではありませんよ。もう食べ終わりましたから、それは結構です。お会計はいくらになりますか。")
    assert Counter(denied.memory.orders) == {"ウーロン茶": 1, "おでん": 1, "ビール": 1}, denied.memory.orders
