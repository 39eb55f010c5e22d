"""Questions about the bill: what it holds, answered from what was served, never taken as paying.

「内訳は？」「何が入ってるの？」「高くない？」「2600円！？」 ask about the bill; the answer names each item
served with its price and the sum (the menu's `breakdown` lines, `{items}` and `{total}`), so a player can see
it adds up.  Only paying words (お会計, 払います, money handed over) pay.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from ..interpret.text import nfkc

# What asks what the bill holds or doubts it (not what pays it).
_ABOUT_BILL = re.compile(r"内訳|明細|何が入って|なにが入って|何の(?:お金|代金|分|料金)|何代|計算(?:合って|あって|違|ちが|おかし|して)"
                         r"|合って(?:る|ます)[？?か]|間違って(?:る|ない|ません)|高(?:くない|すぎ|過ぎ|い(?:よ|っす|です)?\s*[？?!！])"
                         r"|(?:なんで|何で|どうして)[^。]{0,12}(?:円|そんな|こんな)|どういう(?:計算|こと)|ぼったくり"
                         # 「水割りしか頼んでないんだけど」: what was ordered said against what is counted
                         r"|しか(?:頼|たの|注文)|(?:頼|たの)んで(?:ない|ません)(?:のに|けど|んだけど|んすけど|んですけど)"
                         # 「4杯目は頼んでないし飲んでない。取り消して」「キャンセル！」: something counted taken back
                         r"|(?:頼|たの)んで(?:ない|ません)|注文して(?:ない|ません)|(?:飲|の)んで(?:ない|ません)"
                         r"|取り消|とりけ|キャンセル|請求から")
# An amount said back in surprise (「2600円！？」「え、2600？」).
_AMOUNT_ASKED = re.compile(r"\d[\d,]*\s*(?:円)?\s*(?:[!！]*[？?]|って[？?]|も[？?!！]|も(?:する|取る|とる)"
                           r"|(?:っす|です|だ)?(?:よね|じゃない|でしょ|のはず))"     # 「1500っすよね」: the sum checked
                           r"|^(?:え|えっ|ええ|は|はぁ|はあ|マジ|まじ)[、,!！っ?？\s]*\d[\d,]*\s*円?\s*[!！?？]")
DEFAULT_BREAKDOWN = "{items}で、{total}円です。"


def disputes(text: str) -> bool:
    """Whether `text` asks about the bill or doubts it, rather than pays it."""
    normalised = nfkc(text)
    return bool(_ABOUT_BILL.search(normalised) or _AMOUNT_ASKED.search(normalised))


def itemised(ordered: Iterable[str], prices: Mapping[str, int]) -> tuple[str, int]:
    """What was served with a price, each with its price (「水割り700円、ナポリタン800円×2」), and the sum."""
    counts = Counter(item for item in ordered if item in prices)
    parts = [f"{item}{prices[item]:,}円" + (f"×{n}" if n > 1 else "") for item, n in counts.items()]
    return "、".join(parts), sum(prices[item] * n for item, n in counts.items())
