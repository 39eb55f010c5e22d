"""A conversation that listens: the director's turn logic on top of interpretation and the rules.

`Conversation.play` (turn.py) reads a player's line against what was said — lines said (facts.py), the
open question (questions.py), orders (orders.py), an open clarification (clarify.py) — and answers without
repeating itself (variety.py).  Pure and model-free: the director gives it a model to call when it has one,
and writes what it returns in the turn's one conditional write; `butai trace` replays dialogues with it.
"""
from .book import LineBook
from .turn import Conversation, PlayedTurn

__all__ = ["Conversation", "LineBook", "PlayedTurn"]
