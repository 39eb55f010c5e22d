"""Prompts for the model backends, from the jinja2 templates in ``templates/``.

- ``instructions.j2``: the HOW (role and rules of the choice), the same for
  every call; sent as the system message.
- ``prompt.j2``: the WHAT of one call: options (answer label, description,
  examples), place, people present, the last line said to the player and
  the player's text, neutralised so it cannot open a new section.

The context budget and the text's neutralisation are the model layer's
(`chalicelib.llm.prompt`): the budget keeps ``reserve`` tokens for the answer
and drops the examples first when the prompt is too long.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..llm.prompt import (  # noqa: F401  (the budget and the text's hygiene are the model layer's)
    ANSWER_RESERVE,
    MAX_TEXT_CHARS,
    PromptFit,
    fit_prompt,
    neutralise,
)
from .options import NONE_ANSWER, InterpretChoices, InterpretContext

TEMPLATES = Path(__file__).resolve().parent / "templates"


@lru_cache(maxsize=8)
def _environment(directory: str):
    # Imported on first use: the embedded lexical backend never renders a prompt.
    import jinja2
    return jinja2.Environment(loader=jinja2.FileSystemLoader(directory), autoescape=False, trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=False, undefined=jinja2.StrictUndefined)


@dataclass(frozen=True)
class PromptTemplates:
    directory: str = str(TEMPLATES)

    def instructions(self) -> str:
        return _environment(self.directory).get_template("instructions.j2").render(none_answer=NONE_ANSWER).strip()

    def prompt(self, text: str, choices: InterpretChoices, context: InterpretContext, answers: dict[str, str],
               *, with_examples: bool = True, people: Sequence[str] | None = None,
               addressee: str | None = None, text_limit: int = MAX_TEXT_CHARS) -> str:
        options = [{"answer": answers[o.token], "label": o.label, "examples": list(o.examples)} for o in choices]
        if people is None:
            people = [p.name if p.name == p.id else f"{p.id}（{p.name}）" for p in context.people]
        values: dict[str, Any] = {
            "options": options, "with_examples": with_examples, "none_answer": NONE_ANSWER,
            "place": context.place, "people": list(people),
            "last_speaker": context.last_speaker or "", "last_line": context.last_line or "",
            "addressee": addressee or "", "text": neutralise(text, text_limit),
        }
        return _environment(self.directory).get_template("prompt.j2").render(**values).strip()
