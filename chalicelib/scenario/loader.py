"""Loading a scenario: JSON → pydantic models → a compiled, indexed scenario.

Every mistake an author can make ends up as a `Problem` naming the file, the
place in the scenario (line id, intent, character, place), the term at fault
and what was expected.  All problems of a file are collected before raising,
so one run shows everything to fix.
"""
from __future__ import annotations

import difflib
import gc
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError

from .. import lazyre
from ..faces import NEUTRAL
from .conditions import (
    FLAG_PREFIX,
    AfterTerm,
    Condition,
    Effect,
    ExpressionEffect,
    FlagTerm,
    InputTerm,
    ShownTerm,
    TermSyntaxError,
    UnshownTerm,
    parse_condition,
    parse_effect,
)
from .inputs import PlayerInput
from .model import (
    ID_PATTERN,
    Character,
    Ending,
    EndingLine,
    Intent,
    Knowledge,
    Line,
    Menu,
    Place,
    PlaceLine,
    Reaction,
    Replies,
    Scenario,
    SpokenLine,
)

_ID_RE = lazyre.compile(ID_PATTERN)

# A hint is a suggestion, not a problem: `butai lint` shows hints only with --hints.
Severity = Literal["error", "warning", "hint"]


@dataclass(frozen=True)
class Problem:
    """One finding about a scenario file.  `where` is the author's coordinate
    ("line O2", "intent 音楽", "12:5" for JSON syntax)."""
    source: str
    where: str
    message: str
    term: str | None = None
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.source}:{self.where}: {self.message}"

    def format(self) -> str:
        """The lint form, with the severity after the location."""
        return f"{self.source}:{self.where}: {self.severity}: {self.message}"


class ScenarioError(Exception):
    """A scenario that cannot be loaded; `problems` lists every reason."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


# ---------------------------------------------------------------- compiled form

@dataclass(frozen=True, eq=False)
class CompiledLine:
    id: str
    speaker: str
    text: str
    place: str
    index: int            # position in its scene (file order = priority)
    condition: Condition
    effects: tuple[Effect, ...]
    model: Line

    @property
    def repeatable(self) -> bool:
        return self.model.repeatable

    def __repr__(self) -> str:
        return f"CompiledLine({self.id!r}, {str(self.condition)!r})"


@dataclass(frozen=True, eq=False)
class CompiledScene:
    """A place's lines, indexed by how a step looks for them."""
    place: str
    lines: tuple[CompiledLine, ...]
    responses: Mapping[PlayerInput, tuple[CompiledLine, ...]]
    starts: tuple[CompiledLine, ...]
    arrivals: tuple[CompiledLine, ...]
    progressions: tuple[CompiledLine, ...]
    chains: Mapping[str, tuple[CompiledLine, ...]]   # by the line id named in 直後:


@dataclass(frozen=True, eq=False)
class CompiledEnding:
    """One way a place's game can end: tried in order when the player leaves that place."""
    id: str
    place: str
    condition: Condition
    model: Ending
    lines: tuple[tuple[EndingLine, Condition], ...]    # the closing lines, each with when it is said

    @property
    def line_prefix(self) -> str:
        """How its closing lines are referred to: PLACE/ending#N for a place's one `ending` (as before
        `endings` existed), PLACE/ending/ID#N for one of its `endings`."""
        return f"{self.place}/ending" if self.id == f"{self.place}#default" else f"{self.place}/ending/{self.id}"


def place_endings(place: Place) -> list[Ending]:
    """A place's endings in the order they are tried: `endings`, then `ending` (the default)."""
    return [*place.endings, *([place.ending] if place.ending is not None else [])]


@dataclass(frozen=True, eq=False)
class CompiledKnowledge:
    character: str
    index: int             # 0-based position in the character's knowledge list
    entry: Knowledge
    condition: Condition

    @property
    def info(self) -> str:
        return self.entry.info

    @property
    def intents(self) -> tuple[str, ...]:
        return tuple(i.target_id for i in self.condition.inputs if i.is_intent)


EMPTY_SCENE_INDEX: Mapping[Any, Any] = MappingProxyType({})


@dataclass(frozen=True, eq=False)
class CompiledScenario:
    source: str
    scenario: Scenario
    characters: Mapping[str, Character]
    places: Mapping[str, Place]
    intents: Mapping[str, Intent]
    lines: Mapping[str, CompiledLine]
    scenes: Mapping[str, CompiledScene]
    knowledge: Mapping[str, tuple[CompiledKnowledge, ...]]
    intent_order: Mapping[str, int] = field(default_factory=dict)
    # character → act → the character's (first) reaction set for that act
    reactions: Mapping[str, Mapping[str, Reaction]] = field(default_factory=dict)
    # character → what they serve (only characters with a menu)
    menus: Mapping[str, Menu] = field(default_factory=dict)
    # every flag some order or line effect can set
    flags: frozenset[str] = frozenset()
    # place → its endings, in the order they are tried
    endings: Mapping[str, tuple[CompiledEnding, ...]] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return self.scenario.title

    @property
    def start_place(self) -> str:
        return self.scenario.start.place

    def responder(self, place_id: str) -> str | None:
        """Who answers by default at a place; the first person there when the
        scenario names nobody."""
        place = self.places[place_id]
        if place.responder is not None:
            return place.responder
        return place.people[0] if place.people else None

    def scene(self, place_id: str) -> CompiledScene:
        return self.scenes.get(place_id) or _empty_scene(place_id)


def _empty_scene(place_id: str) -> CompiledScene:
    return CompiledScene(place_id, (), EMPTY_SCENE_INDEX, (), (), (), EMPTY_SCENE_INDEX)


# ---------------------------------------------------------------- entry points

def load_scenario(path: str | os.PathLike[str]) -> CompiledScenario:
    source = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ScenarioError([Problem(source, "file", "cannot read the scenario: no such file")]) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError([Problem(source, "file", f"cannot read the scenario: not UTF-8 ({exc.reason} at byte "
                                                     f"{exc.start})")]) from None
    except OSError as exc:
        raise ScenarioError([Problem(source, "file", f"cannot read the scenario: {exc.strerror or exc}")]) from None
    return load_scenario_text(text, source=source)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Loading creates tens of thousands of objects and no garbage cycles; the
    cyclic collector would rescan them all many times over (it tripled load
    time at 10,000 lines), so it waits until the load is done."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_scenario_text(text: str, source: str = "<scenario>") -> CompiledScenario:
    with paused_gc():
        return load_scenario_data(parse_json(text, source), source=source)


def load_scenario_data(data: Any, source: str = "<scenario>") -> CompiledScenario:
    with paused_gc():
        if isinstance(data, Scenario):
            return compile_scenario(data, source)
        try:
            scenario = Scenario.model_validate(data)
        except ValidationError as exc:
            raise ScenarioError(_structural_problems(exc, data, source)) from None
        return compile_scenario(scenario, source)


def parse_json(text: str, source: str) -> Any:
    duplicates: list[Problem] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                owner = dict(pairs).get("id")
                where = f'object "{owner}"' if isinstance(owner, str) else "json"
                duplicates.append(Problem(source, where, f'duplicate key "{key}" in one JSON object; expected each '
                                                         f'key once (the later value would silently win)', key))
            seen[key] = value
        return seen

    try:
        data = json.loads(text, object_pairs_hook=pairs_hook)
    except json.JSONDecodeError as exc:
        raise ScenarioError([Problem(source, f"{exc.lineno}:{exc.colno}", f"invalid JSON: {exc.msg}")]) from None
    if duplicates:
        raise ScenarioError(duplicates)
    return data


# ---------------------------------------------------------------- structural problems

def _structural_problems(exc: ValidationError, raw: Any, source: str) -> list[Problem]:
    problems = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        where, rest = _where_for_loc(raw, loc)
        kind = err["type"]
        key = ".".join(str(p) for p in rest)
        if kind == "missing":
            message = f'missing required key "{key}"'
        elif kind == "extra_forbidden":
            expected = _field_names(_model_at(loc[:-1]))
            message = f'unknown key "{loc[-1]}"; expected one of {", ".join(expected)}{_close(str(loc[-1]), expected)}'
        elif kind == "model_type" or kind == "model_attributes_type":
            message = (f'key "{key}": ' if key else "") + "expected a JSON object"
        else:
            message = (f'key "{key}": ' if key else "") + err["msg"].replace("Input should be", "expected")
        problems.append(Problem(source, where, message, str(loc[-1]) if loc else None))
    if not problems:  # pragma: no cover - pydantic always reports at least one error
        problems.append(Problem(source, "top level", str(exc)))
    return problems


def _get(raw: Any, key: Any) -> Any:
    try:
        return raw[key]
    except (KeyError, IndexError, TypeError):
        return None


def _name(obj: Any, key: str, fallback: str) -> str:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, str) and value else fallback


def _where_for_loc(raw: Any, loc: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
    if len(loc) >= 2 and loc[0] in ("characters", "places", "intents", "scenes") and isinstance(loc[1], int):
        section, i = loc[0], loc[1]
        obj = _get(_get(raw, section), i)
        singular = section[:-1]
        if section == "scenes":
            where = f"scene {_name(obj, 'place', f'#{i + 1}')}"
            if len(loc) >= 4 and loc[2] == "lines" and isinstance(loc[3], int):
                line = _get(_get(obj, "lines"), loc[3])
                line_id = _name(line, "id", "")
                where = f"line {line_id}" if line_id else f"{where} line #{loc[3] + 1}"
                return where, loc[4:]
            return where, loc[2:]
        where = f"{singular} {_name(obj, 'id', f'#{i + 1}')}"
        if section == "characters" and len(loc) >= 4 and loc[2] in ("knowledge", "fallbacks") and isinstance(loc[3], int):
            if loc[2] == "knowledge":
                return f"{where} knowledge #{loc[3] + 1}", loc[4:]
            fb = _get(_get(obj, "fallbacks"), loc[3])
            return f"{where} fallback {_name(fb, 'id', f'#{loc[3] + 1}')}", loc[4:]
        return where, loc[2:]
    if loc and loc[0] == "start":
        return "start", loc[1:]
    return "top level", loc


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel]:
    model: type[BaseModel] = Scenario
    for part in loc:
        if not isinstance(part, str):
            continue
        info = model.model_fields.get(part) or next(
            (f for f in model.model_fields.values() if f.alias == part), None)
        if info is None:
            break
        annotation = info.annotation
        while get_origin(annotation) is not None and not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            args = [a for a in get_args(annotation) if a is not type(None)]
            if not args:
                break
            annotation = args[0]
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
    return model


def _field_names(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _close(word: str, options: Iterable[str]) -> str:
    match = difflib.get_close_matches(word, list(options), n=1, cutoff=0.5)
    return f' (did you mean "{match[0]}"?)' if match else ""


def expected_one_of(what: str, options: Iterable[str], got: str) -> str:
    options = list(options)
    if not options:
        return f"expected an existing {what} id, but the scenario defines none"
    shown = ", ".join(options[:10]) + (f", … ({len(options)} in all)" if len(options) > 10 else "")
    return f"expected one of {shown}{_close(got, options)}"


# ---------------------------------------------------------------- compiling

class _Collector:
    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []

    def add(self, where: str, message: str, term: str | None = None) -> None:
        self.problems.append(Problem(self.source, where, message, term))


def compile_scenario(scenario: Scenario, source: str = "<scenario>") -> CompiledScenario:
    out = _Collector(source)

    characters = _unique(out, "character", ((c.id, f"character {c.id}") for c in scenario.characters),
                         scenario.characters)
    places = _unique(out, "place", ((p.id, f"place {p.id}") for p in scenario.places), scenario.places)
    intents = _unique(out, "intent", ((i.id, f"intent {i.id}") for i in scenario.intents), scenario.intents)
    _unique(out, "fallback", ((f.id, f"character {c.id} fallback {f.id}")
                              for c in scenario.characters for f in c.fallbacks), None)
    all_lines = [(scene, line) for scene in scenario.scenes for line in scene.lines]
    line_models = _unique(out, "line", ((ln.id, f"line {ln.id}") for _, ln in all_lines), [ln for _, ln in all_lines])

    if scenario.start.place not in places:
        out.add("start", f'unknown place "{scenario.start.place}" as start.place; '
                         f'{expected_one_of("place", places, scenario.start.place)}', scenario.start.place)
    _check_places(out, scenario, characters, places)

    flags = _declared_flags(scenario)
    checker = _TermChecker(out, characters, places, intents, line_models, flags)
    compiled_lines, scenes = _compile_scenes(out, scenario, characters, places, checker)
    knowledge = _compile_knowledge(out, scenario, checker)
    endings = _compile_endings(out, scenario, checker)
    reactions = _check_spoken_lines(out, scenario, characters)
    menus = _check_conversation(out, scenario, characters, intents)
    _check_place_phrases(out, scenario)

    if out.problems:
        raise ScenarioError(out.problems)

    return CompiledScenario(
        source=source,
        scenario=scenario,
        characters=MappingProxyType(characters),
        places=MappingProxyType(places),
        intents=MappingProxyType(intents),
        lines=MappingProxyType(compiled_lines),
        scenes=MappingProxyType(scenes),
        knowledge=MappingProxyType(knowledge),
        intent_order=MappingProxyType({intent_id: i for i, intent_id in enumerate(intents)}),
        reactions=MappingProxyType(reactions),
        menus=MappingProxyType(menus),
        flags=frozenset(flags),
        endings=MappingProxyType(endings),
    )


def _check_places(out: _Collector, scenario: Scenario, characters: Mapping[str, Character],
                  places: Mapping[str, Place]) -> None:
    for place in scenario.places:
        where = f"place {place.id}"
        for person in place.people:
            if person not in characters:
                out.add(where, f'unknown character "{person}" in people; '
                               f'{expected_one_of("character", characters, person)}', person)
        if place.responder is not None and place.responder not in characters:
            out.add(where, f'unknown character "{place.responder}" as responder; '
                           f'{expected_one_of("character", characters, place.responder)}', place.responder)
        for exit_id in place.exits:
            if exit_id not in places:
                out.add(where, f'unknown place "{exit_id}" in exits; {expected_one_of("place", places, exit_id)}', exit_id)


def _compile_scenes(out: _Collector, scenario: Scenario, characters: Mapping[str, Character],
                    places: Mapping[str, Place],
                    checker: _TermChecker) -> tuple[dict[str, CompiledLine], dict[str, CompiledScene]]:
    scene_places: set[str] = set()
    compiled_lines: dict[str, CompiledLine] = {}
    scenes: dict[str, CompiledScene] = {}
    condition_cache: dict[str, tuple[Condition, list[TermSyntaxError]]] = {}
    for scene in scenario.scenes:
        if scene.place not in places:
            out.add(f"scene {scene.place}", f'unknown place "{scene.place}" for a scene; '
                                            f'{expected_one_of("place", places, scene.place)}', scene.place)
        if scene.place in scene_places:
            out.add(f"scene {scene.place}", f'a second scene for place "{scene.place}"; expected one scene per place '
                                            f'(put all of its lines in one scene)', scene.place)
            continue
        scene_places.add(scene.place)
        lines = []
        for index, line in enumerate(scene.lines):
            where = f"line {line.id}"
            if line.speaker not in characters:
                out.add(where, f'unknown character "{line.speaker}" as speaker; '
                               f'{expected_one_of("character", characters, line.speaker)}', line.speaker)
            cached = condition_cache.get(line.condition)
            if cached is None:
                cached = condition_cache[line.condition] = parse_condition(line.condition)
            condition, syntax_errors = cached
            for error in syntax_errors:
                out.add(where, error.message, error.term)
            checker.check(where, condition)
            effects = tuple(_compile_effects(out, where, line.effects, characters))
            compiled = CompiledLine(line.id, line.speaker, line.text, scene.place, index, condition, effects, line)
            lines.append(compiled)
            compiled_lines.setdefault(line.id, compiled)
        scenes[scene.place] = _index_scene(scene.place, tuple(lines))
    return compiled_lines, scenes


def _compile_knowledge(out: _Collector, scenario: Scenario,
                       checker: _TermChecker) -> dict[str, tuple[CompiledKnowledge, ...]]:
    knowledge: dict[str, tuple[CompiledKnowledge, ...]] = {}
    for character in scenario.characters:
        entries = []
        for index, entry in enumerate(character.knowledge):
            where = f"character {character.id} knowledge #{index + 1}"
            condition, syntax_errors = parse_condition(entry.condition)
            for error in syntax_errors:
                out.add(where, error.message, error.term)
            checker.check(where, condition)
            if entry.until.strip():
                until, syntax_errors = parse_condition(entry.until)
                for error in syntax_errors:
                    out.add(f"{where} until", error.message, error.term)
                checker.check_until(f"{where} until", until)
                condition = replace(condition, unless=until)
            entries.append(CompiledKnowledge(character.id, index, entry, condition))
        knowledge.setdefault(character.id, tuple(entries))
    return knowledge


def _story_condition(out: _Collector, where: str, text: str, checker: _TermChecker) -> Condition:
    condition, syntax_errors = parse_condition(text)
    for error in syntax_errors:
        out.add(where, error.message, error.term)
    checker.check_until(where, condition, "an ending's condition")
    return condition


def _compile_endings(out: _Collector, scenario: Scenario,
                     checker: _TermChecker) -> dict[str, tuple[CompiledEnding, ...]]:
    """Each place's endings, their conditions and their closing lines' conditions (story terms only: an
    ending is chosen when the player leaves, by what happened before)."""
    compiled: dict[str, tuple[CompiledEnding, ...]] = {}
    seen: set[str] = set()
    for place in scenario.places:
        found = []
        for n, ending in enumerate(place_endings(place), 1):
            ending_id = ending.id or (f"{place.id}#default" if ending is place.ending else f"{place.id}#{n}")
            where = f"place {place.id} ending {ending_id}"
            if ending_id in seen:
                out.add(where, f'a second ending with id "{ending_id}"; expected ending ids unique in the scenario',
                        ending_id)
            seen.add(ending_id)
            condition = _story_condition(out, where, ending.condition, checker)
            lines = tuple((line, _story_condition(out, f"{where} line #{k}", line.condition, checker))
                          for k, line in enumerate(ending.lines, 1))
            found.append(CompiledEnding(ending_id, place.id, condition, ending, lines))
        compiled[place.id] = tuple(found)
    return compiled


def _check_place_phrases(out: _Collector, scenario: Scenario) -> None:
    for place in scenario.places:
        for kind in ("enter_phrases", "leave_phrases"):
            for phrase in getattr(place, kind):
                if not phrase.strip():
                    out.add(f"place {place.id} {kind}", f"an empty phrase in {kind}; expected a phrase in dictionary "
                                                        f"form (湯に入る)", phrase)


def _declared_flags(scenario: Scenario) -> set[str]:
    """Flags something can set: a menu item's `flag`, a line's `フラグ:` effect, or a reply's."""
    found = {item.flag for c in scenario.characters if c.menu for item in c.menu.items if item.flag}
    effects = [e for scene in scenario.scenes for line in scene.lines for e in line.effects]
    effects += [e for replies in every_replies(scenario) for kind in ("yes", "no", "other")
                for reply in getattr(replies, kind) for e in reply.effects]
    for effect in effects:
        if effect.strip().startswith(FLAG_PREFIX):
            found.add(effect.strip()[len(FLAG_PREFIX):].strip())
    return found


def every_replies(model: BaseModel) -> Iterator[Replies]:
    """Every `replies` the scenario holds, wherever a line may carry one (walked, so a line kind added to
    the format is never missed)."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, Replies):
                yield item
            elif isinstance(item, BaseModel):
                yield from every_replies(item)


def _check_replies(out: _Collector, where: str, character: Character | None, replies: Replies | None,
                   characters: Mapping[str, Character]) -> None:
    if replies is None or character is None:
        return
    for kind in ("yes", "no", "other"):
        for n, line in enumerate(getattr(replies, kind)):
            _check_expression(out, f"{where} replies {kind} #{n + 1}", character, line.expression)
            for _ in _compile_effects(out, f"{where} replies {kind} #{n + 1}", line.effects, characters):
                pass


MENU_LINE_SETS = ("ask", "missing", "unavailable", "suggest", "styles", "treat", "declined", "prices", "bill",
                  "breakdown", "paid", "parts", "extras", "coming", "counted", "change")


def _check_conversation(out: _Collector, scenario: Scenario, characters: Mapping[str, Character],
                        intents: Mapping[str, Intent]) -> dict[str, Menu]:
    """Menus, replies, recall and clarify lines, chatter, and the clarify settings; returns the menus."""
    menus: dict[str, Menu] = {}
    for character in scenario.characters:
        _check_line_sets(out, character, characters)
        _check_forms(out, character, characters)
        _check_character_refs(out, character, characters)
        if character.menu is not None:
            menus[character.id] = character.menu
            _check_menu(out, character, character.menu, characters)
    items = {item.id for menu in menus.values() for item in menu.items}
    for cid, menu in menus.items():
        if menu.treated_to is not None and menu.treated_to not in items:
            out.add(f"character {cid} menu treated_to", f'treated_to "{menu.treated_to}" is no menu item; expected '
                                                        f'one of {", ".join(sorted(items)) or "(none)"}', menu.treated_to)
    _check_place_replies(out, scenario, characters)
    _check_clarify(out, scenario, intents)
    return menus


def _check_line_sets(out: _Collector, character: Character, characters: Mapping[str, Character]) -> None:
    where = f"character {character.id}"
    for line_set, name in ((character.recall, "recall"), (character.clarify, "clarify"),
                           (character.chatter, "chatter"), (character.echo, "echo"),
                           (character.unsure, "unsure"), (character.told, "told")):
        if line_set is None:
            continue
        for n, spoken in enumerate(line_set.lines):
            _check_expression(out, f"{where} {name} #{n + 1}", character, spoken.expression)
            _check_replies(out, f"{where} {name} #{n + 1}", character, spoken.replies, characters)
            if name == "recall" and "{said}" not in spoken.text:
                out.add(f"{where} recall #{n + 1}", 'a recall line must hold "{said}" (the sentence said '
                                                    'again); expected e.g. 「言ったでしょ、{said}」', spoken.text)
            if name == "clarify" and not ("{1}" in spoken.text and "{2}" in spoken.text):
                out.add(f"{where} clarify #{n + 1}", 'a clarify line must hold "{1}" and "{2}" (the two '
                                                     'topics); expected e.g. 「{1}？　それとも{2}？」', spoken.text)
            if name == "told" and "{word}" not in spoken.text:
                out.add(f"{where} told #{n + 1}", 'a told line must hold "{word}" (what the player told of '
                                                  'themselves); expected e.g. 「{word}だったわね」', spoken.text)
            if name == "echo" and "{word}" not in spoken.text:
                out.add(f"{where} echo #{n + 1}", 'an echo line must hold "{word}" (what the player talked '
                                                  'about); expected e.g. 「{word}？　好きなの？」', spoken.text)


def _check_forms(out: _Collector, character: Character, characters: Mapping[str, Character]) -> None:
    where = f"character {character.id}"
    for name, _, form_lines in character.forms.line_sets() if character.forms is not None else ():
        for n, spoken in enumerate(form_lines):
            _check_expression(out, f"{where} forms {name} #{n + 1}", character, spoken.expression)
            _check_replies(out, f"{where} forms {name} #{n + 1}", character, spoken.replies, characters)
            slots = set(re.findall(r"\{[^{}]*\}", spoken.text)) - {"{word}"}
            if slots:
                out.add(f"{where} forms {name} #{n + 1}", f'unknown slot {sorted(slots)[0]} in a forms line; '
                                                          'only "{word}" (what the line is about) is filled',
                        spoken.text)
    for n, stance in enumerate(character.forms.stances if character.forms is not None else (), 1):
        for word in stance.words:
            if not word.strip():
                out.add(f"{where} forms stance{n}", "an empty word in a stance's words; expected the words of "
                                                    "the thing (撮, 写真)", word)


def _check_character_refs(out: _Collector, character: Character, characters: Mapping[str, Character]) -> None:
    """Replies of reactions and knowledge lines, and the characters their `about` and `secret_from` name."""
    where = f"character {character.id}"
    for reaction in character.reactions:
        for n, spoken in enumerate(reaction.lines):
            _check_replies(out, f"{where} reaction {reaction.act} #{n + 1}", character, spoken.replies, characters)
    for index, entry in enumerate(character.knowledge):
        for n, spoken in enumerate(entry.lines):
            _check_replies(out, f"{where} knowledge #{index + 1} line #{n + 1}", character, spoken.replies, characters)
        for person in entry.about:
            if person not in characters:
                out.add(f"{where} knowledge #{index + 1}", f'unknown character "{person}" in about; '
                                                           f'{expected_one_of("character", characters, person)}',
                        person)
        if any(not word.strip() for word in entry.subject):
            out.add(f"{where} knowledge #{index + 1}", "an empty word in subject; expected words naming what "
                                                       "the entry is about (先代, クロ)", "")
        if entry.subject and not entry.words:
            out.add(f"{where} knowledge #{index + 1}", "subject without words: it limits which of the entry's "
                                                       "words count; expected words as well", "")
    for spoken_where, spoken in _spoken_lines(character):
        for person in spoken.secret_from:
            if person not in characters:
                out.add(f"{where} {spoken_where}", f'unknown character "{person}" in secret_from; '
                                                   f'{expected_one_of("character", characters, person)}', person)


def _check_menu(out: _Collector, character: Character, menu: Menu, characters: Mapping[str, Character]) -> None:
    where = f"character {character.id}"
    seen: set[str] = set()
    for item in menu.items:
        item_where = f"{where} menu {item.id}"
        if not _ID_RE.match(item.id):
            out.add(item_where, f'menu item id "{item.id}" is not usable as an id; expected a non-empty id '
                                f'without ":", "+" or surrounding spaces', item.id)
        if item.id in seen:
            out.add(item_where, f'duplicate menu item "{item.id}" for {character.id}; expected each item once',
                    item.id)
        seen.add(item.id)
        if item.flag is not None and not _ID_RE.match(item.flag):
            out.add(item_where, f'flag "{item.flag}" is not usable in conditions; expected a non-empty name '
                                f'without ":", "+" or surrounding spaces', item.flag)
        for n, spoken in enumerate([*item.lines, *(item.about.lines if item.about else ())]):
            _check_expression(out, f"{item_where} #{n + 1}", character, spoken.expression)
            _check_replies(out, f"{item_where} #{n + 1}", character, spoken.replies, characters)
    for kind in MENU_LINE_SETS:
        for n, spoken in enumerate(getattr(menu, kind)):
            _check_expression(out, f"{where} menu {kind} #{n + 1}", character, spoken.expression)
            _check_replies(out, f"{where} menu {kind} #{n + 1}", character, spoken.replies, characters)
            needed = {"prices": ("{item}", "{price}"), "bill": ("{total}",), "breakdown": ("{items}",),
                      "unavailable": ("{item}",), "suggest": ("{menu}",), "styles": ("{style}",),
                      "parts": ("{parts}",), "extras": ("{extra}",)}.get(kind, ())
            missing = [k for k in needed if k not in spoken.text]
            if missing:
                out.add(f"{where} menu {kind} #{n + 1}", f'a {kind} line must hold {" and ".join(needed)}; '
                                                         f'it lacks {", ".join(missing)}', spoken.text)


def _check_place_replies(out: _Collector, scenario: Scenario, characters: Mapping[str, Character]) -> None:
    for place in scenario.places:
        lines = list(place.arrival.lines if place.arrival else ())
        lines += [line for ending in place_endings(place) for line in ending.lines]
        for n, place_line in enumerate(lines):
            _check_replies(out, f"place {place.id} line #{n + 1}", characters.get(place_line.speaker),
                           place_line.replies, characters)
    for scene in scenario.scenes:
        for line in scene.lines:
            _check_replies(out, f"line {line.id}", characters.get(line.speaker), line.replies, characters)


def _check_clarify(out: _Collector, scenario: Scenario, intents: Mapping[str, Intent]) -> None:
    for word, named in scenario.clarify.ambiguous.items():
        for intent_id in named:
            if intent_id not in intents:
                out.add("clarify", f'unknown intent "{intent_id}" for the ambiguous word "{word}"; '
                                   f'{expected_one_of("intent", intents, intent_id)}', intent_id)
        if len(set(named)) < 2:
            out.add("clarify", f'the ambiguous word "{word}" names {len(set(named))} intent(s); expected two or more',
                    word)


def _spoken_lines(character: Character) -> Iterator[tuple[str, SpokenLine]]:
    """Every line of the character's own sets, with where it is (for messages)."""
    for index, entry in enumerate(character.knowledge):
        for n, spoken in enumerate(entry.lines):
            yield f"knowledge #{index + 1} line #{n + 1}", spoken
    for reaction in character.reactions:
        for n, spoken in enumerate(reaction.lines):
            yield f"reaction {reaction.act} #{n + 1}", spoken
    for name in ("recall", "clarify", "chatter", "echo", "unsure", "told"):
        line_set = getattr(character, name)
        for n, spoken in enumerate(line_set.lines if line_set else ()):
            yield f"{name} #{n + 1}", spoken
    for name, _, lines in character.forms.line_sets() if character.forms is not None else ():
        for n, spoken in enumerate(lines):
            yield f"forms {name} #{n + 1}", spoken
    if character.menu is not None:
        for item in character.menu.items:
            for n, spoken in enumerate(item.lines):
                yield f"menu {item.id} #{n + 1}", spoken
        for kind in MENU_LINE_SETS:
            for n, spoken in enumerate(getattr(character.menu, kind)):
                yield f"menu {kind} #{n + 1}", spoken


def _expression_keys(character: Character) -> list[str]:
    return list(dict.fromkeys([*character.expressions, NEUTRAL]))


def _check_expression(out: _Collector, where: str, character: Character, key: str | None) -> None:
    if key is None:
        return
    keys = _expression_keys(character)
    if key not in keys:
        out.add(where, f'unknown expression "{key}" for {character.id}; expected one of {", ".join(keys)} '
                       f'(add it to the character\'s expressions){_close(key, keys)}', key)


def _check_spoken_lines(out: _Collector, scenario: Scenario,
                        characters: Mapping[str, Character]) -> dict[str, Mapping[str, Reaction]]:
    """Expressions of reactions, knowledge lines and fallbacks, and speakers
    of arrival and closing lines; returns the reactions by character and act."""
    reactions: dict[str, Mapping[str, Reaction]] = {}
    for character in scenario.characters:
        by_act: dict[str, Reaction] = {}
        for reaction in character.reactions:
            for n, line in enumerate(reaction.lines):
                _check_expression(out, f"character {character.id} reaction {reaction.act} #{n + 1}", character,
                                  line.expression)
            by_act.setdefault(reaction.act, reaction)
        reactions.setdefault(character.id, MappingProxyType(by_act))
        for index, entry in enumerate(character.knowledge):
            for n, line in enumerate(entry.lines):
                _check_expression(out, f"character {character.id} knowledge #{index + 1} line #{n + 1}", character,
                                  line.expression)
        for fallback in character.fallbacks:
            _check_expression(out, f"character {character.id} fallback {fallback.id}", character,
                              fallback.expression)
    for place in scenario.places:
        sets: list[tuple[str, Sequence[PlaceLine]]] = []
        if place.arrival is not None:
            sets.append(("arrival", place.arrival.lines))
        for n, ending in enumerate(place_endings(place)):
            sets.append(("ending" if ending is place.ending else f"endings #{n + 1}", ending.lines))
        for what, place_lines in sets:
            for n, place_line in enumerate(place_lines):
                where = f"place {place.id} {what} #{n + 1}"
                speaker = characters.get(place_line.speaker)
                if speaker is None:
                    out.add(where, f'unknown character "{place_line.speaker}" as speaker; '
                                   f'{expected_one_of("character", characters, place_line.speaker)}',
                            place_line.speaker)
                    continue
                _check_expression(out, where, speaker, place_line.expression)
    return reactions


def _unique(out: _Collector, what: str, ids: Iterable[tuple[str, str]], models: list[Any] | None) -> dict[str, Any]:
    """Check ids are well-formed and unique; returns id → first model."""
    seen: dict[str, Any] = {}
    models_iter = iter(models) if models is not None else None
    for ident, where in ids:
        model = next(models_iter) if models_iter is not None else None
        if not _ID_RE.match(ident):
            out.add(where, f'{what} id "{ident}" is not usable in conditions; expected a non-empty id without ":", '
                           f'"+" or surrounding spaces', ident)
        if ident in seen:
            out.add(where, f'duplicate {what} id "{ident}"; expected each {what} id once', ident)
            continue
        seen[ident] = model
    return seen


class _TermChecker:
    """Checks that the ids a condition names exist, and that it is not
    self-contradictory in the one way the spec makes an error."""

    def __init__(self, out: _Collector, characters: Mapping[str, Any], places: Mapping[str, Any],
                 intents: Mapping[str, Any], lines: Mapping[str, Any], flags: Iterable[str] = ()) -> None:
        self.out, self.characters, self.places, self.intents, self.lines = out, characters, places, intents, lines
        self.flags = sorted(flags)

    def check(self, where: str, condition: Condition) -> None:
        for term in condition.terms:
            if isinstance(term, InputTerm):
                target = term.input.target
                if term.input.is_intent and target not in self.intents:
                    self.out.add(where, f'unknown intent "{target}" in term "{term}"; '
                                        f'{expected_one_of("intent", self.intents, target or "")}', str(term))
                elif term.input.is_move and target not in self.places:
                    self.out.add(where, f'unknown place "{target}" in term "{term}"; '
                                        f'{expected_one_of("place", self.places, target or "")}', str(term))
            elif isinstance(term, FlagTerm):
                if term.name not in self.flags:
                    where_set = (expected_one_of("flag", self.flags, term.name) if self.flags else
                                 "no menu item or line sets any flag")
                    self.out.add(where, f'flag "{term.name}" in term "{term}" is never set (a menu item\'s "flag" '
                                        f'or a line\'s フラグ: effect sets one); {where_set}', str(term))
            elif isinstance(term, (ShownTerm, UnshownTerm, AfterTerm)):
                if term.line_id not in self.lines:
                    self.out.add(where, f'unknown line "{term.line_id}" in term "{term}"; '
                                        f'{expected_one_of("line", self.lines, term.line_id)}', str(term))
        for clause in condition.clauses:
            after = [t for t in clause.terms if isinstance(t, AfterTerm)]
            input_terms = [t for t in clause.terms if isinstance(t, InputTerm)]
            if after and input_terms:
                self.out.add(where, f'term "{after[0]}" cannot be combined with input term "{input_terms[0]}": 直後: '
                                    f'holds only inside a chain, after the input was answered; expected either '
                                    f'直後:ID or an input term, not both (alternatives joined by | may each have one)',
                             str(after[0]))
                break

    def check_until(self, where: str, until: Condition, what: str = '"until"') -> None:
        """An `until` (or an ending's condition) speaks of the story only: lines shown or not, flags set."""
        self.check(where, until)
        for term in until.terms:
            if not isinstance(term, (ShownTerm, UnshownTerm, FlagTerm)):
                self.out.add(where, f'term "{term}" cannot be used in {what}: it is read on the story so far; '
                                    f'expected 済:ID, 未:ID or フラグ:NAME (joined by + or |)', str(term))


def _compile_effects(out: _Collector, where: str, texts: list[str],
                     characters: Mapping[str, Character]) -> Iterable[Effect]:
    for text in texts:
        try:
            effect = parse_effect(text)
        except TermSyntaxError as exc:
            out.add(where, exc.message, exc.term)
            continue
        if isinstance(effect, ExpressionEffect):
            character = characters.get(effect.character)
            if character is None:
                out.add(where, f'unknown character "{effect.character}" in effect "{text}"; '
                               f'{expected_one_of("character", characters, effect.character)}', text)
                continue
            keys = list(dict.fromkeys([*character.expressions, NEUTRAL]))
            if effect.key not in keys:
                out.add(where, f'unknown expression "{effect.key}" for {effect.character} in effect "{text}"; '
                               f'expected one of {", ".join(keys)} (add it to the character\'s expressions)'
                               f'{_close(effect.key, keys)}', text)
                continue
        yield effect


def _index_scene(place: str, lines: tuple[CompiledLine, ...]) -> CompiledScene:
    responses: dict[PlayerInput, list[CompiledLine]] = {}
    chains: dict[str, list[CompiledLine]] = {}
    starts, arrivals, progressions = [], [], []
    for line in lines:
        cond = line.condition
        for wanted in cond.inputs:
            responses.setdefault(wanted, []).append(line)
        for prev in dict.fromkeys(cond.after):
            chains.setdefault(prev, []).append(line)
        if cond.start:
            starts.append(line)
        if cond.arrival:
            arrivals.append(line)
        if cond.any_input:
            progressions.append(line)
    return CompiledScene(
        place=place,
        lines=lines,
        responses=MappingProxyType({k: tuple(v) for k, v in responses.items()}),
        starts=tuple(starts),
        arrivals=tuple(arrivals),
        progressions=tuple(progressions),
        chains=MappingProxyType({k: tuple(v) for k, v in chains.items()}),
    )
