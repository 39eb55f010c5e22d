"""The stage reads the line: an expression judged from the words when the agent gives none.

``judge_from_env()`` builds the configured judge (``BUTAI_EXPRESSION_JUDGE``,
default the embedded ``lexicon``); ``judge.judge(text, ExpressionChoice.of(keys))``
answers one of the character's keys with a score per key.  See docs/stage.md.
"""
from .choice import ExpressionChoice, ExpressionJudge, Judgment, contradicts, family
from .judges import JUDGES, build_judge, describe, judge_from_env
from .lexicon import LexiconJudge

__all__ = ["ExpressionChoice", "ExpressionJudge", "JUDGES", "Judgment", "LexiconJudge", "build_judge",
           "contradicts", "describe", "family", "judge_from_env"]
