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
from ..word_tables import FOLDER, read, spliced
from .judgment import ExpressionChoice, Judgment, family

# The cues of each family of feeling: (pattern, weight, negatable), each pattern named in the table.  Patterns
# are matched on NFKC text.
_CUES: dict[str, list[tuple[str, float, bool]]] = {
    "smile": [("smile_glad", 1.2, True), ("smile_thanks", 1.2, False), ("smile_mild", 0.6, False)],
    "surprised": [("surprised_words", 1.3, False), ("surprised_marks", 0.7, False)],
    "troubled": [("troubled_apology", 1.3, False), ("troubled_worry", 1.3, True), ("troubled_mild", 0.6, False),
                 ("troubled_trailing_off", 0.3, False)],
    "embarrassed": [("embarrassed_words", 1.3, True), ("embarrassed_looked_at", 0.8, False),
                    ("embarrassed_stammer", 1.0, False)],       # a stammer: そ、そんな
    "determined": [("determined_words", 1.3, False)],
    "angry": [("angry_words", 1.5, True)],
}
# What a negated cue turns into, and how much of it is kept.
_NEGATED = {"smile": ("troubled", 0.7), "troubled": ("smile", 0.7)}
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
def _patterns() -> dict[str, dict]:
    # (read by the lexicon's one rule, word_tables.py: expression/ sits below interpret/ and imports nothing of it)
    return dict(read(FOLDER, "expressions")["patterns"])


def _source(name: str) -> str:
    return spliced(_patterns(), "expressions", name)


@lru_cache(maxsize=1)
def _compiled() -> list[tuple[str, re.Pattern[str], float, bool]]:
    # On the first judged line, not at import: a new instance whose first request is a scripted turn
    # (every line with its authored face) neither reads the table nor compiles them.
    return [(fam, re.compile(_source(name)), weight, negatable)
            for fam, entries in _CUES.items() for name, weight, negatable in entries]


@dataclass(frozen=True)
class _Shapes:
    """What changes how a cue counts (lexicon table expressions), read on the first judged line."""
    veto_smile: re.Pattern[str]      # cues that forbid a smile on the line they are in
    negation: re.Pattern[str]        # negative endings right after a cue, in its run of kana: 嬉しくない, 心配しないで
    rhetorical: re.Pattern[str]      # 嬉しいじゃないか: no negation
    hypothetical: re.Pattern[str]    # 楽しくなかったら, 楽しいかどうか
    kana_run: re.Pattern[str]        # the run of kana after a cue
    still_angry: re.Pattern[str]     # an angry cue's run ending ないで stays angry: ふざけないで


@lru_cache(maxsize=1)
def _shapes() -> _Shapes:
    return _Shapes(*(lazyre.compile(_source(name)) for name in (
        "veto_smile", "negation_ending", "rhetorical", "hypothetical", "kana_run", "still_angry_ending")))


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
        shapes = _shapes()
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
                    tail = run.group() if (run := shapes.kana_run.match(body, m.end())) else ""
                    if shapes.hypothetical.search(tail):
                        w *= s.hypothetical_factor
                    elif (negatable and shapes.negation.search(tail) and not shapes.rhetorical.match(tail)
                          and not (fam == "angry" and shapes.still_angry.search(tail))):   # ふざけないで: still angry
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
        if shapes.veto_smile.search(text) and "smile" in weights:
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
