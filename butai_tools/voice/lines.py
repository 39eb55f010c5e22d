"""Every authored line of a scenario, with who says it: what `butai voice render` renders ahead.

The walk is over the scenario format itself (chalicelib/scenario/model.py), so a kind of line the format
gains later is found without a list here to keep in step: a model with a ``text`` is a line when someone
says it — the ``speaker`` it names (scripted lines, arrival and closing lines), else the character whose
sets hold it (reactions, knowledge lines, menu lines, fallbacks, forms …); an answer to a reply is said by
the one who asked.  An ending card's text is read by nobody: it has no speaker.  A line with slots
({item}, {total}) is filled at turn time: its fixed parts — the sentences without a slot — are rendered
ahead, and the filled line at turn time from them and its other sentences.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pydantic import BaseModel

from chalicelib.scenario.loader import CompiledScenario
from chalicelib.scenario.model import Character
from chalicelib.voices import fixed_parts, has_slot


@dataclass(frozen=True)
class AuthoredLine:
    character: str
    text: str
    where: str           # where in the scenario (for reports)

    @property
    def template(self) -> bool:
        return has_slot(self.text)

    def to_render(self) -> list[str]:
        """What is rendered ahead for it: the line itself, or a template's fixed parts."""
        return fixed_parts(self.text) if self.template else [self.text.strip()] if self.text.strip() else []


def authored_lines(scenario: CompiledScenario) -> list[AuthoredLine]:
    """Every line someone says, once per (character, text), in the scenario's order."""
    seen: set[tuple[str, str]] = set()
    out = []
    for line in _walk(scenario.scenario, None, "scenario"):
        if (line.character, line.text) not in seen and line.character in scenario.characters:
            seen.add((line.character, line.text))
            out.append(line)
    return out


def _walk(node: object, speaker: str | None, where: str) -> Iterator[AuthoredLine]:
    if isinstance(node, BaseModel):
        fields = type(node).model_fields
        if isinstance(node, Character):
            speaker, where = node.id, f"character {node.id}"
        elif "speaker" in fields and isinstance(node.speaker, str):
            speaker = node.speaker
        text = getattr(node, "text", None) if "text" in fields else None
        if isinstance(text, str) and speaker is not None and text.strip():
            yield AuthoredLine(speaker, text, f"{where}: {type(node).__name__}")
        for name in fields:
            if name in ("text", "speaker"):
                continue
            yield from _walk(getattr(node, name), speaker, f"{where}.{name}" if where.count(".") < 3 else where)
    elif isinstance(node, (list, tuple)):
        for item in node:
            yield from _walk(item, speaker, where)
    elif isinstance(node, dict):
        for item in node.values():
            yield from _walk(item, speaker, where)
