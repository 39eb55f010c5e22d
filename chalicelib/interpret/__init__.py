"""Input interpretation: a player's free Japanese text → one of the current
state's candidates, or なし.

The game loop needs one call::

    from chalicelib.interpret import Interpreter, build_backend

    interpreter = Interpreter(rules, build_backend("lexical"))  # the services: context.build_models(settings)
    turn = interpreter.interpret_turn(text, state, addressee=None)
    step = rules.handle(turn.input, state, turn.addressee)
    log(turn.debug.to_json())                               # the typed record (turn_record.py)

Parts: `InterpretChoices` (candidates with tokens), addressee detection and
narrowing, word narrowing and refinement (`RefinedInterpreter`), prompts and
context budget, and four backends with one interface (`lexical`,
`sagemaker`, `openai`, `transformers`).  See docs/interpretation.md.
"""
from .addressee import AddresseeFound, addressee_narrowing, detect_addressee
from .backends import BACKENDS, Backend, LexicalBackend, build_backend
from .interpreter import Interpreter, TurnResult
from .options import (
    LEAVE_LABEL,
    NONE_ANSWER,
    ErrorKind,
    Interpretation,
    InterpretChoices,
    InterpretContext,
    Option,
    Person,
    move_label,
)
from .refine import RULES, RefinedInterpreter, refine
from .text import PlainMatcher, TextForms, WordMatcher, make_matcher

__all__ = [
    "AddresseeFound", "BACKENDS", "Backend", "ErrorKind", "InterpretChoices", "InterpretContext",
    "Interpretation", "Interpreter", "LEAVE_LABEL", "LexicalBackend", "NONE_ANSWER", "Option", "Person",
    "PlainMatcher", "RULES", "RefinedInterpreter", "TextForms", "TurnResult", "WordMatcher", "addressee_narrowing",
    "build_backend", "detect_addressee", "make_matcher", "move_label", "refine",
]
