"""Questions about the bill: what it holds, answered from what was served, never taken as paying.

「内訳は？」「何が入ってるの？」「高くない？」「2600円！？」 ask about the bill; the answer names each item
served with its price and the sum (the menu's `breakdown` lines, `{items}` and `{total}`), so a player can see
it adds up.  Only paying words (お会計, 払います, money handed over) pay.

The player is the one who knows what they ordered: an item taken back (「2杯目は頼んでない」「ハイボールは2杯しか
頼んでないよ」「ナポリタン取り消して」, 「キャンセル」 right after an order) comes off what is counted, and the
breakdown then says what remains.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from ..interpret.asking import is_question
from ..interpret.text import nfkc
from .facts import sentences

# What asks what the bill holds or doubts it (not what pays it).
_ABOUT_BILL = re.compile(r"内訳|明細|何が入って|なにが入って|何の(?:お金|代金|分|料金)|何代|計算(?:合って|あって|違|ちが|おかし|して)"
                         r"|合って(?:る|ます)[？?か]|間違って(?:る|ない|ません)|高(?:くない|すぎ|過ぎ|い(?:よ|っす|です)?\s*[？?!！])"
                         r"|(?:なんで|何で|どうして)[^。]{0,12}(?:円|そんな|こんな)|どういう(?:計算|こと)|ぼったくり"
                         # 「水割りしか頼んでないんだけど」: what was ordered said against what is counted
                         r"|しか(?:頼|たの|注文)|(?:頼|たの)んで(?:ない|ません)(?:のに|けど|んだけど|んすけど|んですけど)"
                         # 「4杯目は頼んでないし飲んでない。取り消して」「キャンセル！」: something counted taken back
                         r"|(?:頼|たの)んで(?:ない|ません)|注文して(?:ない|ません)|(?:飲|の)んで(?:ない|ません)|(?:食|た)べて(?:ない|ません)"
                         r"|取り消|とりけ|キャンセル|請求から"
                         # 「それ俺の勘定につくのか？」: whether something is counted
                         r"|(?:勘定|会計|お代|伝票|請求|お会計)に(?:つく|付く|入る|含ま|乗る|のる)(?:の|んです)?(?:か|かな)?\s*[？?]")
# An amount said back in surprise (「2600円！？」「え、2600？」).
_AMOUNT_ASKED = re.compile(r"\d[\d,]*\s*(?:円)?\s*(?:[!！]*[？?]|って[？?]|も[？?!！]|も(?:する|取る|とる)"
                           r"|(?:っす|です|だ)?(?:よね|じゃない|でしょ|のはず))"     # 「1500っすよね」: the sum checked
                           r"|^(?:え|えっ|ええ|は|はぁ|はあ|マジ|まじ)[、,!！っ?？\s]*\d[\d,]*\s*円?\s*[!！?？]")
DEFAULT_BREAKDOWN = "{items}で、{total}円です。"
# Said when an item taken back leaves nothing on the bill.
DEFAULT_TAKEN_BACK = "失礼しました、{item}は取り消しておきますね。"

# Taking back: cancelling words, or a claim of not having ordered (「頼んでない」「頼んでないのに」, not the question
# 「頼んでないよね？」 nor 「しか頼んでない」, which says what was ordered).
_CANCEL = re.compile(r"取り消|とりけ|キャンセル|請求から|(?:外|はず|抜)して")
_NOT_ORDERED = re.compile(r"(?<!しか)(?:(?:頼|たの)んで|注文して|(?:飲|の)んで|(?:食|た)べて)(?:ない|ません|ねえ|ねー)"
                          r"(?![^。！!]{0,4}(?:よね|っけ|でしょ|か[？?]|かな))")
_KANJI_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九十")}
_NUMBER = r"(\d{1,2}|[一二三四五六七八九十]{1,2})"
# 「2杯目は頼んでない」: the Nth and after were not ordered
_ORDINAL = re.compile(_NUMBER + r"\s*(?:杯|本|皿|個|つ|品)?目")
# 「2杯しか頼んでない」「一杯だけだよ」: N were ordered
_ONLY_COUNT = re.compile(_NUMBER + r"\s*(?:杯|本|皿|個|つ|品)\s*(?:しか|だけ)")


# The bill asked for only to see it (「今のお勘定、確認させてください。まだ帰りませんよ」「途中の会計いくら？」): the
# running total, not paying
_BILL_WORD = re.compile(r"会計|勘定|お代|合計|合わせて|全部で|トータル|いくら")
_RUNNING = re.compile(r"確認|途中|今の|今まで|今んとこ|今のところ|現時点|いったん|一旦|まだ帰(?:ら|り|れ)|まだ飲(?:み|む|め)"
                      r"|まだいる|まだ居")
# An amount of money named (「2,800円」「3500」): with a question, the sum asked about (「2,800円って何杯分？」).
# (a bare number is money only when no other counter follows it: not 2020年, 100人, 300メートル)
_AMOUNT = re.compile(r"\d[\d,]*\s*円|\d[\d,]{2,}(?![\d,])(?!\s*(?:年|人|回|杯|本|時|分|秒|歳|号|番|枚|個|日|月|週|キロ|km|m|メートル"
                     r"|ページ|点|位|階|件|代|万|億|千))")
# 「一杯いくら？」「一つおいくら？」: the price of one of what was served
UNIT_PRICE = re.compile(r"(?:一|1|ひと)(?:杯|つ|皿|品|個|本)\s*(?:の値段|(?:お)?いくら|何円|なんぼ)")


# Money handed over in so many words (「払いますよ！1,600円ですよね、はい」「はい、2,000円。お釣りお願いします」)
_HANDS_OVER = re.compile(r"払(?:います|いますよ|うよ|うね|っとく)(?![かの]?[？?])|お釣り(?:を)?(?:お願い|ください|ちょうだい)"
                         r"|^(?:はい|じゃあ|では)[、,\s]*\d[\d,]*\s*円")


def hands_over(text: str) -> bool:
    """Whether `text` hands money over in so many words, asking nothing about what the bill holds (a sum checked
    on the way, 「1,600円ですよね」, still pays)."""
    normalised = nfkc(text)
    return bool(_HANDS_OVER.search(normalised)) and not _ABOUT_BILL.search(normalised)


def disputes(text: str) -> bool:
    """Whether `text` asks about the bill or doubts it, rather than pays it."""
    normalised = nfkc(text)
    return bool(_ABOUT_BILL.search(normalised) or _AMOUNT_ASKED.search(normalised) or
                any(_AMOUNT.search(sentence) and is_question(sentence) for sentence in sentences(normalised)) or
                (_BILL_WORD.search(normalised) and _RUNNING.search(normalised)))


def itemised(ordered: Iterable[str], prices: Mapping[str, int]) -> tuple[str, int]:
    """What was served with a price, each with its price (「水割り700円、ナポリタン800円×2」), and the sum."""
    counts = Counter(item for item in ordered if item in prices)
    parts = [f"{item}{prices[item]:,}円" + (f"×{n}" if n > 1 else "") for item, n in counts.items()]
    return "、".join(parts), sum(prices[item] * n for item, n in counts.items())


def _number(word: str) -> int:
    """「2」「二」「十二」「二十」 as a number."""
    if word.isdigit():
        return int(word)
    tens, _, ones = word.rpartition("十")
    if "十" not in word:
        return _KANJI_DIGITS[ones]
    return (_KANJI_DIGITS[tens] if tens else 1) * 10 + (_KANJI_DIGITS[ones] if ones else 0)


def taken_back(text: str, named: list[str], ordered: list[str], recent: str | None) -> list[str] | None:
    """What is left counted after `text` takes items back, or None where it takes nothing back.

    `named`: the menu items the text names; `ordered`: what was served, in order; `recent`: the item served in the
    last turns (「キャンセル」 alone takes it back).  A count says how many stay (「2杯目は」 keeps one, 「2杯しか」
    keeps two); an item named without one is taken off once when cancelled (取り消して) and wholly when denied
    (頼んでない)."""
    normalised = nfkc(text)
    cancel, denied = _CANCEL.search(normalised), _NOT_ORDERED.search(normalised)
    ordinal, only = _ORDINAL.search(normalised), _ONLY_COUNT.search(normalised)
    if not (cancel or denied or (only and re.search(r"頼|たの|注文|飲|食", normalised))):
        return None
    items = [item for item in dict.fromkeys(named) if item in ordered]
    if len(items) > 1:
        return None                   # which one is meant is not read here: the breakdown answers
    item = items[0] if items else (recent if cancel and not named else None)
    if item is None:
        return None
    keep = ordered.count(item)
    if ordinal:
        keep = min(keep, _number(ordinal.group(1)) - 1)
    elif only:
        keep = min(keep, _number(only.group(1)))
    else:
        keep = keep - 1 if cancel and not denied else 0
    if keep >= ordered.count(item):
        return None
    left, drop = [], ordered.count(item) - keep
    for served in reversed(ordered):                  # the last ones served come off first
        if served == item and drop:
            drop -= 1
            continue
        left.append(served)
    return left[::-1]
