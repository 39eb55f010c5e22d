"""`lexicon`: the embedded expression judge — no model, pure Python.

A line is read sentence by sentence against a lexicon of Japanese emotion
cues (嬉しい/ありがとう → smile, えっ/まさか → surprised, ごめん → troubled,
恥ずかしい → embarrassed, 任せて → determined, いい加減に → angry …).
Each cue adds its weight to its family, adjusted by what surrounds it:

- **negation**: a negatable cue followed by a negative ending (嬉しくない,
  心配しないで, 怒ってない) no longer counts for its family; a denied joy
  reads as trouble, a denied worry as reassurance, a denied anger as nothing;
- **hypotheticals** (楽しくなかったら, 楽しいかどうか) barely count;
- **questions**: asking whether someone is glad or worried (楽しい？,
  大丈夫？) is not being so, so those cues count less; surprise keeps its
  weight;
- **exclamations** strengthen and **later sentences** weigh more (the point
  of a Japanese line tends to come last);
- **vetoes**: a line that apologises or is angry never gets a smile.

The family with the most weight wins when it reaches ``threshold`` and is
one of the character's keys; otherwise the answer is ``neutral``.  The
defaults were tuned on the dev split of ``scenarios/eval/expression.json``.
"""
from __future__ import annotations

import re
import time
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from .. import lazyre
from ..faces import NEUTRAL
from .judgment import ExpressionChoice, Judgment, family

# (pattern, weight, negatable).  Patterns are matched on NFKC text.
_CUES: dict[str, list[tuple[str, float, bool]]] = {
    "smile": [
        (r"嬉し|うれし|喜ん|よろこん|楽し(?!み)|たのし|幸せ|しあわせ|大好き", 1.2, True),
        (r"ありがと|ありがたい|感謝|おめでと|よかった|良かった|助か(?:る|った|り)|最高|素敵|すてき|素晴らし"
         r"|やった(?!ら)|やったー|わーい|待ってた|会えて|来てくれ|懐かし|なつかし|面白|おもしろ|いい感じ"
         r"|元気(?:出|で)た|ふふ|うふふ|あはは|はは(?:っ|は)", 1.2, False),
        (r"好き|楽しみ|いらっしゃい|よく来た|美味し|おいし|いいね|さすが|すごい|♪|大丈夫|平気", 0.6, False),
    ],
    "surprised": [
        (r"(?:^|[、。！？!?\s…])え[っ、？！?!…]|ええっ|まさか|信じられ|びっくり|驚|冗談だろ|いつの間に|なんだって"
         r"|何だって|(?:^|[、。！？\s])(?:あれ|おや|あら)[、っ!！?？]|わっ|(?:嘘|うそ)(?:でしょ|だろ|[、！!っ])"
         r"|本当(?:です)?か[？?!！]|(?:本当|ほんと)に?[？?]", 1.3, False),
        (r"[！!][？?]|[？?][！!]", 0.7, False),
    ],
    "troubled": [
        (r"ごめん|すみません|すまない|すまん|申し訳|悪いけど|悪いね|残念", 1.3, False),
        (r"困(?:った|る|り|って)|どうしよう|悲し|かなし|寂し|さびし|淋し|心配|不安|辛い|つらい|痛い|失敗|迷惑|悩"
         r"|怖|こわい|泣|ため息|無理|落ち込|がっかり|参った|まいった|眠れな|ミス", 1.3, True),
        (r"ばっかり|ばかり|はぁ|いなくなっ|減って|切れちま|折れ|バレ|帰りたい", 0.6, False),
        (r"…$", 0.3, False),
    ],
    "embarrassed": [
        (r"恥ずかし|はずかし|照れ|てれる|赤くな|赤面|見つめないで|褒めないで|ほめないで|褒められ|褒めても"
         r"|からかわないで|えへへ|ドキドキ|どきどき|そういうのじゃない|誤解しないで|(?:可愛い|かわいい)なんて"
         r"|笑わないで|寝癖|あの、その", 1.3, True),
        (r"見ないで", 0.8, False),
        (r"(?:^|[、。…\s])([ぁ-ん])、\1", 1.0, False),        # a stammer: そ、そんな
    ],
    "determined": [
        (r"任せ|まかせ|頑張|がんば|絶対|必ず|やってみせ|みせます|決めた|決めました|負けな|負けません|諦めな"
         r"|諦めません|あきらめな|迷いません|全力|やるぞ|やります|覚悟|きっとできる|できます[!！]", 1.3, False),
    ],
    "angry": [
        (r"怒|いい加減に|ふざけ|許さない|許せない|何度言ったら|うるさい|黙って|出ていけ|出ていき|出て行|最低"
         r"|ムカつ|むかつ|腹が立|頭にく|勝手|冗談じゃない|とんでもない|ひど(?:い|すぎ)|分かってくれない"
         r"|わかってくれない|騒がないで|しなさい|静かに|悪口|もう知らない|何様", 1.5, True),
    ],
}
# Cues that forbid a smile on the line they are in.
_VETO_SMILE = lazyre.compile(r"ごめん|すみません|すまない|すまん|申し訳|悪いけど|残念|いい加減に|許さない|許せない|ふざけ")
# What a negated cue turns into, and how much of it is kept.
_NEGATED = {"smile": ("troubled", 0.7), "troubled": ("smile", 0.7)}

# Negative endings right after a cue, within its run of kana: 嬉しくない, 心配しないで, 怒ってない.
_NEGATION = lazyre.compile(r"(?:ない|なかっ|なく|ません|ず(?![っつ]))")
_RHETORICAL = lazyre.compile(r"じゃない(?:か|の|？|\?)")
_HYPOTHETICAL = lazyre.compile(r"(?:たら|なら|れば|かどうか|ても)")
_KANA_RUN = lazyre.compile(r"[ぁ-んー]{0,8}")
_SENTENCES = lazyre.compile(r"[^。！？!?]+[。！？!?]*|[。！？!?]+")


@dataclass(frozen=True)
class LexiconTuning:
    threshold: float = 0.9            # least weight for a feeling to beat neutral
    neutral_weight: float = 0.8       # neutral's own weight in the scores
    question_factor: float = 0.4      # glad / worried cues inside a question
    exclamation_factor: float = 1.15  # cues in a sentence ending with ！
    hypothetical_factor: float = 0.2  # 楽しくなかったら, 楽しいかどうか
    late_bonus: float = 0.3           # the last sentence weighs this much more than the first


@lru_cache(maxsize=1)
def _compiled() -> list[tuple[str, re.Pattern[str], float, bool]]:
    # On the first judged line, not at import: a new instance whose first request is a scripted turn
    # (every line with its authored face) does not compile them.
    return [(fam, re.compile(pattern), weight, negatable)
            for fam, entries in _CUES.items() for pattern, weight, negatable in entries]


class LexiconJudge:
    name = "lexicon"

    def __init__(self, tuning: LexiconTuning | None = None, **overrides: float) -> None:
        base = tuning or LexiconTuning()
        if overrides:
            known = {k: float(v) for k, v in overrides.items() if k in LexiconTuning.__dataclass_fields__}
            base = LexiconTuning(**{**base.__dict__, **known})
        self.tuning = base

    def weights(self, text: str) -> tuple[dict[str, float], list[str]]:
        """Weight per family of feeling, and the cues found (for the debug record)."""
        s = self.tuning
        # NFKC turns … into "..."; the cues are written with …
        text = unicodedata.normalize("NFKC", text).replace("...", "…").strip()
        weights: dict[str, float] = {}
        cues: list[str] = []
        sentences = [m for m in _SENTENCES.finditer(text) if m.group().strip()]
        last = max(1, len(sentences) - 1)
        for index, sentence in enumerate(sentences):
            body = sentence.group()
            stripped = body.rstrip("。…　 ")
            question = stripped.endswith(("？", "?")) and not stripped.endswith(("！？", "!?", "？！", "?!"))
            exclaimed = stripped.endswith(("！", "!"))
            position = 1.0 + s.late_bonus * (index / last if len(sentences) > 1 else 1.0)
            for fam, pattern, weight, negatable in _compiled():
                for m in pattern.finditer(body):
                    target, w = fam, weight * position
                    tail = run.group() if (run := _KANA_RUN.match(body, m.end())) else ""
                    if _HYPOTHETICAL.search(tail):
                        w *= s.hypothetical_factor
                    elif (negatable and _NEGATION.search(tail) and not _RHETORICAL.match(tail)
                          and not (fam == "angry" and tail.endswith("ないで"))):   # ふざけないで: still angry
                        flipped = _NEGATED.get(fam)
                        if flipped is None:
                            cues.append(f"{m.group()}{tail}:not-{fam}")
                            continue
                        target, w = flipped[0], w * flipped[1]
                    if question and target in ("smile", "troubled", "determined"):
                        w *= s.question_factor
                    if exclaimed:
                        w *= s.exclamation_factor
                    weights[target] = weights.get(target, 0.0) + w
                    cues.append(f"{m.group()}:{target}")
        if _VETO_SMILE.search(text) and "smile" in weights:
            weights["smile"] = 0.0
            cues.append("veto:smile")
        return weights, cues

    def judge(self, text: str, choice: ExpressionChoice) -> Judgment:
        start = time.perf_counter()
        result = Judgment(judge=self.name)
        try:
            weights, result.cues = self.weights(text)
            s = self.tuning
            offered: dict[str, float] = {}
            for key in choice.keys:
                offered[key] = s.neutral_weight if key == NEUTRAL else weights.get(family(key) or "", 0.0)
            total = sum(offered.values()) or 1.0
            result.scores = {k: v / total for k, v in offered.items()}
            best = max((k for k in choice.keys if k != NEUTRAL), key=lambda k: offered[k], default=NEUTRAL)
            result.expression = best if best != NEUTRAL and offered[best] >= s.threshold else NEUTRAL
        except Exception as exc:      # a line must always get a face
            result.expression, result.error = NEUTRAL, "internal"
            result.detail = f"{type(exc).__name__}: {exc}"
        result.elapsed_ms = (time.perf_counter() - start) * 1000.0
        return result
