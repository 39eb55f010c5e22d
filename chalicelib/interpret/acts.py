"""Dialogue acts: what a free player line *does* (greets, thanks, insults, orders…).

When no scripted line, knowledge line or model answers, a character still
reacts in their own voice to what the player did (scenario `reactions`).  The
recogniser is model-free like the lexical classifier: the text is normalised
(`text.nfkc`, pasted prompt lines and quoted phrases set aside by the cue
helpers) and each act has a few cue patterns.  Acts are tried in a fixed
order, the more specific and the more socially urgent first: an insult or an
apology must not be answered as a question.  `butai eval-acts` measures it
on `scenarios/eval/acts.json`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..scenario.model import ACTS
from .asking import is_question, wonders
from .cues import SceneNames, player_words, without_quoted_phrases
from .lexicon import pattern
from .money import asks_to_pay, without_put_off
from .text import nfkc

NO_ACT = "なし"
CALL_ONLY = "呼びかけ"     # the cue of a line that only calls someone (「ママ？」): no act
_TRAILING = re.compile(r"[\s。．.！!…~ーっw笑♪☆★]+$")


def _re(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(parts))


_INSULT = _re(r"ば[ー〜~]*か(?!り|に|ら|す)|バカ|馬鹿|あほ(?!う)|アホ|うざ|ウザ|うるせ|うるさい(?:な|よ|わ|ん)?\s*(?:[、。!！]|$)",
              r"黙れ|だまれ|死ね|しね(?:よ|$)|ブス|ぶす(?:$|[、。!！])|ばばあ|ババア|ばばぁ|じじい|くそ|クソ|きも(?:い|っ|$)|キモ",
              r"つまん(?:ね|な)え?(?:店|な|よ|$)|ふざけ(?:んな|るな)|消えろ|てめ[えー]|ぼったくり|最低(?:だ|な|$)|ひどい店"
              r"|(?<!じゃ)(?<!では)(?<!と)まずい(?![？?]|かな|の|って)")
_APOLOGY = _re(r"ごめん|ゴメン|御免|申し訳|悪かった|わるかった|すまな(?:い|かった)|すまん|謝(?:る|り|ら)|許して")
# 「すみません」 alone apologises; before a question (「すみません、やってますか？」) it only calls for attention
_SORRY_CALL = _re(r"(?:すみません|すいません)(?![、,\s]*[^。]*[？?]\s*$)|失礼(?:しました|いたしました)$")
_THANKS = _re(r"ありがと|有難う|有り難う|サンキュ|さんきゅ|感謝|助か(?:っ|る)|恩に着|おかげ(?:で|さま)")
_GREETING = _re(r"^(?:[^、。!！？?]{0,6}[、,\s])?(?:こんばん[はわ]|今晩[はわ]|こんにち[はわ]|おはよう|はじめまして|初めまして|やあ"
                r"|どうも(?:$|[、。!！\s]|こんばん|はじめ)|ただいま|お?久しぶり|ひさしぶり|よろしく|いらっしゃ(?!い[？?])"
                r"|お邪魔します|おじゃまします)",
                r"^(?:ママ|[^、。]{0,6})[、,\s]*(?:こんばん[はわ]|こんにち[はわ]|おはよう)")
_DRINK = (r"(?:ビール|水割り|ハイボール|焼酎|ウイスキー|ウィスキー|日本酒|お酒|酒|ワイン|サワー|レモンサワー|お水|水|お茶|コーヒー"
          r"|ジュース|ナポリタン|おでん|おつまみ|つまみ|お通し|同じの|同じもの|いつもの)")
_ORDER = _re(pattern("money", "paying_cue"),
             r"おかわり|お代わり|もう一杯|もういっぱい|一杯(?:ちょうだい|ください|もらえ|お願い)",
             _DRINK + r"\s*(?:を|も)?\s*(?:ください|下さい|ちょうだい|頂戴|もらえ|もらお|お願い|おねがい|ひとつ|一つ|1つ|ふたつ|二つ|2つ|一杯|いっぱい)",
             r"(?:注文|オーダー)(?:して|したい|いい|お願い|を)")
_ABOUT_SELF_TOPIC = (r"(?:趣味|何歳|いくつ|歳は|年齢|年は|出身|生まれ|いつから|普段|休みの日|休日|家族|恋人|彼氏|彼女|結婚|独身|若い頃|若いころ"
                     r"|昔|親戚|姪|叔母|おば(?:さん)?|名前の由来|好きな(?:もの|食べ物|映画|歌|曲|人|タイプ)|何が好き|どこに住"
                     r"|どうして(?:この店|ここ)|なんで(?:この店|ここ)で|この仕事|いつも何)")
_ABOUT_SELF_ASK = r"(?:[？?]|か(?:な|しら)?$|の$|教えて|聞かせて|聞きたい|知りたい|話して)"
_YOU = r"(?:あなた|君|きみ|お前|おまえ|あんた|お二人|二人|ふたり)"
_PRAISE = _re(r"きれい|綺麗|キレイ|素敵|すてき|ステキ|最高|すご(?:い|く|っ)|凄(?:い|く)|さすが|流石|かわい|可愛|センス(?:が)?(?:いい|良い|ある)",
              r"おいし|美味し|うま(?:い|っ)|旨い|上手|うまいね|尊敬|かっこい|格好い|優しい|やさしい|いい(?:店|お店|雰囲気|声|人|センス|趣味|名前)"
              r"|好きだ(?:な|よ)|気に入った|落ち着く(?:ね|な|よ)|居心地(?:が)?(?:いい|良い)"
              r"|雰囲気(?:が|も)?(?:いい|良い|好き|最高|素敵)|いい(?:匂い|におい|香り)")
# 「いや」 alone, or before what turns down (「いや、いい」「いや、結構」「いや、やめとく」), disagrees; before anything else
# (「いや、さっき頼みましたよ」「いや、だから…」「いやいや食べたいです」) it corrects or restates, and what follows is the act.
_REFUSING = (r"(?:いい(?:です|よ|や|って|わ)?(?:[、,。!！\s…]|$)|結構|けっこう|やめ|止め|遠慮|大丈夫|いらな|要らな|今は|今日は|もう(?:いい|結構|十分)"
             r"|ちょっと|そんな|それは|ない(?:[よわねな]|かな|でしょ)?$|ないない|無理|だめ|ダメ|苦手|嫌)")
_DISAGREE = _re(r"^(?:いやいや|いや|いいや)(?:[、,\s!！。]*$|[、,\s!！。]+(?=" + _REFUSING + r"))"
                r"|^(?:えー|ええー)(?:[、,\s!！。]|$)(?![、,\s!！。]*[^。]*(?:残念|ずるい|いいな|すご|うそ|マジ|まじ|本当|ほんと|たかった|ほしかった))|^うーん[、,\s]+\S|違う|ちがう|そんなことない|そんな事ない|そうかな|そうかなあ",
                r"反対|やだ|いやだ|嫌だ|どうかな|どうだろう|賛成(?:でき|し)ない|ありえな|あり得な|納得(?:でき|い)かな|同意(?:でき|し)ない"
                r"|そうは思わな|思わない|間違って")
_AGREE = _re(r"^(?:うん|はい|ええ|おう|そうそう|うんうん)(?:[、,\s!！。ー]|$)|そうだね|そうだよね|そうですね|そうだな|そうね|たしかに|確かに",
             r"その通り|そのとおり|わかる|分かる|賛成|なるほど|だよね|ですよね|いいね|同感|同意|もちろん|そう思う|ほんとそれ|それな")
# Sad news of the player's own life (「女房は三年前に死んだんだ」「親父が入院してて」「彼女と別れた」): a death, an
# illness, a parting, a loss — not a question about someone's (「先代は亡くなったの？」), not a joke's 死ぬほど.
_SAD = _re(r"死んだ|死んじゃ|死なれ|亡くな|亡くし|他界|先立た|逝っ|死別|くたばっ|葬式|通夜|お墓参り|墓参り|一周忌|三回忌",
           r"病気(?:で|に|が|して|なんだ|なの)|入院|手術|癌|ガン(?!ダム)|余命|倒れ(?:た|て)",
           r"別れ(?:た|ちゃ|て)|離婚|振られ|ふられ|フラれ|失恋|クビ(?:に|になっ)|リストラ|失業|首になっ",
           r"一人になっ|ひとりになっ|独りになっ|寂しくてな|さみしくてな")
_SAD_NOT = re.compile(r"死ぬほど|死ぬかと|死にそう")
# The player telling of their own life, family or past (「俺も若い頃は歌手になりたくてな」「女房とよく来たもんだ」).
_OWN_LIFE = _re(r"(?:^|[、,\s。])(?:俺|おれ|オレ|僕|ぼく|わし|儂|あたし|自分)(?:は|も|が|の|って|、)"
                r"|(?:^|[、,\s。])(?:私|わたし)(?:は|も|って|、)",
                r"(?:女房|嫁さん|かみさん|カミさん|家内|うちの(?:妻|嫁|旦那|息子|娘|母|父|親)|妻|亭主|息子|娘|孫|親父|お袋|おふくろ"
                r"|兄貴|姉貴|おやじ|お父さん|お母さん)(?:は|が|と|も|の|に|を)",
                r"若い(?:頃|ころ)|昔は|学生(?:の頃|時代)|子ども(?:の頃|のころ)|子供の頃|現役の頃|定年|退職")
# The first thing a line names as its topic or owner (「クロちゃんは」「先代は」「このお店の」)
_SUBJECT = re.compile(r"(?:^|[、,。\s])(?:ねえ|ところで|じゃあ|で)?[、,\s]*(?:この|その|あの)?"
                      r"([^\s、,。！？!?はがをにでとのも]{1,10}?)(?:ちゃん|さん|くん|君)?(?:は|って|の)(?!\s*[？?]?\s*$)")

Pattern = re.Pattern[str]


@dataclass(frozen=True)
class ActFound:
    act: str                 # one of ACTS, or なし
    cue: str | None = None   # the text that decided it (for the debug view)
    paying: bool = False     # an 注文 that asks for the bill (answered by a 会計 reaction where there is one)

    def to_dict(self) -> dict:
        return {"act": self.act, "cue": self.cue, **({"paying": True} if self.paying else {})}


class ActRecogniser:
    """``recognise(text)`` → the dialogue act of one player line.  Character
    names and aliases (from the scenario) count as "you" for 本人."""

    def __init__(self, names: SceneNames | None = None) -> None:
        self.names = names or SceneNames()
        people = sorted({nfkc(n) for aliases in self.names.characters.values() for n in aliases if n}, key=len,
                        reverse=True)
        you = "|".join([*(re.escape(p) for p in people), _YOU])
        self._about_self = _re(r"(?:" + you + r")\s*(?:ちゃん|さん)?\s*(?:は|って|の|も|が|、|,)[^。]*" + _ABOUT_SELF_TOPIC,
                               _ABOUT_SELF_TOPIC + r"[^。]*" + _ABOUT_SELF_ASK,
                               r"(?:" + you + r")\s*(?:ちゃん|さん)?\s*(?:のこと|自身)[^。]*" + _ABOUT_SELF_ASK)
        self._named_self = re.compile(r"(?:" + you + r")")
        self._people = frozenset(people)
        self._order: list[tuple[str, Pattern]] = [
            ("暴言", _INSULT), ("謝罪", _APOLOGY), ("感謝", _THANKS), ("注文", _ORDER), ("謝罪", _SORRY_CALL),
            ("挨拶", _GREETING), ("本人", self._about_self), ("称賛", _PRAISE), ("反対", _DISAGREE),
            ("同意", _AGREE),
        ]
        # (「俺は赤いドアのままがいいと思う」 is an opinion, 「俺も好きだ」 agreement: the player's own life only
        # when nothing else is said)
        # A line that only calls someone (「ママ？」「ねえ、葵ちゃん！」) asks nothing yet: the one called answers
        # as to any opening, not as to a question they cannot place.
        self._call_only = re.compile(r"^(?:(?:ねえ|ねぇ|ね|ちょっと|あの|あのー|あのさ|おーい|ほら|" + you + r")"
                                     r"\s*(?:さん|ちゃん|くん|様|さま)?[\s、,。!！?？…ー~〜]*)+$")

    def recognise(self, text: str) -> ActFound:
        normalised = without_quoted_phrases(player_words(nfkc(text)), self.names).strip()
        stripped = _TRAILING.sub("", normalised) if not normalised.endswith(("?", "？")) else normalised
        if self._call_only.match(stripped):
            return ActFound(NO_ACT, CALL_ONLY)
        sad = _SAD.search(stripped)
        if sad and not _SAD_NOT.search(stripped) and not is_question(stripped) and not _INSULT.search(stripped):
            return ActFound("悲報", sad.group(0))     # before praise or agreement: 「だよね！」 never answers grief
        for act, cues in self._order:
            # (a paying word taken back, 「お勘定ちゃうで、もう一杯」, orders only by what is left)
            found = cues.search(without_put_off(stripped) if act == "注文" else stripped)
            if found and act == "本人" and not self._named_self.search(stripped) and self._asks_of_other(stripped):
                continue      # 「クロちゃんは何歳まで生きたの？」「このお店の名前の由来は？」: not the character's own
            if found:
                paying = act == "注文" and asks_to_pay(stripped)
                return ActFound(act, found.group(0).strip() or act, paying)
        # (what asks is read in asking.py; 「明日雨降るかな」 wonders to the listener, 「…古い建物を撮るのが多いかな」
        # after the player told of themselves muses)
        wondering = wonders(stripped)
        if is_question(stripped) or wondering == "leave" or (wondering and not _OWN_LIFE.search(stripped)):
            return ActFound("質問", "質問")
        own = _OWN_LIFE.search(stripped)
        if own and not is_question(stripped) and not re.search(r"思う|思います|と思|好き|嫌い", stripped):
            return ActFound("身の上", own.group(0).strip(" 、,。") or "身の上")
        return ActFound(NO_ACT)

    def _asks_of_other(self, text: str) -> bool:
        """Whether a personal topic asked without a name (何歳, いつから, 名前の由来) is asked of someone or something
        the line names first (クロちゃんは, 先代は, このお店の), not of the one spoken to."""
        subject = _SUBJECT.search(text)
        if subject is None:
            return False
        noun = subject.group(1)
        return noun not in self._people and not re.match(_YOU, noun) and \
            not re.match(_ABOUT_SELF_TOPIC, text[subject.start(1):])

    @property
    def acts(self) -> Iterable[str]:
        return ACTS
