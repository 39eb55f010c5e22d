"""Questions and requests of a known form: what a line asks, read from its shape alone.

Players ask many things no knowledge line covers, but whose form alone tells what a sensible answer is:

- ``permission``: may I …? (「まず座っていい？」「ここ座っても？」「撮らせてもらっていい？」「入っちゃだめ？」);
- ``offer``: the player offers to do something (「手伝おうか？」「僕が撮りましょうか？」「運びますよ」);
- ``request``: the player asks the character to do something (「一曲かけて」「写真見せてくれる？」
  「アルバム見せてもらえたら」);
- ``preference``: do you like …? (「葵さんはこの曲、好き？」「ママ、甘いもの好き？」「この曲どう思う？」);
- ``have``: is there … here? (「灰皿あります？」「アルバムってあるんですか？」「氷ない？」);
- ``confirm``: a decision confirmed (「撮影OKってことでいいですか？」「じゃあ、それで決まりね？」);
- ``wellbeing``: how are you? (「元気？」「ママ、最近どう？」「葵ちゃんは元気してた？」「調子はどう？」), asked of the one
  spoken to (not 「先代は元気？」: the one named answers only when they are here), read before what the characters
  know, whose lines share its words (元気);
- ``advice``: the player tells of a matter of their own life and asks the character's view of it
  (「就活で全然受からなくて。ママ、どう思います？」「仕事辞めたいんだけど、どうしたらいいかな」): asked of the
  player's matter, not of the scenario's, so it is read before what the characters know.

A character answers such a line from their own set for the form (scenario ``forms``: 「いいわよ、どうぞ。」 to a
permission, 「あら、ありがとう。」 to an offer), or from a stance the author gave them on what the line is about
(ママ lets the shop be photographed but not herself) — only where nothing authored (a scripted line, a knowledge
line, the menu) answers: the form replaces a stock "I don't know", never an answer.

The reading is cue patterns on the normalised sentence plus the SudachiPy tokens where a surface is ambiguous:
the て of 「座っていい？」 is a verb's (a permission) while the で of 「これでいい？」 is not; the せ of 「撮らせて」
lets (a permission) while 「見せて」 shows (a request); the ない of 「灰皿ない？」 is an adjective (is there none?)
while 「行かない？」's negates a verb (an invitation).  A line with a wh-word asks for something (「何を手伝えば
いい？」「どこに座ればいい？」): not of these forms.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .. import lazyre
from ..answers import Answer, Answerer
from ..faces import NEUTRAL
from ..interpret.asking import WH, is_question, offers_two_answers
from ..interpret.belonging import kin_of_player
from ..interpret.ja import analyse
from ..interpret.ja.tokens import Token
from ..interpret.lexicon import word_class
from ..interpret.text import nfkc
from ..scenario import GameState
from ..scenario.model import Character
from ..turn_record import AnswerSource
from .variety import Variety

_SENTENCE = lazyre.compile(r"[^。！？!?\n]*[。！？!?\n]+|[^。！？!?\n]+$")
_END = r"\s*[？?。!！…~ー]*\s*$"
# 「撮影OKってことでいいですか？」「じゃあそれで決まりね？」「店内ならOKってこと？」
_CONFIRM = lazyre.compile(r"(?:って|という|との)こと(?:で|です|だ)?\s*(?:いい|良い|よろし|ok|オッケー|おっけー|大丈夫)?"
                      r"(?:んです|んだ|です)?(?:か|ね|よね|の|でしょうか|かな)?\s*[？?]"
                      r"|(?:で|って|に)(?:決まり|決定)(?:ね|だね|ですね|でいい|か|で)?\s*[？?]"
                      r"|(?:ok|オッケー|おっけー|大丈夫|いい)(?:って|という)こと(?:ね|だね|ですね|よね)?" + _END
                      + r"|(?:って|という)ことで(?:よろしく|お願い)?" + _END, re.IGNORECASE)
# A verb's て then may-I: 「座っていい？」「座ってもいいですか」「ここ座っても？」「吸っても大丈夫？」
_MAY = lazyre.compile(r"(?P<te>て|で)(?:も)?\s*(?:いい|良い|よい|ええ|大丈夫|平気|構わない|かまわない|ok|オッケー|おっけー|問題ない)"
                  r"(?:です|でしょう|でしょうか|ですか|の|か|かな|かしら|よね|んですか|んだよね)?" + _END
                  + r"|(?P<te2>て|で)も\s*[？?]" + _END, re.IGNORECASE)
# A doing named by a noun or a verb and の, then may-I: 「撮影OKですか？」「撮るのは大丈夫？」「喫煙可能？」
_DOING_OK = lazyre.compile(r"(?P<no>の(?:は|って|も)?)?\s*(?P<ok>ok|オッケー|おっけー|ng|可能|大丈夫|平気|アリ|あり|だめ|ダメ|構わない|かまわない)"
                       r"(?:です|でしょう|なの|なん)?(?:か|かな|ですか|すか)?\s*[？?]" + _END, re.IGNORECASE)
# 「入っちゃだめ？」「触ってはいけませんか」
_MUST_NOT = lazyre.compile(r"(?:ちゃ|じゃ|ては|では)(?:だめ|ダメ|駄目|まずい|いけない|いけません)(?:ですか|かな|の|か)?\s*[？?]")
# Letting the player do it: 撮らせて(もらえる/ください/ほしい)
_LET_ME = lazyre.compile(r"せて\s*(?:もら|いただ|頂|くれ|くださ|下さ|ほし|欲し|ちょうだい)")
# The one spoken to asked to do something: 「見せてくれる？」「かけてください」「撮ってもらっていい？」
# (「母がよく作ってくれたのを思い出します」: what someone did for one, told, asks nothing)
_ASK_TO_DO = lazyre.compile(r"(?P<te>て|で)\s*(?:ください|下さい|くださる|くれ(?:る|ない|ません|ます)?(?![たてれ])|ちょうだい|頂戴|ほしい|欲しい"
                        r"|もらえ(?:る|ます|ない|ません|たら)?|もらって(?:も)?(?:いい|良い|大丈夫)|いただけ|頂け|いただきたい)")
# A thing asked for (「名刺もらえますか？」「おしぼりください」): what is not on the menu (an order is read before).
_GIVE_ME = lazyre.compile(r"(?P<give>(?:を|も)?\s*(?:もらえ(?:る|ます|ない|ません)|いただけ(?:る|ます|ない|ません)|ください|下さい|ちょうだい"
                      r"|頂戴|くれ(?:る|ない|ません)))(?:か|かな|の)?" + _END)
# A bare て-form at the end asks too: 「一曲かけて」「写真見せてよ」
_TE_END = lazyre.compile(r"(?P<te>て|で)(?:よ|ね|な|ってば|くれ|ちょ)?" + _END)
# 教えて, 聞かせて ask to be told: a question for knowledge, not a thing to do.
_TELL = lazyre.compile(r"教えて|聞かせて|話して|説明して|聞いて")
# What may stand before a bare request's verb: a thing (一曲かけて, それ取って), its を, or a word that urges
# (ちょっと待って, 早く来て) — not a frame of a story told (雨に降られて, 彼女と別れて, 昨日行ってて).
_URGING = frozenset("ちょっと 早く はやく もう一回 もう一度 もう少し ゆっくり 少し ちょい".split())
_HELPER_VERBS = frozenset("ちゃう じゃう しまう いる ある おる くる いく".split())
# The player offering: 「手伝おうか」「僕が撮りましょうか」「持ってあげる」「運びますよ」
_VOLITIONAL_ASK = lazyre.compile(r"(?:う|よう|ましょう)か\s*(?:[？?]|$|。)")
_FOR_YOU = lazyre.compile(r"て(?:あげ(?:る|よう|ましょう|ます)|やろう|やる(?:よ|か))|(?:て|で)おき(?:ます|ましょう)か")
_I_DO = lazyre.compile(r"(?:^|[、,\s])(?:俺|おれ|オレ|僕|ぼく|私|わたし|あたし|自分|わし)が[^。、,]{0,12}?"
                   r"(?:ます|ますよ|るよ|るから|るね|とく|ときます)" + _END)
_HELP = lazyre.compile(r"(?:手伝|てつだ)(?:います|う(?:よ|わ|って|から)|おう|わせて|いましょう|える(?:こと|もの))|(?:よかったら|良かったら|なんなら|代わりに)[^。]*"
                   r"(?:ます|ますよ|るよ|ましょうか|ようか|おうか)" + _END)
# Do you like …?: 好き (not 好きな+noun: 「好きな歌手は？」 asks which), 嫌い, 苦手, 得意, ハマってる, どう思う.
_LIKE = lazyre.compile(r"好き(?!な[^のんー])|嫌い(?!な[^のん])|きらい|苦手|得意|興味(?:ある|あり|が)|好み|気に入って|ハマ|はまって"
                   r"|どう思(?:う|い|います)|(?:って|は)(?:どう|いかが)(?:です|だ)?(?:か|かな)?\s*[？?]")
# Is there …?: ある/あります/置いてる, not 〜したことある (what someone did) nor 〜てある.
_THERE_IS = lazyre.compile(r"(?<!こと)(?<!事)(?<![てで])(?:は|って|も|とか|が)?\s*(?:ある|あります|ありますか|あんの|あるんですか|あるの|あるかな"
                       r"|置いて(?:る|ある|ます|あります))(?:の|か|かな|んですか|んだ|です)?\s*[？?]?" + _END)
_THERE_IS_NOT = lazyre.compile(r"(?P<nai>ない|無い)(?:ですか|かな|の|んですか|か)?\s*[？?]" + _END)


@dataclass(frozen=True)
class FormFound:
    form: str        # one of scenario.model.FORM_NAMES
    cue: str         # the text that decided it (for the debug view)

    def to_dict(self) -> dict[str, str]:
        return {"form": self.form, "cue": self.cue}


def _token_at(tokens: list[Token], start: int) -> Token | None:
    return next((t for t in tokens if t.start == start), None)


def _after_verb(tokens: list[Token], start: int) -> bool:
    """Whether the て/で at `start` joins a verb (座って, 飲んで), not a case particle (これで)."""
    token = _token_at(tokens, start)
    return token is not None and token.pos[:2] == ("助詞", "接続助詞")


def _bare_request(tokens: list[Token], start: int) -> bool:
    """The て at `start` ends a bare request (「一曲かけて」「ちょっと待って」): a plain verb right before it (not a
    passive, 〜ちゃって, an adjective's 〜くて), and before the verb only a thing, its を or an urging word."""
    at = next((i for i, t in enumerate(tokens) if t.start == start), None)
    if at is None or at == 0 or tokens[at].pos[:2] != ("助詞", "接続助詞"):
        return False
    verb = tokens[at - 1]
    if verb.pos[:1] != ("動詞",) or verb.lemma in _HELPER_VERBS:
        return False
    if at == 1:
        return True
    before = tokens[at - 2]
    return before.pos[:1] in (("名詞",), ("代名詞",)) or before.surface == "を" or \
        before.surface in _URGING or before.surface in ("、", ",")


# Doings whose 大丈夫？ asks how someone is, not leave: 「仕事大丈夫？」「体調大丈夫？」
_WELLBEING = frozenset("仕事 体調 具合 怪我 病気 勉強 運転 残業 出張 生活 準備 連絡".split())


def _doing_before(tokens: list[Token], found: re.Match[str]) -> bool:
    """A doing before the OK asked (a verb and の: 撮るのは大丈夫; a noun: 撮影OK, 持ち込み可能), は/って/も
    between allowed — not wellbeing (「体調大丈夫？」「仕事大丈夫なの？」), nor a thing or a person (「ママ大丈夫？」)."""
    start = found.start("no") if found.group("no") else found.start("ok")
    before = [t for t in tokens if t.end <= start and t.surface not in ("は", "って", "も", "、", ",")]
    if not before:
        return False
    if found.group("no"):
        return before[-1].pos[:1] in (("動詞",), ("助動詞",))
    noun = before[-1]
    if noun.pos[:2] != ("名詞", "普通名詞"):
        return False
    if found.group("ok").lower() in ("大丈夫", "平気", "だめ", "ダメ", "あり"):
        # (「撮影大丈夫？」 asks leave; 「仕事大丈夫？」「体調大丈夫？」 ask how one is)
        return "サ変可能" in noun.pos and noun.lemma not in _WELLBEING
    return True


def _lets(tokens: list[Token]) -> bool:
    """A causative せる/させる: the player asks to be let do it (撮らせて), not 見せて (to show)."""
    return any(t.pos[:1] == ("助動詞",) and t.lemma in ("せる", "させる") for t in tokens)


def _none_here(tokens: list[Token], start: int) -> bool:
    """The ない at `start` says there is none (灰皿ない？), not a verb negated (行かない？: an invitation)."""
    at = next((i for i, t in enumerate(tokens) if t.start == start), None)
    if at is None or at == 0 or tokens[at].pos[:1] != ("形容詞",):
        return False
    # (a thing, or a thing and は/も/って: not 〜じゃない, 〜くない, an opinion asked for agreement)
    before = tokens[at - 1]
    return before.pos[:1] in (("名詞",), ("代名詞",)) or \
        (before.surface in ("は", "も", "って", "とか") and at >= 2 and tokens[at - 2].pos[:1] in (("名詞",), ("代名詞",)))


# Serving and helping verbs a guest offers to do (「運びますよ」「洗いましょうか」「注ぎます」).
_SERVICE = frozenset("手伝う 運ぶ 片付ける 片づける 洗う 拭く 持つ 注ぐ 取る 代わる 並べる 配る".split())
_SERVICE_END = lazyre.compile(r"(?:ます|ますよ|ますね|るよ|ってく|とく|ときます)" + _END)


def _serves(tokens: list[Token], sentence: str) -> bool:
    """A serving or helping verb in a plain statement of what the player will do (「運びますよ」)."""
    return bool(_SERVICE_END.search(sentence)) and any(t.pos[:1] == ("動詞",) and t.lemma in _SERVICE for t in tokens)


def _volitional(tokens: list[Token]) -> bool:
    """A verb in its volitional form, or ましょう after one (手伝おう, 撮りましょう): the speaker means to do it."""
    return any(t.conjugation.startswith("意志推量形") and (t.pos[:1] == ("動詞",) or t.lemma == "ます") for t in tokens)


def _sentence_form(sentence: str) -> FormFound | None:
    tokens = list(analyse(sentence).tokens)
    if (found := _CONFIRM.search(sentence)) is not None:
        return FormFound("confirm", found.group(0))
    if _lets(tokens) and (found := _LET_ME.search(sentence) or _MAY.search(sentence)) is not None:
        return FormFound("permission", found.group(0))
    if (found := _ASK_TO_DO.search(sentence)) is not None and _after_verb(tokens, found.start("te")) and \
            not _TELL.search(sentence):
        return FormFound("request", found.group(0))
    if (found := _GIVE_ME.search(sentence)) is not None and \
            (before := [t for t in tokens if t.end <= found.start("give")]) and before[-1].pos[:1] == ("名詞",):
        return FormFound("request", found.group(0))
    found = _MAY.search(sentence)
    if found is not None and _after_verb(tokens, found.start("te") if found.group("te") else found.start("te2")):
        return FormFound("permission", found.group(0))
    if (found := _MUST_NOT.search(sentence)) is not None:
        return FormFound("permission", found.group(0))
    if (found := _DOING_OK.search(sentence)) is not None and _doing_before(tokens, found):
        return FormFound("permission", found.group(0))
    return _offer_or_have(tokens, sentence)


def _offer_or_have(tokens: list[Token], sentence: str) -> FormFound | None:
    """The forms after the requests and permissions: offers, a bare request in て, a preference asked, whether
    there is a thing."""
    if (found := _FOR_YOU.search(sentence) or _HELP.search(sentence) or _I_DO.search(sentence)) is not None:
        return FormFound("offer", found.group(0).strip(" 、,"))
    if _serves(tokens, sentence) and not is_question(sentence):
        return FormFound("offer", sentence)
    if (found := _VOLITIONAL_ASK.search(sentence)) is not None and _volitional(tokens) and \
            not re.search(r"かな\s*[。…]*$", sentence):
        return FormFound("offer", found.group(0))
    if (found := _TE_END.search(sentence)) is not None and _bare_request(tokens, found.start("te")) and \
            not _TELL.search(sentence):
        return FormFound("request", found.group(0))
    asking = is_question(sentence)
    if asking and (found := _LIKE.search(sentence)) is not None:
        return FormFound("preference", found.group(0))
    if word_class("not_kept").search(sentence) is not None:
        return None          # 「何か面白い話ある？」「時間ある？」「つもりある？」: a story, time, an intention — no thing kept
    if asking and (found := _THERE_IS.search(sentence)) is not None:
        return FormFound("have", found.group(0).strip())
    if (found := _THERE_IS_NOT.search(sentence)) is not None and _none_here(tokens, found.start("nai")):
        return FormFound("have", found.group(0))
    return None


# How are you (「元気？」「最近どう？」「調子はどう？」「お変わりありませんか」), after whom it asks of (`who`: empty, a
# call, a name): the sentence is nothing else.
_HOW_ARE_YOU = lazyre.compile(
    r"^(?:(?P<who>[^、,。？?!！\s]{1,12}?)(?:は|って|も)?[、,\s]+|(?P<who2>[^、,。？?!！\s]{1,12}?)(?:は|って|も)"
    r"|(?P<who3>[^、,。？?!！\s]{0,10}?(?:さん|ちゃん|くん|ママ|マスター)))?"
    r"(?:(?:最近|近頃|今日|あれから|その後|相変わらず)(?:は|って|も)?[、,\s]*)?"
    r"(?:お?元気(?:だった|でした|してた|してる|してます|してました|にしてた|にしてる|にしてます|にしてました|です|なの"
    r"|なん(?:だ|です)|そう|やってる|やってた)?(?:か|かい|ですか|の|かな|すか)?"
    r"|調子(?:は|って|の方は)?[、,\s]*(?:どう|いかが)(?:です|だい|っす)?(?:か)?"
    r"|お?変わり(?:ない|ありません|なかった|ありませんでした)(?:か|ですか|の|です)?"
    r"|(?:どう|いかが)(?:お過ごし|してた|してる|してました)(?:です|でした)?(?:か|の)?)" + _END)
# 「最近どう？」「その後どう？」: how things are since, only after a word of time
_HOW_SINCE = lazyre.compile(r"^(?:(?P<who>[^、,。？?!！\s]{1,12}?)(?:は|って|も)?[、,\s]*)?(?:最近|近頃|あれから|その後)"
                        r"(?:は|って)?[、,\s]*(?:どう|いかが)(?:です|だい|っす|してる|してた)?(?:か|の)?" + _END)


def wellbeing(sentence: str) -> FormFound | None:
    """「元気？」「ママ、最近どう？」: how the one spoken to is; the cue is whom it names before, if anyone."""
    found = _HOW_ARE_YOU.match(sentence) or _HOW_SINCE.match(sentence)
    if found is None:
        return None
    groups = ("who", "who2", "who3") if found.re.pattern == _HOW_ARE_YOU.pattern else ("who",)
    return FormFound("wellbeing", next((found.group(g) for g in groups if found.group(g)), ""))


# Asking what the one spoken to thinks or would do: 「どう思います？」「どうしたらいいかな」「アドバイスください」
_VIEW_ASKED = lazyre.compile(r"どう思(?:う|います|いません|われ|っ)|どう(?:したら|すれば|すりゃ)(?:いい|良い|ええ)|どうしよう"
                         r"|アドバイス|助言|相談(?:に乗|して|したい|なんだけど|なんですけど)|(?:なら|だったら)[^。？?]{0,12}?どう(?:する|します|してた|しました)")
# Matters of the player's own life a character can be asked about (the thing is echoed as {word}).
_OWN_MATTER = lazyre.compile(r"就活|就職|転職|面接|内定|仕事|会社|上司|部下|職場|残業|夜勤|バイト|試験|受験|勉強|進路|将来"
                         r"|恋愛|彼女|彼氏|片思い|結婚|離婚|婚活|子育て|親|引っ越し|引越し|ダイエット|お金|借金|夢"
                         r"|喧嘩|けんか|仲直り|家族|兄弟|姉妹|弟|兄|姉|妹|友達|友人|連絡")
# 「葵ちゃんの夢」「お店の将来」「ママの仕事」: someone else's matter (a person called by an honorific or a role, the
# shop); 「映像系の会社」「俺の将来」 stay the player's own.
_SOMEONES = lazyre.compile(r"(?:ちゃん|さん|くん|君|様|ママ|マスター|先代|店|あなた|きみ|彼|彼女|あの子|あいつ)の\s*$")


def only_asks_view(text: str) -> bool:
    """Whether a question asks nothing but someone's view (「千代さんはどう思います？」): with a question after it,
    it leads into that one."""
    return bool(_VIEW_ASKED.search(nfkc(text))) and not _OWN_MATTER.search(nfkc(text))


def _advice(text: str) -> FormFound | None:
    """The player's own matter told in the line and the one spoken to asked what they think of it."""
    asked = _VIEW_ASKED.search(text)
    if asked is None:
        return None
    matters = [found.group(0) for found in _OWN_MATTER.finditer(text) if not _SOMEONES.search(text[:found.start()])]
    if matters:
        # (what happened before who it happened with: 「弟と喧嘩しちゃって」 is about the 喧嘩)
        kin = word_class("humble_kin").entries
        return FormFound("advice", next((m for m in matters if m not in kin), matters[0]))
    # the player's own kin or things (「息子のことなんだけど…どうしたらいい？」「うちの子が…」: belonging.py)
    own = kin_of_player(text[:asked.start()])
    if own:
        start, end = own[0]
        return FormFound("advice", text[start:end])
    return None


# (a turn reads its line's form up to three times — the advice step, the form step, the recall guard — so the
# reading, a pure function of the text, is kept)
@lru_cache(maxsize=512)
def read_form(text: str) -> FormFound | None:
    """The form of the line's last sentence that has one (「こんばんは。座っていい？」: a permission); none when
    the sentence asks for something with a wh-word (「何を手伝えばいい？」) — what it asks for is the answer."""
    advice = _advice(nfkc(text))
    if advice is not None:
        return advice
    if offers_two_answers(text):
        return None          # (「日曜でいいってこと？それとも来なくていいってこと？」: which, not may I or shall I)
    sentences = [s.strip(" 　") for s in _SENTENCE.findall(nfkc(text).strip())]
    for sentence in reversed([s for s in sentences if s.strip(" 　。！!…")]):
        if (found := wellbeing(sentence)) is not None:
            return found
        wh = WH.search(sentence)
        if wh is not None and not re.search(r"どう思|(?:って|は)(?:どう|いかが)", sentence):
            return None
        found = _sentence_form(sentence)
        if found is not None:
            return found
    return None


def _stance(character: Character, form: str, text: str) -> int | None:
    """The first of the character's stances on a thing the line names, for this form (1-based)."""
    if character.forms is None:
        return None
    normalised = nfkc(text).lower()
    for n, stance in enumerate(character.forms.stances, 1):
        if (not stance.forms or form in stance.forms) and \
                any(w.strip() and nfkc(w).lower() in normalised for w in stance.words):
            return n
    return None


def form_answer(found: FormFound, character: Character, text: str, word: str | None, act: str, answerer: Answerer,
                state: GameState, turn: int, variety: Variety) -> Answer | None:
    """The character's answer to a line of this form: their stance on the thing it names, else their set for
    the form (a line holding {word} only when there is a word to fill it); None when they have neither."""
    forms = character.forms
    if forms is None:
        return None
    if word is not None:
        # (「猫好き？」 is read as one noun: what is liked is the thing, 猫)
        word = re.sub(r"(?:好き|嫌い|苦手|得意|派)$", "", word) or None
    stance = _stance(character, found.form, text)
    sets = {name: (mode, lines) for name, mode, lines in forms.line_sets()}
    name = f"stance{stance}" if stance is not None else found.form
    if name not in sets:
        return None
    mode, lines = sets[name]
    prefix = f"forms/{character.id}/{name}"
    said = answerer.line_set(prefix, mode, lines, state, turn, prefix, variety,
                             usable=lambda i: word is not None or "{word}" not in lines[i].text)
    if said is None:
        return None
    index, variation = said
    line = lines[index]
    ref = f"{prefix}#{index + 1}"
    detail = {**found.to_dict(), **({"word": word} if word else {})}
    return Answer(character.id, line.text.replace("{word}", word or ""), line.expression or NEUTRAL,
                  AnswerSource.FORM, ref, act, variation, refs=(ref,), detail=detail)
