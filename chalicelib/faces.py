"""Expression keys: the one place for the neutral face and the basic set.

A leaf module (it imports nothing), so every layer — the pure scenario rules
included — takes these facts from here.
"""
from enum import StrEnum

NEUTRAL = "neutral"
# The basic set every project-drawn character has (the stage design's §4.1); `neutral` first.
BASIC = (NEUTRAL, "smile", "troubled", "surprised", "embarrassed", "determined")


class ExpressionSource(StrEnum):
    """Who chose the face a line is shown with."""
    AGENT = "agent"      # the agent sent it, or the scenario's script set it
    AUTO = "auto"        # the stage judged it from the line's words
