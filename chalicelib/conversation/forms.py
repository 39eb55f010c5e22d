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
from ..interpret.ja.tokens import TAG, Token
from ..interpret.lexicon import compiled, word_class
from ..interpret.text import nfkc
from ..scenario import GameState
from ..scenario.model import Character
from ..turn_record import AnswerSource
from .variety import Variety

_SENTENCE = lazyre.compile(r"[^。！？!?\n]*[。！？!?\n]+|[^。！？!?\n]+$")
# (each shape below is a pattern of the lexicon table forms.json, with its examples; a sentence's ending tail,
# 「？」「。」「…」 and the like, is part of each sentence pattern's source)
# 「撮影OKってことでいいですか？」「じゃあそれで決まりね？」「店内ならOKってこと？」
_CONFIRM = compiled("forms", "confirm", re.IGNORECASE)
# A verb's て then may-I: 「座っていい？」「座ってもいいですか」「ここ座っても？」「吸っても大丈夫？」
_MAY = compiled("forms", "may_i", re.IGNORECASE)
# A doing named by a noun or a verb and の, then may-I: 「撮影OKですか？」「撮るのは大丈夫？」「喫煙可能？」
_DOING_OK = compiled("forms", "doing_ok", re.IGNORECASE)
# 「入っちゃだめ？」「触ってはいけませんか」
_MUST_NOT = compiled("forms", "must_not")
# Letting the player do it: 撮らせて(もらえる/ください/ほしい)
_LET_ME = compiled("forms", "let_me")
# The one spoken to asked to do something: 「見せてくれる？」「かけてください」「撮ってもらっていい？」
# (「母がよく作ってくれたのを思い出します」: what someone did for one, told, asks nothing)
_ASK_TO_DO = compiled("forms", "ask_to_do")
# A thing asked for (「名刺もらえますか？」「おしぼりください」): what is not on the menu (an order is read before).
_GIVE_ME = compiled("forms", "give_me")
# A bare て-form at the end asks too: 「一曲かけて」「写真見せてよ」
_TE_END = compiled("forms", "te_end")
# 教えて, 聞かせて ask to be told: a question for knowledge, not a thing to do.
_TELL = compiled("forms", "tell")
# What may stand before a bare request's verb: a thing (一曲かけて, それ取って), its を or a pause, or a word that
# urges (ちょっと待って, 早く来て) — not a frame of a story told (雨に降られて, 彼女と別れて, 昨日行ってて).
_URGING = compiled("forms", "urging")
_OBJECT_OR_PAUSE = compiled("forms", "object_or_pause")
_HELPER_VERBS = compiled("forms", "helper_verbs")
# The player offering: 「手伝おうか」「僕が撮りましょうか」「持ってあげる」「運びますよ」
_VOLITIONAL_ASK = compiled("forms", "volitional_ask")
_FOR_YOU = compiled("forms", "for_you")
_I_DO = compiled("forms", "i_do")
_HELP = compiled("forms", "help")
# 「帰ろうかな」: musing, no offer
_WONDERING = compiled("forms", "wondering_end")
# Do you like …?: 好き (not 好きな+noun: 「好きな歌手は？」 asks which), 嫌い, 苦手, 得意, ハマってる, どう思う.
_LIKE = compiled("forms", "like")
# 「猫好き？」 read as one noun: the word of liking taken off the thing liked
_LIKING_SUFFIX = compiled("forms", "liking_suffix")
# Is there …?: ある/あります/置いてる, not 〜したことある (what someone did) nor 〜てある.
_THERE_IS = compiled("forms", "there_is")
_THERE_IS_NOT = compiled("forms", "there_is_not")
# (the particles between a thing and the ない of 灰皿はない？)
_TOPIC_PARTICLES = compiled("forms", "topic_particles")


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
    return token is not None and token.pos[:2] == (TAG.particle, TAG.conjunctive_particle)


def _bare_request(tokens: list[Token], start: int) -> bool:
    """The て at `start` ends a bare request (「一曲かけて」「ちょっと待って」): a plain verb right before it (not a
    passive, 〜ちゃって, an adjective's 〜くて), and before the verb only a thing, its を or an urging word."""
    at = next((i for i, t in enumerate(tokens) if t.start == start), None)
    if at is None or at == 0 or tokens[at].pos[:2] != (TAG.particle, TAG.conjunctive_particle):
        return False
    verb = tokens[at - 1]
    if verb.pos[:1] != (TAG.verb,) or _HELPER_VERBS.fullmatch(verb.lemma):
        return False
    if at == 1:
        return True
    before = tokens[at - 2]
    return before.pos[:1] in ((TAG.noun,), (TAG.pronoun,)) or bool(_OBJECT_OR_PAUSE.fullmatch(before.surface)) or \
        bool(_URGING.fullmatch(before.surface))


# Doings whose 大丈夫？ asks how someone is, not leave: 「仕事大丈夫？」「体調大丈夫？」
_WELLBEING = compiled("forms", "wellbeing_doings")
# (what may stand between the doing and the OK: 撮影は大丈夫？; the OKs that may also ask how one is)
_BETWEEN_DOING_AND_OK = compiled("forms", "between_doing_and_ok")
_LEAVE_WORDS = compiled("forms", "leave_words")


def _doing_before(tokens: list[Token], found: re.Match[str]) -> bool:
    """A doing before the OK asked (a verb and の: 撮るのは大丈夫; a noun: 撮影OK, 持ち込み可能), は/って/も
    between allowed — not wellbeing (「体調大丈夫？」「仕事大丈夫なの？」), nor a thing or a person (「ママ大丈夫？」)."""
    start = found.start("no") if found.group("no") else found.start("ok")
    before = [t for t in tokens if t.end <= start and not _BETWEEN_DOING_AND_OK.fullmatch(t.surface)]
    if not before:
        return False
    if found.group("no"):
        return before[-1].pos[:1] in ((TAG.verb,), (TAG.auxiliary,))
    noun = before[-1]
    if noun.pos[:2] != (TAG.noun, TAG.common_noun):
        return False
    if _LEAVE_WORDS.fullmatch(found.group("ok").lower()):
        # (「撮影大丈夫？」 asks leave; 「仕事大丈夫？」「体調大丈夫？」 ask how one is)
        return TAG.may_take_suru in noun.pos and not _WELLBEING.fullmatch(noun.lemma)
    return True


_CAUSATIVE = compiled("forms", "causative")


def _lets(tokens: list[Token]) -> bool:
    """A causative せる/させる: the player asks to be let do it (撮らせて), not 見せて (to show)."""
    return any(t.pos[:1] == (TAG.auxiliary,) and _CAUSATIVE.fullmatch(t.lemma) for t in tokens)


def _none_here(tokens: list[Token], start: int) -> bool:
    """The ない at `start` says there is none (灰皿ない？), not a verb negated (行かない？: an invitation)."""
    at = next((i for i, t in enumerate(tokens) if t.start == start), None)
    if at is None or at == 0 or tokens[at].pos[:1] != (TAG.adjective,):
        return False
    # (a thing, or a thing and は/も/って: not 〜じゃない, 〜くない, an opinion asked for agreement)
    before = tokens[at - 1]
    return before.pos[:1] in ((TAG.noun,), (TAG.pronoun,)) or \
        (bool(_TOPIC_PARTICLES.fullmatch(before.surface)) and at >= 2 and
         tokens[at - 2].pos[:1] in ((TAG.noun,), (TAG.pronoun,)))


# Serving and helping verbs a guest offers to do (「運びますよ」「洗いましょうか」「注ぎます」).
_SERVICE = compiled("forms", "service_verbs")
_SERVICE_END = compiled("forms", "service_end")


def _serves(tokens: list[Token], sentence: str) -> bool:
    """A serving or helping verb in a plain statement of what the player will do (「運びますよ」)."""
    return bool(_SERVICE_END.search(sentence)) and any(t.pos[:1] == (TAG.verb,) and _SERVICE.fullmatch(t.lemma) for t in tokens)


_POLITE = compiled("forms", "polite_auxiliary")


def _volitional(tokens: list[Token]) -> bool:
    """A verb in its volitional form, or ましょう after one (手伝おう, 撮りましょう): the speaker means to do it."""
    return any(t.conjugation.startswith(TAG.volitional) and (t.pos[:1] == (TAG.verb,) or bool(_POLITE.fullmatch(t.lemma)))
               for t in tokens)


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
            (before := [t for t in tokens if t.end <= found.start("give")]) and before[-1].pos[:1] == (TAG.noun,):
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
            not _WONDERING.search(sentence):
        return FormFound("offer", found.group(0))
    if (found := _TE_END.search(sentence)) is not None and _bare_request(tokens, found.start("te")) and \
            not _TELL.search(sentence):
        return FormFound("request", found.group(0))
    asking = is_question(sentence)
    if asking and (found := _LIKE.search(sentence)) is not None:
        return FormFound("preference", found.group(0))
    if word_class("not_kept").search(sentence) is not None:
        return None          # 「何か面白い話ある？」「時間ある？」「つもりある？」: a story, time, an intention — no thing kept
    if asking and (found := _THERE_IS.search(sentence)) is not None and not _told_of_as_had(tokens, found.start()):
        return FormFound("have", found.group(0).strip())
    if (found := _THERE_IS_NOT.search(sentence)) is not None and _none_here(tokens, found.start("nai")):
        return FormFound("have", found.group(0))
    return None


def _told_of_as_had(tokens: list[Token], at: int) -> bool:
    """Whether the thing asked of right before `at` is told by a clause in the past (「最近観て良かった映画ある？」
    「最近読んだ本ある？」): what the one asked saw or did, asked of their experience — no thing kept here."""
    before = [t for t in tokens if t.end <= at and not t.is_mark]
    while before and before[-1].is_particle:
        before.pop()
    i = len(before)
    while i and (before[i - 1].is_noun or before[i - 1].is_prefix or before[i - 1].pos[:1] == (TAG.suffix,)):
        i -= 1
    if i == len(before) or i < 2:
        return False
    ending, stem = before[i - 1], before[i - 2]
    return ending.pos[:1] == (TAG.auxiliary,) and ending.conjugation.startswith(TAG.attributive) and \
        stem.pos[:1] in ((TAG.verb,), (TAG.adjective,)) and stem.conjugation.startswith(TAG.continuative)


# How are you (「元気？」「最近どう？」「調子はどう？」「お変わりありませんか」), after whom it asks of (`who`: empty, a
# call, a name): the sentence is nothing else.
_HOW_ARE_YOU = compiled("forms", "how_are_you")
# 「最近どう？」「その後どう？」: how things are since, only after a word of time
_HOW_SINCE = compiled("forms", "how_since")


def wellbeing(sentence: str) -> FormFound | None:
    """「元気？」「ママ、最近どう？」: how the one spoken to is; the cue is whom it names before, if anyone."""
    found = _HOW_ARE_YOU.match(sentence) or _HOW_SINCE.match(sentence)
    if found is None:
        return None
    groups = ("who", "who2", "who3") if found.re.pattern == _HOW_ARE_YOU.pattern else ("who",)
    return FormFound("wellbeing", next((found.group(g) for g in groups if found.group(g)), ""))


# Asking what the one spoken to thinks or would do: 「どう思います？」「どうしたらいいかな」「アドバイスください」
_VIEW_ASKED = compiled("forms", "view_asked")
# Matters of the player's own life a character can be asked about (the thing is echoed as {word}).
_OWN_MATTER = compiled("forms", "own_matter")
# 「葵ちゃんの夢」「お店の将来」「ママの仕事」: someone else's matter (a person called by an honorific or a role, the
# shop); 「映像系の会社」「俺の将来」 stay the player's own.
_SOMEONES = compiled("forms", "someones")
# A line with a wh-word still has a form when it asks a view or how something is (「この曲ってどう？」)
_VIEW_OR_HOW = compiled("forms", "view_or_how_asked")


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
        if wh is not None and not _VIEW_OR_HOW.search(sentence):
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
        word = _LIKING_SUFFIX.sub("", word) or None
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
