"""The player picking one of the options a character just asked about — by a word of the option, by order, or
with choosing words — and yes, no or neither to a question (chalicelib/conversation/picks.py, questions.py), on a
small scenario of its own."""
from __future__ import annotations

import copy
from typing import Any

from chalicelib.conversation import Conversation
from chalicelib.conversation.picks import asks_which, options_asked, picked
from chalicelib.conversation.questions import only_asks_back, polarity
from tests.director.playing import L, conversation_of, play
from tests.director.playing import answered as said

HARBOUR: dict[str, Any] = {
    "title": "港の酒場",
    "start": {"place": "酒場"},
    "characters": [
        {"id": "マスター", "name": "マスター", "aliases": ["マスター"], "expressions": ["neutral", "smile"],
         "knowledge": [
             {"info": "今夜かける候補は二枚", "condition": "", "words": ["候補", "どんなレコード", "迷って"],
              "lines": [L("古いブルースのレコードと、港の夜を歌った演歌の盤。どっちがいいと思う？")]},
             {"info": "今夜の一枚はブルースに決める", "condition": "", "choice": "今夜の一枚",
              "words": ["ブルースがいい", "ブルースにしよ", "ブルースの方"], "lines": [L("ブルースか。渋いね、決まりだ。", "smile")]},
             {"info": "今夜の一枚は演歌に決める", "condition": "", "choice": "今夜の一枚",
              "words": ["演歌がいい", "演歌にしよ", "演歌の方"], "lines": [L("演歌だな。よし、決まりだ。", "smile")]},
             {"info": "傘を二本貸せる", "condition": "", "words": ["傘"],
              "lines": [L("傘なら、赤い番傘と紺のこうもり傘がある。どっちにする？")]},
             {"info": "店を変えるのは気が進まない", "condition": "意図:今のままでいい",
              "lines": [L("……あんたも変えるなって言うのかい。", "neutral")]},
             {"info": "変えるなら、まず照明から", "condition": "", "words": ["どう変え", "何を変え", "照明"],
              "lines": [L("変えるなら、まずは照明からかな。", "smile")]},
         ],
         "reactions": [{"act": "挨拶", "lines": [L("いらっしゃい。", "smile")]},
                       {"act": "同意", "lines": [L("だろう？", "smile")]},
                       {"act": "反対", "lines": [L("そうかね。")]},
                       {"act": "質問", "lines": [L("さあね。")]}],
         "fallbacks": [{"id": "マスター-1", "text": "ふうん。"}],
         "echo": {"lines": [L("{word}か。")]}},
    ],
    "places": [{"id": "酒場", "aliases": ["店"], "people": ["マスター"], "responder": "マスター"}],
    "intents": [
        {"id": "席", "description": "どこに座るか", "words": ["席", "窓際", "カウンター", "座"], "name": "席のこと"},
        {"id": "今のままでいい", "description": "何も変えず、今のままの店がいいと言う",
         "examples": ["何も変えなくていいと思う", "今のままがいちばんだよ"],
         "words": ["今のまま", "このまま", "そのまま", "変えな"], "name": "今のままの話"},
    ],
    "scenes": [{"place": "酒場", "lines": [
        {"id": "S1", "speaker": "マスター", "condition": "開始", "text": "いらっしゃい。"},
        {"id": "S2", "speaker": "マスター", "condition": "意図:席", "text": "窓際とカウンター、どっちに座る？",
         "replies": {"other": [L("はいよ、そっちね。どうぞ。", "smile")]}},
    ]}],
}


def harbour() -> Conversation:
    return conversation_of(copy.deepcopy(HARBOUR), "harbour.json")


RECORDS = "古いブルースのレコードと、港の夜を歌った演歌の盤。どっちがいいと思う？"


# ---------------------------------------------------------------- the options a question names

def test_a_question_that_asks_which_lists_its_options_in_order():
    assert asks_which(RECORDS) and asks_which("ナポリタンとおでん、どっちにする？")
    assert not asks_which("どっちも捨てがたいんだよね。") and not asks_which("何か飲む？")
    asked = options_asked(RECORDS)
    assert asked is not None and asked.ordered and len(asked.options) == 2
    assert {"ブルース", "レコード"} <= asked.options[0].words and {"港", "夜", "演歌"} <= asked.options[1].words
    for question, count in (("昭和歌謡か映画音楽か、どっちが合うと思う？", 2), ("コーヒーか紅茶、どちらになさいます？", 2),
                            ("ナポリタン、おでん、カレー、どれにする？", 3), ("海と山ならどっち派？", 2),
                            ("ねえ、お店の写真なんだけど、ドアのとカウンターの、どっち？", 2)):
        found = options_asked(question)
        assert found is not None and len(found.options) == count, question
    # a conditional と lists nothing (「撮ると、ちょっと怖い」)
    assert options_asked("赤いドアを正面から撮ると、ちょっと怖いんだよね。どっちがいい？") is None


def test_a_line_picks_the_one_option_it_names_by_word_by_order_or_by_choosing():
    asked = options_asked(RECORDS)
    assert asked is not None
    blues, enka = asked.options
    for text, option in (("港のほうにします", enka), ("夜の方が好きだな", enka), ("演歌で決定！", enka), ("演歌で！", enka),
                         ("二枚目です。後から言ってた方", enka), ("後者かな", enka), ("ブルースよりは演歌かな", enka),
                         ("レコードのほうを選びます", blues), ("最初のほうがいいと思う", blues), ("一枚目で", blues),
                         ("ブルースじゃない？", blues), ("やっぱりブルース", blues), ("演歌じゃなくてブルース", blues),
                         ("演歌もいいけど、ブルースかな", blues), ("演歌は重いからブルースで", blues),
                         ("ブルースのレコードで！決定です", blues)):
        assert picked(text, asked) is option, text
    # both, neither, a question, something else said of it, a turning down: no pick
    for text in ("ブルースも演歌もいいね", "どっちも捨てがたい", "どっちでもいいよ", "ブルースって誰が歌ってるの？",
                 "演歌はちょっと苦手で", "港町に住んでたことがあるんですよ", "レコード、今度僕が持ってきましょうか",
                 "演歌をかけたら常連さん喜ぶかな", "ブルースの歌手って誰だったっけ"):
        assert picked(text, asked) is None, text


# ---------------------------------------------------------------- played

def test_a_pick_by_a_word_of_the_question_settles_the_choice_entry():
    # 港 is said only in the question, not among the entry's words: it still names the 演歌 option
    for pick in ("港の夜のほうにします", "二枚目の方で。後から言ったやつ", "演歌で決定です"):
        _, answer = play(harbour(), "今夜の候補って？", pick)
        assert said(answer) == "演歌だな。よし、決まりだ。", pick
        assert answer.context["picked"]["entry"] == 2
    _, first = play(harbour(), "どんなレコードで迷ってるの？", "最初に言ったほうが好き")
    assert said(first) == "ブルースか。渋いね、決まりだ。"


def test_a_line_that_picks_nothing_settles_nothing():
    for text in ("どっちも捨てがたいね", "ブルースって誰の曲？"):
        _, answer = play(harbour(), "今夜の候補って？", text)
        assert "決まり" not in said(answer), text
        assert "picked" not in answer.context


def test_a_pick_without_an_entry_gets_the_questions_reply_or_agreement():
    # a scripted line with a reply for an answer of what
    _, seat = play(harbour(), "どこの席に座ればいい？", "窓際で！")
    assert said(seat) == "はいよ、そっちね。どうぞ。" and seat.context["picked"]["option"] == "窓際"
    # a knowledge line with no replies: the asker agrees
    _, umbrella = play(harbour(), "傘、貸してもらえる？", "紺のほうにします")
    assert said(umbrella) == "だろう？" and umbrella.context["picked"]["option"] == "紺のこうもり傘"


def test_a_pick_confirmed_by_a_question_or_followed_by_a_reason_still_picks():
    asked = options_asked(RECORDS)
    assert asked is not None
    blues, enka = asked.options
    assert picked("だから、かけるのは演歌の盤。それで決まりでいい？", asked) is enka
    assert picked("ブルースのほうがいい。演歌は重いってマスターも言ってたし。", asked) is blues
    # a question that only asks stays no pick
    assert picked("演歌の盤って、それで決まりなの？", asked) is None


def test_which_one_stays_open_a_few_turns_and_an_option_is_never_said_unpicked():
    # a turn about something else between the question and the pick
    _, _, pick = play(harbour(), "今夜の候補って？", "照明はどう変えるの？", "じゃあ演歌の盤で決まりでいい？")
    assert said(pick) == "演歌だな。よし、決まりだ。" and pick.context["picked"]["entry"] == 2
    # too long after, nothing is picked; and a line sharing 決まり never says an option it did not pick
    *_, late = play(harbour(), "今夜の候補って？", "照明はどう変えるの？", "照明かあ", "いいね", "どう、決まりそう？")
    assert "決まり" not in said(late) and "picked" not in late.context


# ---------------------------------------------------------------- yes, no, neither

def test_saying_one_will_listen_is_a_yes():
    for text in ("伺います", "理由があるなら、もちろん伺いますけど", "聞きますよ", "ぜひ聞かせて", "ぜひ"):
        assert polarity(text, "request") == "yes", text
        assert polarity(text, "yes_no") == "yes", text
    for text in ("伺いません", "聞かないよ"):
        assert polarity(text, "request") != "yes", text


def test_a_question_back_takes_no_stance():
    assert only_asks_back("マスターはどう変えたいの？照明はそのままで、椅子とか？")
    assert not only_asks_back("そのままでいいと思うけど、マスターはどう思う？")
    assert not only_asks_back("わざわざ変える必要ないんじゃない？")
    assert not only_asks_back("このままがいいよ。マスターはどう思う？")
    _, back = play(harbour(), "こんばんは", "マスターはどう変えたいの？照明はそのままとか？")
    assert "変えるなって" not in said(back) and back.context.get("asked_not_stance") == "意図:今のままでいい"
    _, stance = play(harbour(), "こんばんは", "このままがいちばんだよ")
    assert said(stance) == "……あんたも変えるなって言うのかい。"


def test_on_the_reference_a_photo_picked_after_a_turn_between_settles_that_photo_and_never_the_other():
    from chalicelib.scenario import PlayerInput
    from tests.director.playing import reference
    conversation = reference()
    [greeted] = play(conversation, "こんばんは")
    state = conversation.rules.handle(PlayerInput.move("控え室"), greeted.step.state).state
    *_, reason, confirm = play(conversation, "写真見せて", "うん、選ぶよ", "どれとどれで迷ってるの？",
                               "ドアの色っていつから赤いの？", "載せるのはカウンターの写真。それで決定でいい？",
                               state=state, memory=greeted.memory)
    assert "カウンターね" in said(confirm) and "ドアのほう" not in said(confirm)
    # a line sharing 決まり with an option's line, picking nothing, never says that option
    *_, shared = play(conversation, "写真見せて", "うん、選ぶよ", "へえ", "なるほど", "うーん", "決まりってこと？",
                      state=state, memory=greeted.memory)
    assert "決まり！" not in said(shared), said(shared)
