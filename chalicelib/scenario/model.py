"""The scenario file format as pydantic models.

These models check shape only (keys, types).  Meaning (terms, ids that must
exist, expression keys) is checked by the loader, which can name the line and
the term at fault; the JSON Schema printed by `butai schema` comes from here.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..dialogue_acts import ACT
from ..faces import NEUTRAL
from ..voices import DEFAULT_SPEED, DEFAULT_VOICE, SPEED_MAX, SPEED_MIN, VOICES, is_voice, unknown_voice

# Ids appear inside conditions and effects (`済:A04`, `表情:赤尾妙子:smile`),
# where ":" and "+" are separators.
ID_PATTERN = r"^[^:+\s](?:[^:+]*[^:+\s])?$"
EFFECT_PATTERN = r"^(?:表情:[^:+\s]+:[^:+\s]+|フラグ:[^:+\s]+)$"


def _id_field(description: str) -> Any:
    return Field(description=description, json_schema_extra={"pattern": ID_PATTERN})


def _no_ids() -> list[str]:
    return []


def _id_list(description: str) -> Any:
    return Field(default_factory=_no_ids, description=description,
                 json_schema_extra={"items": {"type": "string", "pattern": ID_PATTERN}})


class _Strict(BaseModel):
    # A misspelt key ("efects") would otherwise be dropped silently.
    model_config = ConfigDict(extra="forbid", frozen=True)


# Dialogue acts a character can react to when nothing scripted answers (the
# model-free recogniser in chalicelib/interpret/acts.py tells them apart).
# 会計 (paying) is recognised as 注文 and answered by a 会計 reaction when the character has one.
ACTS = ACT.all
ACTS_FILE = "chalicelib/interpret/lexicon/acts.json"
# How a set of lines varies: in order (cycle), in a fixed pseudo-random order
# without recent repeats (shuffle), or each line once per game (once).
VariationMode = Literal["cycle", "shuffle", "once"]

_EXPRESSION_DESCRIPTION = ("Expression key the speaker shows with this line (one of the character's expressions "
                           "or neutral); absent: not authored. 表情キー")


class ReplyLine(_Strict):
    """One answer of the asker to the player's reply to their question."""
    text: str = Field(description="Shown verbatim. そのまま表示する本文")
    expression: str | None = Field(default=None, description=_EXPRESSION_DESCRIPTION)
    effects: list[str] = Field(default_factory=list,
                               description="Effects applied when this answer is said, as on a scripted line: "
                                           "フラグ:NAME sets a flag (a yes that changes the story), "
                                           "表情:CHARACTER:KEY sets a face. 返事を受けたときの演出",
                               json_schema_extra={"items": {"type": "string", "pattern": EFFECT_PATTERN}})


class Replies(_Strict):
    """How a character takes the player's answer to a question their line asks (the line's last sentence
    ends in a question). Each kind is answered by the asker, in order (cycle); a kind without lines
    falls back to the asker's 同意 (yes) or 反対 (no) reaction. 問いかけへの返事の受け方"""
    yes: list[ReplyLine] = Field(default_factory=list, description="The player says yes or agrees. はい・賛成")
    no: list[ReplyLine] = Field(default_factory=list, description="The player says no or disagrees. いいえ・反対")
    other: list[ReplyLine] = Field(default_factory=list,
                                   description="Any other answer (unsure, or an answer to a 何/どこ question). "
                                               "どちらでもない答え")


_REPLIES_DESCRIPTION = ("How the speaker takes the player's answer when this line ends in a question "
                        "(yes / no / other). 問いかけへの返事の受け方")


class SpokenLine(_Strict):
    """A short line said in the character's own voice, with its face."""
    text: str = Field(description="Shown verbatim. そのまま表示する本文")
    expression: str | None = Field(default=None, description=_EXPRESSION_DESCRIPTION)
    replies: Replies | None = Field(default=None, description=_REPLIES_DESCRIPTION)
    secret_from: list[str] = Field(default_factory=list,
                                   description="Character ids this line is kept from: it is not said while one of "
                                               "them is present (「ママには内緒」 in front of ママ). "
                                               "この人物がいる前では言わない",
                                   json_schema_extra={"items": {"type": "string", "pattern": ID_PATTERN}})


class PlaceLine(_Strict):
    """A line spoken at a place (arrival reactions, closing lines)."""
    speaker: str = _id_field("Character id of the speaker (present at the place). 話者の人物ID")
    text: str = Field(description="Shown verbatim. そのまま表示する本文")
    expression: str | None = Field(default=None, description=_EXPRESSION_DESCRIPTION)
    replies: Replies | None = Field(default=None, description=_REPLIES_DESCRIPTION)


_STORY_CONDITION = ("terms of the story so far (済:ID, 未:ID, フラグ:NAME) joined by ' + ' (all) or ' | ' "
                    "(either), grouped with parentheses")


class EndingLine(PlaceLine):
    """A closing line; with a condition, it is said only when the story went that way."""
    condition: str = Field(default="", description="When this closing line is said: " + _STORY_CONDITION
                                                   + "; empty = always. 締めの台詞を言う条件")


class LineSet(_Strict):
    """A set of lines in the character's voice that vary (cycle, shuffle, once)."""
    mode: VariationMode = Field(default="cycle", description="cycle, shuffle or once. 台詞の出し方")
    lines: list[SpokenLine] = Field(default_factory=list, description="The lines. 台詞")


# The forms of a question or request answered by a character's `forms` sets (conversation/forms.py).
FORM_NAMES = ("permission", "offer", "request", "preference", "have", "confirm", "advice", "wellbeing")
FormName = Literal["permission", "offer", "request", "preference", "have", "confirm", "advice", "wellbeing"]
_WORD_SLOT = ("{word}, if a line holds it, stands for what the line is about (the focus noun); a line with {word} "
              "is said only when there is one. ")


class Stance(_Strict):
    """What a character says to a form of line about one thing (ママ lets the shop be photographed, not herself)."""
    words: list[str] = Field(description="Words of the thing (撮, 写真, 撮影): a line of the form that holds one of "
                                         "them is answered by this stance's lines. 対象の語",
                             min_length=1)
    forms: list[FormName] = Field(default_factory=list,
                                  description="The forms it answers (permission, offer, request, preference, have, "
                                              "confirm); empty: all. 対象の型")
    mode: VariationMode = Field(default="cycle", description="cycle, shuffle or once. 台詞の出し方")
    lines: list[SpokenLine] = Field(description="The answers, in the character's voice. " + _WORD_SLOT + "台詞",
                                    min_length=1)


class Forms(_Strict):
    """Answers to questions and requests of a known form that nothing authored answers: the form alone tells what
    a sensible answer is (may I…? → yes, go ahead).  Each set is optional: a form with no set gets the stock
    answers as before.  型で答える台詞"""
    permission: LineSet | None = Field(default=None, description="To 「座っていい？」「撮らせてもらっていい？」: "
                                                                 "letting the player do it. " + _WORD_SLOT + "許可")
    offer: LineSet | None = Field(default=None, description="To 「手伝おうか？」「僕が撮りましょうか？」: the player "
                                                            "offers to do something. " + _WORD_SLOT + "申し出")
    request: LineSet | None = Field(default=None, description="To 「一曲かけて」「写真見せてくれる？」: the player asks "
                                                              "the character to do something. " + _WORD_SLOT + "頼み")
    preference: LineSet | None = Field(default=None, description="To 「甘いもの好き？」「この曲どう思う？」: what the "
                                                                 "character thinks of a thing. " + _WORD_SLOT + "好み")
    have: LineSet | None = Field(default=None, description="To 「灰皿あります？」「アルバムってあるの？」: a thing not on "
                                                           "the menu nor in what the character knows. " + _WORD_SLOT
                                                           + "有無")
    confirm: LineSet | None = Field(default=None, description="To 「撮影OKってことでいいですか？」「それで決まりね？」: "
                                                              "a decision confirmed. " + _WORD_SLOT + "確認")
    advice: LineSet | None = Field(default=None, description="To 「就活がきつくて。ママ、どう思います？」: the player "
                                                             "asks the character's view of their own matter (work, "
                                                             "studies, love); {word} stands for the matter. 相談")
    wellbeing: LineSet | None = Field(default=None, description="To 「元気？」「ママ、最近どう？」「調子はどう？」: how the "
                                                                "character is. 近況")
    stances: list[Stance] = Field(default_factory=list,
                                  description="Answers about one thing that differ from the sets above (tried first). "
                                              "Keep them true to the character's knowledge. 対象ごとの態度")

    def line_sets(self) -> list[tuple[str, VariationMode, list[SpokenLine]]]:
        """(name, mode, lines) of every set: the forms' by name, the stances' as stance1, stance2…"""
        found: list[tuple[str, VariationMode, list[SpokenLine]]] = [
            (name, line_set.mode, line_set.lines) for name in FORM_NAMES
            if (line_set := getattr(self, name)) is not None]
        found += [(f"stance{n}", stance.mode, stance.lines) for n, stance in enumerate(self.stances, 1)]
        return found


class ItemAbout(_Strict):
    words: list[str] = Field(default_factory=list,
                             description="Words a question about the item uses (銘柄, ブランド, サントリー). 問いの語")
    lines: list[SpokenLine] = Field(description="The answers, in the character's voice. 答えの台詞")


class MenuItem(_Strict):
    id: str = _id_field("Item id (ビール), as the player and the evaluation name it. 品目ID")
    words: list[str] = Field(default_factory=list,
                             description="Words that name this item in an order (ビール, 生, 瓶ビール); the id "
                                         "always counts. 品目を指す語")
    flag: str | None = Field(default=None, description="A flag set when the item is ordered (フラグ:NAME in "
                                                       "conditions). 注文で立つフラグ",
                             json_schema_extra={"pattern": ID_PATTERN})
    mode: VariationMode = Field(default="cycle", description="How the acknowledgements vary. 台詞の出し方")
    lines: list[SpokenLine] = Field(description="Acknowledgements of an order, in the character's voice. "
                                                "注文を受ける台詞")
    kind: Literal["drink", "food", "service", "goods"] | None = Field(
        default=None, description="drink, food, service (入浴, 配達, ラッピング: something done for the player) or "
                                  "goods (タオル, 切手: a thing sold): which items a request for 「何か飲み物」"
                                  "「お酒」 (drink) or 「何か食べるもの」 (food) lists, and which items of the same "
                                  "kind an item not served here is told instead of ({menu}). 品目の種類")
    price: int | None = Field(default=None, ge=0,
                              description="What one order costs (in the scenario's currency, e.g. yen); counted in "
                                          "the bill and said when the player asks. 値段")
    parts: list[str] = Field(default_factory=list,
                             description="Words for the parts of this item that the player may order by name (大根, "
                                         "卵 of おでん); they order the item, and the menu's `parts` line (or its "
                                         "`styles` line) names the parts asked for. 品目の中身（種）")
    about: ItemAbout | None = Field(default=None,
                                    description="What the item is (brand, what is in it): lines answering a question "
                                                "that names the item or one of `words` (銘柄, サントリー), or asks "
                                                "about the item just served. 品目についての答え")


class Menu(_Strict):
    """What a character serves: orders naming an item are acknowledged with the item's lines."""
    items: list[MenuItem] = Field(default_factory=list, description="Items this character serves. 品目")
    called: dict[Literal["drink", "food", "service", "goods"], list[str]] = Field(
        default_factory=dict,
        description="Words for the menu's items of one kind as a whole (goods: 花, お花 at a florist's): 「どんな花が"
                    "ありますか」 is answered with the items of that kind (the `suggest` lines, else `ask`), never "
                    "with the word as an item not sold. 品目の総称")
    ask: list[SpokenLine] = Field(default_factory=list,
                                  description="An order that names no item (何か飲み物を, yes to 何か飲む？): what "
                                              "would you like. 品目のない注文への台詞")
    missing: list[SpokenLine] = Field(default_factory=list,
                                      description="An order of something this character does not serve here. "
                                                  "ない品目への台詞")
    unavailable: list[SpokenLine] = Field(
        default_factory=list,
        description="An item named that is not served here (レモンサワー, 焼酎の水割り): {item} stands for the player's "
                    "word and {menu} for the items of the same kind (drink or food) that are "
                    "(「{item}は置いてないのよ。{menu}ならあるわ。」).  A line without {menu} is said before the item "
                    "served instead (「なければ水割りで」). Without these lines, `missing` answers. 置いてない品目への台詞")
    suggest: list[SpokenLine] = Field(
        default_factory=list,
        description="A request for something to drink or eat naming no item (何か弱めのお酒ある？ まず飲み物を): "
                    "{menu} stands for the items of that kind; it counts as an offer like `ask`. 飲み物・食べ物の勧め")
    styles: list[SpokenLine] = Field(
        default_factory=list,
        description="An order with how it is wanted (薄めで, 濃いめ, 氷多め), or asking to change the drink just "
                    "served (薄くしてもらえる？): {style} stands for the request (薄め) and {item} for the item; said "
                    "instead of the item's own line. 作り方の注文への台詞")
    treat: list[SpokenLine] = Field(
        default_factory=list,
        description="The player treats this character (一杯おごります, ママにも水割りを): thanks; {item} stands for "
                    "the item when one is named. おごられたときの台詞")
    treated_to: str | None = Field(
        default=None,
        description="The menu item (of any character's menu) this character has when the player treats them "
                    "naming none (一杯おごります): it is put on the player's tab and stands for {item} in the "
                    "`treat` lines. Absent, such a treat is thanks only and bills nothing. おごられたときに飲むもの")
    declined: list[SpokenLine] = Field(
        default_factory=list,
        description="The player turns a treat down or only talks of one (おごりません, おごるほどお金ない, "
                    "おごるって言ってない): a gracious line, nothing served nor billed (「あら、冗談よ。気にしないで」). "
                    "Without these lines a plain default answers. おごりを断られたときの台詞")
    breakdown: list[SpokenLine] = Field(
        default_factory=list,
        description="A question about the bill (内訳は？ 何が入ってる？ 高くない？): {items} stands for what was "
                    "served with each price (「水割り700円、ナポリタン800円」) and {total} for their sum; never "
                    "taken as paying. Without these lines a plain default answers. 会計の内訳の台詞")
    prices: list[SpokenLine] = Field(default_factory=list,
                                     description="The answer to 「いくら？」 about an item with a price: {item} and "
                                                 "{price} stand for the item and its price (「{item}は{price}円よ。」). "
                                                 "値段を聞かれたときの台詞")
    bill: list[SpokenLine] = Field(default_factory=list,
                                   description="The answer to paying once something with a price was ordered: {total} "
                                               "is the sum of the prices ordered (「はい、{total}円ね。」); the 会計 "
                                               "reaction answers when nothing was. お会計の台詞")
    paid: list[SpokenLine] = Field(default_factory=list,
                                   description="Thanks for the money handed over after the bill (「はい、6500円」"
                                               "「釣りはいらない」「これで」). 支払いを受けたときの台詞")
    change: list[SpokenLine] = Field(default_factory=list,
                                     description="Thanks for more money than the bill, with the change: {change} "
                                                 "stands for it and {total} for the bill (「{change}円のお返しね。」). "
                                                 "Without these lines `paid` answers. Less than the bill is told "
                                                 "the bill again and pays nothing. お釣りの台詞")
    settled: list[SpokenLine] = Field(default_factory=list,
                                      description="The answer to the bill, or to whether it is paid, once everything "
                                                  "ordered is paid for (「お代はもういただいたわよ。」); without "
                                                  "these lines a plain default says so. 支払い済みのときの台詞")
    parts: list[SpokenLine] = Field(default_factory=list,
                                    description="An order naming parts of an item (大根と卵): {parts} stands for them "
                                                "(「大根と卵ね」) and {item} for the item. 中身を言った注文への台詞")
    extras: list[SpokenLine] = Field(default_factory=list,
                                     description="A request about the order just served: a condiment or a change "
                                                 "(タバスコでいいや, ケチャップじゃなくて粉チーズ): {extra} stands for "
                                                 "what is asked for, {item} for the item. 薬味・変更の頼み")
    coming: list[SpokenLine] = Field(default_factory=list,
                                     description="The player asks after an item ordered (ナポリタンまだ？ いつ来る？): "
                                                 "here it is; {item} stands for the item. 催促への台詞")
    counted: list[SpokenLine] = Field(default_factory=list,
                                      description="An order of more than one of an item (赤い薔薇を5本, ビール二杯): "
                                                  "{item} stands for the item and {count} for the player's words for "
                                                  "how many (「{item}を{count}ね。」); said instead of the item's own "
                                                  "line. Without these lines the item's own line answers; the bill "
                                                  "counts each one either way. 数を言った注文への台詞")


class Reaction(_Strict):
    act: str = Field(description="The dialogue act these lines answer, one of the acts the engine recognises "
                                 "(chalicelib/interpret/lexicon/acts.json says what each is): 挨拶 greeting, 感謝 "
                                 "thanks, 質問 a question the character cannot answer, 注文 ordering or paying, 本人 "
                                 "asking about the character, 悲報 sad news of the player's own life… 反応する発話の種類",
                     json_schema_extra={"enum": list(ACTS), "x-listed-in": ACTS_FILE})
    mode: VariationMode = Field(default="cycle", description="cycle, shuffle or once. 台詞の出し方")
    lines: list[SpokenLine] = Field(description="The lines, each with its expression. 台詞")

    @field_validator("act")
    @classmethod
    def _known_act(cls, value: str) -> str:
        if value not in ACTS:
            raise ValueError(f"unknown act {value!r}; expected one of {', '.join(ACTS)}")
        return value


class Arrival(_Strict):
    mode: VariationMode = Field(default="cycle", description="cycle, shuffle or once. 台詞の出し方")
    lines: list[PlaceLine] = Field(description="Said when the player arrives and no scripted 到着 line fires. "
                                               "到着時の台詞（定型の到着台詞が出なかったとき）")


class Ending(_Strict):
    id: str | None = Field(default=None, description="Ending id (for the debug view and evaluation sets); default "
                                                     "PLACE#N. 終幕のID", json_schema_extra={"pattern": ID_PATTERN})
    condition: str = Field(default="", description="When leaving ends the game with this ending (`endings`, tried in "
                                                   "order): " + _STORY_CONDITION + "; empty = always. 終幕の条件")
    lines: list[EndingLine] = Field(default_factory=list,
                                    description="Closing lines, in order (those whose condition holds), after any "
                                                "scripted 離脱 line. 締めの台詞")
    title: str = Field(default="おしまい", description="Heading of the ending card. 終幕カードの見出し")
    text: str = Field(default="", description="Text of the ending card. 終幕カードの本文")


class Knowledge(_Strict):
    info: str = Field(description="What the character knows or thinks. Context for free conversation only; never "
                                  "shown verbatim. 自由会話で使う人物の考え（そのまま表示はしない）")
    condition: str = Field(default="", description="When this entry is given to free conversation: terms joined "
                                                   "by ' + ' or ' | ', grouped with parentheses (e.g. '意図:音楽'); "
                                                   "empty = always. この知識を使う条件（空なら常に）")
    words: list[str] = Field(default_factory=list,
                             description="Words naming what this entry covers (ネオン); pick this entry among "
                                         "several, and answer a なし input that names them. この知識の話題を表す語")
    mode: VariationMode = Field(default="cycle", description="How its lines vary. 台詞の出し方")
    lines: list[SpokenLine] = Field(default_factory=list,
                                    description="Authored answers in the character's voice, shown when no model "
                                                "speaks. 人物自身の言葉での答え（モデルなしで表示）")
    repeatable: bool = Field(default=False,
                             description="Whether its lines may be said again once each has been said (default: "
                                         "each line once per game). 繰り返してよいか")
    choice: str | None = Field(default=None,
                               description="The choice this entry settles (載せる写真): entries sharing it are its "
                                           "options; one is taken only from a line that chooses (not a question or "
                                           "an offer naming it), once taken the others no longer answer, and a "
                                           "question which was chosen (結局どっちにしたの？) gets its line again. "
                                           "どの選択を決める知識か")
    about: list[str] = Field(default_factory=list,
                             description="Character ids this entry is a fact about (their name, age, work, tastes, "
                                         "how they know each other): it answers a question about one of them — "
                                         "named (ママの名前, 葵ちゃんって…), or the one asked when nobody else is "
                                         "(お名前は？) — before a topic word elsewhere in the line. "
                                         "誰についての事実か",
                             json_schema_extra={"items": {"type": "string", "pattern": ID_PATTERN}})
    until: str = Field(default="",
                       description="When this entry stops holding, by the story so far: terms of lines shown and "
                                   "flags set (済:ID, 未:ID, フラグ:NAME) joined by ' + ' or ' | ' (e.g. "
                                   "'済:B07 | フラグ:救われた'); empty = it holds for the whole game. "
                                   "いつまで成り立つ知識か（この条件が成り立ったら使わない）")
    subject: list[str] = Field(default_factory=list,
                               description="Words naming the one particular person or thing this entry is about "
                                           "(先代, クロ) when its `words` alone do not (元気, 今どうして, 何年): "
                                           "its words then count only when the line, or the exchange just before "
                                           "it, names one of these (「先代は今もお元気？」, or 「まだお元気なの？」 "
                                           "right after 先代 was talked about). この知識が誰・何についてか（主題の語）")


class Fallback(_Strict):
    id: str = _id_field("Unique id of the fallback line. 定型の返事のID")
    text: str = Field(description="Shown when free conversation cannot produce a usable reply. "
                                  "自由会話が使えないときに表示する台詞")
    expression: str | None = Field(default=None, description=_EXPRESSION_DESCRIPTION)


class Character(_Strict):
    id: str = _id_field("Speaker id used everywhere (lines, places, effects). 人物ID")
    name: str = Field(description="Short display name. 表示名")
    aliases: list[str] = Field(default_factory=list,
                               description="How the player may address this character. 呼びかけに使える別名")
    profile: str = Field(default="", description="Persona for free conversation. 自由会話用の人物設定")
    expressions: list[str] = Field(default_factory=lambda: [NEUTRAL],
                                   description="Expression keys this character has images for; 'neutral' is always "
                                               "the fallback. 表情キー（neutral は常に使える）")
    knowledge: list[Knowledge] = Field(default_factory=list,
                                       description="Opinions used as context for free conversation. 人物の知識")
    fallbacks: list[Fallback] = Field(default_factory=list,
                                      description="Lines shown when free conversation fails. 生成失敗時の台詞")
    reactions: list[Reaction] = Field(default_factory=list,
                                      description="Short lines per dialogue act, answered when no scripted line, "
                                                  "knowledge line or model does. 発話の種類ごとの反応")
    menu: Menu | None = Field(default=None, description="What this character serves. 品書き")
    recall: LineSet | None = Field(default=None,
                                   description="Lead-ins for saying again what the character said before, when "
                                               "the player asks about it: {said} stands for the sentence "
                                               "(「言ったでしょ、{said}」). 前に言ったことを言い直す台詞")
    clarify: LineSet | None = Field(default=None,
                                    description="Questions asking which of two topics the player means: {1} and "
                                                "{2} stand for the topics' names (「{1}？　それとも{2}？」). "
                                                "聞き返しの台詞")
    chatter: LineSet | None = Field(default=None,
                                    description="Things the character brings up on their own when the player's "
                                                "line is small talk nothing else answers (mode once by default). "
                                                "自分から振る話")
    echo: LineSet | None = Field(default=None,
                                 description="Lines that take up what the player talked about when nothing authored "
                                             "covers it: {word} stands for the thing the line is about "
                                             "(「{word}？　私は詳しくないけど、好きなの？」). 話題を受ける台詞")
    told: LineSet | None = Field(default=None,
                                 description="Lines for what the player tells of their own life a second time "
                                             "(their job, a pastime): {word} stands for it (「{word}だったわね。"
                                             "覚えてるわよ」). 客が前にも話した身の上を覚えている台詞")
    forms: Forms | None = Field(default=None,
                                description="Answers to questions and requests of a known form (may I…?, shall I…?, "
                                            "please…, do you like…?, is there…?, so it is agreed?) that nothing "
                                            "authored answers. 型で答える台詞")
    unsure: LineSet | None = Field(default=None,
                                   description="Honest answers to a question about the character themselves (their "
                                               "plans, their past, what they think) that nothing authored answers: "
                                               "not knowing yet, thinking it over, in their voice "
                                               "(「うーん……まだ決めてないんだ。」); {word}, if a line holds it, stands for "
                                               "what the question is about. 自分のことを聞かれて答えが用意されていないときの台詞")
    voice: CharacterVoice | None = Field(default=None,
                                         description="The stage's voice for this character (a Kokoro voice and a "
                                                     "speed); absent: the character manifest's, else jf_alpha at "
                                                     "1.0. 読み上げの声")


class CharacterVoice(_Strict):
    """The stage's own voice for a character (docs/stage.md, "Voice"). 読み上げの声"""
    kokoro: str = Field(default=DEFAULT_VOICE, description="One of the Kokoro voices: " + ", ".join(VOICES) + ". 声",
                        json_schema_extra={"enum": list(VOICES)})
    speed: float = Field(default=DEFAULT_SPEED, ge=SPEED_MIN, le=SPEED_MAX,
                         description="1.0 is the voice's own pace; 1.2 a fifth faster. 話す速さ")

    @field_validator("kokoro")
    @classmethod
    def _known(cls, value: str) -> str:
        if not is_voice(value):
            raise ValueError(unknown_voice(value))
        return value


class Place(_Strict):
    id: str = _id_field("Place id. 場所ID")
    aliases: list[str] = Field(default_factory=list,
                               description="Other names a player may use for this place. 場所の別名")
    people: list[str] = _id_list("Character ids present here. その場にいる人物ID")
    responder: str | None = Field(default=None,
                                  description="Who answers by default here (a character id); defaults to the first "
                                              "of people. 既定の応答者",
                                  json_schema_extra={"pattern": ID_PATTERN})
    exits: list[str] = _id_list("Place ids reachable from here. ここから行ける場所ID")
    arrival: Arrival | None = Field(default=None, description="Arrival reactions. 到着時の反応")
    ending: Ending | None = Field(default=None,
                                  description="Leaving (離脱) here ends the game with these closing lines and an "
                                              "ending card; absent: leaving lists the exits. ここを離れると終幕")
    endings: list[Ending] = Field(default_factory=list,
                                  description="Several endings: leaving (離脱) here ends the game with the first whose "
                                              "condition holds (then `ending`, if given, as the last); when none "
                                              "holds, leaving lists the exits. 条件つきの終幕（上から順に）")
    enter_phrases: list[str] = Field(
        default_factory=list,
        description="Phrases that mean going to this place, in dictionary form (湯に入る, 二階に上がる): said in a "
                    "committing form (湯に入ろう, 二階に上がります) where this place is an exit, they move the player "
                    "here. ここへ行くことを表す言い回し")
    leave_phrases: list[str] = Field(
        default_factory=list,
        description="Phrases that mean leaving this place, in dictionary form (湯から上がる, 風呂を出る): said here "
                    "in a committing form (上がります), they are 離脱 (the exits, or this place's ending), like the "
                    "scenario's leave_phrases but only here. ここを離れることを表す言い回し")


class Intent(_Strict):
    id: str = _id_field("Intent id, used as 意図:ID in conditions. 話題ID")
    description: str = Field(description="What the input is about; read by the classifier model. モデルが読む説明")
    examples: list[str] = Field(default_factory=list, description="Player phrasings. プレイヤーの言い方の例")
    words: list[str] = Field(default_factory=list,
                             description="Narrowing words: the intent is offered only when the input contains one "
                                         "of them; empty = no narrowing. 絞り込み語（空なら絞り込まない）")
    name: str | None = Field(default=None,
                             description="How a character names this topic when asking which one the player means, "
                                         "as a phrase (お店の音楽のこと); default: 「<id>のこと」. 聞き返しで使う話題の呼び名")


class Line(_Strict):
    id: str = _id_field("Line id, unique in the scenario; used by 済:/未:/直後:. 台詞ID")
    speaker: str = _id_field("Character id of the speaker. 話者の人物ID")
    condition: str = Field(description="When the line may fire: terms joined by ' + ' (all hold) or ' | ' (either "
                                       "holds), grouped with parentheses — 意図:X, 移動:P, 離脱, なし, 入力, 開始, 到着, "
                                       "済:ID, 未:ID, 直後:ID, フラグ:NAME. 表示条件")
    effects: list[str] = Field(default_factory=list,
                               description="Effects applied when the line fires: 表情:CHARACTER:KEY sets a face, "
                                           "フラグ:NAME sets a flag. 演出",
                               json_schema_extra={"items": {"type": "string", "pattern": EFFECT_PATTERN}})
    text: str = Field(description="Shown verbatim. そのまま表示する本文")
    repeatable: bool = Field(default=False,
                             description="Whether the line may fire again when its condition holds again (default: "
                                         "once per game). 繰り返し出してよいか")
    replies: Replies | None = Field(default=None, description=_REPLIES_DESCRIPTION)


class Scene(_Strict):
    place: str = _id_field("Place id this scene belongs to. 場面の場所ID")
    lines: list[Line] = Field(default_factory=list, description="Lines in priority order. 台詞（ファイル順が優先順）")


class ClarifySettings(_Strict):
    """When two topics fit a player's line alike, a character asks which one the player means."""
    ask: bool = Field(default=True, description="Ask which one (true, the default) or take the better guess "
                                                "(false). 聞き返すか")
    ambiguous: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Words known to name two or more topics (看板: 店名と看板, メニュー); a line naming one of them "
                    "and nothing that settles it is asked about. 複数の話題を指しうる語")


class Start(_Strict):
    place: str = _id_field("Place id where a new game starts. 開始場所")


class Scenario(_Strict):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True,
                              title="butai scenario",
                              json_schema_extra={"description": "A butai scenario (台本). See docs/scenario-format.md."})

    schema_: str | None = Field(default=None, alias="$schema",
                                description="Optional JSON Schema reference for editors; ignored by butai.")
    title: str = Field(description="Display title, shown to players on the page. 表示タイトル")
    start: Start = Field(description="Where a new game starts. 開始地点")
    characters: list[Character] = Field(default_factory=list, description="Characters. 登場人物")
    places: list[Place] = Field(default_factory=list, description="Places. 場所")
    intents: list[Intent] = Field(default_factory=list, description="Intents (topics). 話題")
    leave_phrases: list[str] = Field(
        default_factory=list,
        description="Phrases of this world that mean leaving when the player ends a sentence with them in a "
                    "committing form (店を出る → 店を出よう, 店を出ます). この世界で「立ち去る」を表す言い回し")
    scenes: list[Scene] = Field(default_factory=list, description="One scene per place, holding its lines. 場面")
    clarify: ClarifySettings = Field(default_factory=ClarifySettings,
                                     description="Asking which topic the player means. 聞き返しの設定")


JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def scenario_json_schema() -> dict[str, Any]:
    schema = Scenario.model_json_schema(by_alias=True)
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}
