"""The stage reads the line: an expression judged from the words when the agent gives none.

``build_judge(name, **options)`` builds a judge (the process's settings say which:
``BUTAI_EXPRESSION_JUDGE``, default the embedded ``lexicon``; `chalicelib.context` builds it);
``judge.judge(text, ExpressionChoice.of(keys))`` answers one of the character's keys with a score
per key.  See docs/stage.md.
"""
from .judges import JUDGES, build_judge, describe
from .judgment import ExpressionChoice, ExpressionJudge, Judgment, contradicts, family
from .lexicon import LexiconJudge

__all__ = ["ExpressionChoice", "ExpressionJudge", "JUDGES", "Judgment", "LexiconJudge", "build_judge",
           "contradicts", "describe", "family"]
