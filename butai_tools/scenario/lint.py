"""Warnings about scenarios that load but probably do not do what the author meant.

Load errors make a scenario unusable; these findings do not, so they are
warnings.  The "can never fire" analysis only reports lines it can prove dead
(a static contradiction, or a dependency on a line that is itself dead); a
line it cannot judge is assumed to be fine.
"""
from __future__ import annotations

import os
import unicodedata
from collections import deque
from collections.abc import Iterable

from chalicelib.scenario.conditions import AfterTerm, Clause, Condition, FlagTerm
from chalicelib.scenario.inputs import PlayerInput
from chalicelib.scenario.loader import NEUTRAL, CompiledLine, CompiledScenario, Problem, ScenarioError, load_scenario
from chalicelib.scenario.model import FORM_NAMES


def lint_path(path: str | os.PathLike[str], *, play: bool = True) -> list[Problem]:
    """Load errors if the file does not load, else its warnings, and what playing it finds (`play`)."""
    try:
        compiled = load_scenario(path)
    except ScenarioError as exc:
        return exc.problems
    return lint_scenario(compiled) + _portraits(path, compiled) + (played_problems(path, compiled) if play else [])


def _portraits(path: str | os.PathLike[str], sc: CompiledScenario) -> list[Problem]:
    """Characters with no art beside the scenario (characters/ID/) or in static/characters/ID/: their stage
    shows generated placeholder faces."""
    from pathlib import Path

    from butai_tools.stage.commands import STATIC_CHARACTERS
    from butai_tools.stage.placeholders import art_folder, art_search_path
    search = art_search_path(Path(path), STATIC_CHARACTERS)
    missing = [cid for cid in sc.characters if art_folder(cid, search) is None]
    if not missing:
        return []
    return [Problem(sc.source, "characters", f'{", ".join(missing)} have no portraits (looked for '
                                             f'{Path(path).resolve().parent / "characters"}/ID/ and static/characters'
                                             f'/ID/): their stage shows generated placeholder faces, one per '
                                             f'expression, until `butai images upload DIR --character ID`', None,
                    "hint")]


ONE_LINE = "one line"     # the term of the one-line hints, which lint_scenario gathers per character


def lint_scenario(sc: CompiledScenario) -> list[Problem]:
    out: list[Problem] = []

    def warn(where: str, message: str, term: str | None = None) -> None:
        out.append(Problem(sc.source, where, message, term, "warning"))

    def hint(where: str, message: str, term: str | None = None) -> None:
        out.append(Problem(sc.source, where, message, term, "hint"))

    _check_characters(sc, warn)
    _check_places(sc, warn)
    _check_intents(sc, warn, hint)
    _check_lines(sc, warn)
    _check_knowledge(sc, warn)
    _check_reactions(sc, warn, hint)
    _check_conversation(sc, warn, hint)
    _check_collisions(sc, warn)
    _check_choices(sc, warn)
    return _gathered(out)


def _gathered(problems: list[Problem]) -> list[Problem]:
    """The one-line hints of one character (or place) as one hint: each is the same suggestion."""
    kept: list[Problem] = []
    groups: dict[str, list[Problem]] = {}
    for p in problems:
        if p.severity == "hint" and p.term == ONE_LINE:
            groups.setdefault(" ".join(p.where.split()[:2]), []).append(p)
        else:
            kept.append(p)
    for owner, group in groups.items():
        sets = ", ".join(" ".join(p.where.split()[2:]) for p in group)
        kept.append(Problem(group[0].source, owner, f"{len(group)} of its line sets have one line ({sets}); a "
                                                    f"set of one is said at most once in a window of turns and "
                                                    f"twice a game, so the next layer answers in between", None,
                            "hint"))
    return kept


# ---------------------------------------------------------------- words that collide, choices

def _check_collisions(sc: CompiledScenario, warn) -> None:
    """A word two intents share, or an intent and a choice's option: a line with it alone cannot say which."""
    ambiguous = {normalise(w) for w in sc.scenario.clarify.ambiguous}
    owners: dict[str, list[str]] = {}
    for intent in sc.scenario.intents:
        for word in dict.fromkeys(intent.words):
            owners.setdefault(normalise(word), []).append(intent.id)
    for word, intents in owners.items():
        if len(intents) > 1 and word not in ambiguous:
            warn("intents", f'the word "{word}" narrows to {" and ".join(intents)}: a line with only this word '
                            f'cannot tell them apart; keep it in one, or list it in clarify.ambiguous so that a '
                            f'character asks which', word)
    for character, entries in sc.knowledge.items():
        for entry in entries:
            if entry.entry.choice is None:
                continue
            for word in entry.entry.words:
                intents = [i for i in owners.get(normalise(word), []) if i not in entry.intents]
                if intents:
                    warn(f"character {character} knowledge #{entry.index + 1}",
                         f'option word "{word}" of the choice "{entry.entry.choice}" is also a word of intent '
                         f'{intents[0]}: a line that only names it is read as {intents[0]}; one that chooses it '
                         f'(「{word}にしよう」) still picks this option', word)


def _check_choices(sc: CompiledScenario, warn) -> None:
    """Options that can never be picked: alone in their choice, with no word of their own, or never holding."""
    for character, entries in sc.knowledge.items():
        groups: dict[str, list] = {}
        for entry in entries:
            if entry.entry.choice is not None:
                groups.setdefault(entry.entry.choice, []).append(entry)
        present = any(character in p.people for p in sc.places.values())
        for choice, options in groups.items():
            if len(options) < 2:
                warn(f"character {character} knowledge #{options[0].index + 1}",
                     f'is the only option of the choice "{choice}"; a choice needs two or more entries sharing '
                     f'it, so this one is never picked as a choice', choice)
                continue
            words = [{normalise(w) for w in e.entry.words} for e in options]
            for entry, own in zip(options, words, strict=True):
                others = set().union(*(w for w in words if w is not own))
                where = f"character {character} knowledge #{entry.index + 1}"
                if not own - others:
                    warn(where, f'option of the choice "{choice}" has no word of its own (every word is another '
                                f'option\'s too), so no line can pick it', choice)
                elif not present:
                    warn(where, f'option of the choice "{choice}" belongs to {character}, who is at no place, so '
                                f'it is never picked', choice)
                elif all(_knowledge_clause_reason(c) is not None for c in entry.condition.clauses):
                    warn(where, f'option of the choice "{choice}" has a condition that never holds in free '
                                f'conversation, so it is never picked', choice)


# ---------------------------------------------------------------- reactions, arrivals, endings

def _check_variants(warn, hint, where: str, lines, mode: str) -> None:
    if not lines:
        warn(where, "has no lines; add lines or remove it")
        return
    for n, line in enumerate(lines):
        if not line.text.strip():
            warn(f"{where} #{n + 1}", "is an empty line; the player would see nothing")
    texts = [line.text.strip() for line in lines]
    for text in {t for t in texts if t and texts.count(t) > 1}:
        warn(where, f'says "{text}" more than once; variation cannot avoid repeating it')
    if len(lines) == 1 and mode != "once":
        hint(where, "has one line; it is said at most once in a window of turns and twice a game (the "
                    "conversation's variety rule), so the next layer answers in between", ONE_LINE)


def _check_reactions(sc: CompiledScenario, warn, hint) -> None:
    for character in sc.scenario.characters:
        seen: set[str] = set()
        for reaction in character.reactions:
            where = f"character {character.id} reaction {reaction.act}"
            if reaction.act in seen:
                warn(where, f"act {reaction.act} has a second reaction; only the first is used", reaction.act)
            seen.add(reaction.act)
            _check_variants(warn, hint, where, reaction.lines, reaction.mode)
            for n, line in enumerate(reaction.lines):
                if line.expression is None:
                    hint(f"{where} #{n + 1}", "has no expression; the speaker shows neutral")
        for index, entry in enumerate(character.knowledge):
            if entry.lines:
                # not repeatable: each line once per game, so a single line is no cause for a hint
                _check_variants(warn, hint, f"character {character.id} knowledge #{index + 1}", entry.lines,
                                entry.mode if entry.repeatable else "once")
            elif entry.words:
                warn(f"character {character.id} knowledge #{index + 1}",
                     "has words but no lines; words only choose among entries that have lines")
        for fallback in character.fallbacks:
            if fallback.expression is None:
                hint(f"character {character.id} fallback {fallback.id}",
                     "has no expression; the speaker shows neutral")
    for place in sc.scenario.places:
        sets = []
        if place.arrival is not None:
            sets.append(("arrival", place.arrival.lines, place.arrival.mode))
        if place.ending is not None:
            sets.append(("ending", place.ending.lines, "once"))
            if place.exits:
                hint(f"place {place.id}", "has an ending: leaving it ends the game, so its exits are reached only "
                                          "by moving, never offered on leaving")
        for what, lines, mode in sets:
            where = f"place {place.id} {what}"
            if what == "arrival" or lines:
                _check_variants(warn, hint, where, lines, mode)
            for n, line in enumerate(lines):
                if line.speaker in sc.characters and line.speaker not in place.people:
                    warn(f"{where} #{n + 1}", f"speaker {line.speaker} is not among the people of {place.id}",
                         line.speaker)


# ---------------------------------------------------------------- menus, clarify, flags

def _check_conversation(sc: CompiledScenario, warn, hint) -> None:
    owners: dict[str, list[str]] = {}
    for character in sc.scenario.characters:
        menu = character.menu
        if menu is not None:
            for item in menu.items:
                where = f"character {character.id} menu {item.id}"
                _check_variants(warn, hint, where, item.lines, item.mode)
                for word in dict.fromkeys([item.id, *item.words]):
                    owners.setdefault(normalise(word), []).append(f"{character.id}/{item.id}")
            if menu.items and not menu.missing:
                hint(f"character {character.id} menu", "has no missing lines; an order of something not on it is "
                                                       "answered by the 注文 reaction")
        forms = character.forms
        if forms is not None:
            for name, mode, lines in forms.line_sets():
                _check_variants(warn, hint, f"character {character.id} forms {name}", lines, mode)
            missing = [name for name in FORM_NAMES if getattr(forms, name) is None]
            if missing:
                hint(f"character {character.id} forms", f"has no {', '.join(missing)} lines; a line of that form "
                                                        "that nothing authored answers gets the stock answers")
        if sc.scenario.clarify.ask and len(sc.intents) > 1 and character.clarify is None:
            hint(f"character {character.id}", "has no clarify lines; asking which topic the player means uses "
                                              "the default 「{1}？　それとも{2}？」")
    for word, items in owners.items():
        distinct = sorted({i.split("/")[1] for i in items})
        if len(distinct) > 1:
            warn("menus", f'the word "{word}" names more than one item ({", ".join(distinct)}); an order of it '
                          f'cannot tell which', word)
    tested = {t.name for condition in _every_condition(sc) for t in condition.terms if isinstance(t, FlagTerm)}
    for flag in sorted(sc.flags - tested):
        hint("flags", f'flag "{flag}" is set but no condition tests it (フラグ:{flag})', flag)


# ---------------------------------------------------------------- characters and places

def _every_condition(sc: CompiledScenario) -> Iterable[Condition]:
    """Every condition the scenario states: its lines', its knowledge's and what ends an entry (`until`), its
    endings' and their closing lines'."""
    yield from (line.condition for line in sc.lines.values())
    for entries in sc.knowledge.values():
        for entry in entries:
            yield entry.condition
            if entry.condition.unless is not None:
                yield entry.condition.unless
    for endings in sc.endings.values():
        for ending in endings:
            yield ending.condition
            yield from (condition for _, condition in ending.lines)


def _check_characters(sc: CompiledScenario, warn) -> None:
    present = {p for place in sc.places.values() for p in place.people}
    owners: dict[str, str] = {}
    for character in sc.scenario.characters:
        where = f"character {character.id}"
        if NEUTRAL not in character.expressions:
            warn(where, f'expressions do not list "{NEUTRAL}"; the stage falls back to it, so it should have an image')
        seen: set[str] = set()
        for key in character.expressions:
            if key in seen:
                warn(where, f'expression "{key}" is listed twice', key)
            seen.add(key)
        if character.id in present and not character.fallbacks:
            warn(where, "has no fallbacks; when free conversation fails there is no line to show")
        if character.id not in present:
            warn(where, "is not among the people of any place, so the player can never meet them")
        for alias in dict.fromkeys([character.name, *character.aliases]):
            other = owners.get(alias)
            if other is not None and other != character.id:
                warn(where, f'alias "{alias}" is also used for {other}; addressing by it is ambiguous', alias)
            owners.setdefault(alias, character.id)


def _reachable(sc: CompiledScenario) -> set[str]:
    seen = {sc.start_place}
    queue = deque([sc.start_place])
    while queue:
        for nxt in sc.places[queue.popleft()].exits:
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def _check_places(sc: CompiledScenario, warn) -> None:
    reachable = _reachable(sc)
    owners: dict[str, str] = {}
    for place in sc.scenario.places:
        where = f"place {place.id}"
        if place.id in place.exits:
            warn(where, 'exits include the place itself; moving there is always refused as "already here"', place.id)
        if place.id not in reachable:
            warn(where, f"cannot be reached from the start place {sc.start_place} through exits")
        if place.responder is not None and place.responder not in place.people:
            warn(where, f'responder "{place.responder}" is not among its people ({", ".join(place.people) or "none"})',
                 place.responder)
        if place.responder is None and not place.people:
            if place.id in sc.scenes or place.id == sc.start_place:
                warn(where, "has nobody present, so inputs here get no free conversation")
        for alias in dict.fromkeys([place.id, *place.aliases]):
            other = owners.get(alias)
            if other is not None and other != place.id:
                warn(where, f'alias "{alias}" is also used for place {other}; moving by it is ambiguous', alias)
            owners.setdefault(alias, place.id)


# ---------------------------------------------------------------- intents

def normalise(text: str) -> str:
    """Width, case and kana folded, so 'ＢＧＭ'/'bgm' and 'カラオケ'/'からおけ' compare equal."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(chr(ord(ch) - 0x60) if "ァ" <= ch <= "ヶ" else ch for ch in text)


def _check_intents(sc: CompiledScenario, warn, hint) -> None:
    used_by_lines = {i.target for line in sc.lines.values() for i in line.condition.inputs if i.is_intent}
    used_by_knowledge = {i for entries in sc.knowledge.values() for k in entries for i in k.intents}
    for intent in sc.scenario.intents:
        where = f"intent {intent.id}"
        if intent.id not in used_by_lines and intent.id not in used_by_knowledge:
            warn(where, "has neither a line nor knowledge; choosing it leads to free conversation with nothing "
                        "to say about it")
        if not intent.examples:
            warn(where, "has no examples; the classifier only has its description to go on")
        examples = [normalise(e) for e in intent.examples]
        words = [(w, normalise(w)) for w in intent.words]
        unused = [word for word, norm in words if examples and not any(norm in e for e in examples)]
        if unused:
            # A suggestion, not a problem: a word may well cover phrasings no example shows (one hint per intent).
            hint(where, f'{len(unused)} of its words are in no example ({", ".join(unused)}); examples using them '
                        f'would help model backends', unused[0])
        if words:
            for example, norm_example in zip(intent.examples, examples):
                if not any(norm in norm_example for _, norm in words):
                    warn(where, f'example "{example}" contains none of the words, so word narrowing drops this '
                                f'intent for its own example', example)


# ---------------------------------------------------------------- lines

def _check_lines(sc: CompiledScenario, warn) -> None:
    for line in sc.lines.values():
        place = sc.places[line.place]
        if line.speaker not in place.people:
            warn(f"line {line.id}", f'speaker {line.speaker} is not present at {line.place} '
                                    f'(people: {", ".join(place.people) or "none"})', line.speaker)
        for effect in line.effects:
            character = getattr(effect, "character", None)
            if character is not None and character not in place.people:
                warn(f"line {line.id}", f'effect "{effect}" changes {character}, who is not present at {line.place}',
                     str(effect))
    loops, in_loop = _chain_loops(sc)
    for cycle in loops:
        warn(f"line {cycle[0]}", f'直後: chain loops ({" → ".join([*cycle, cycle[0]])}); each of these lines waits '
                                 f'for another, so none of them can ever fire', f"直後:{cycle[-1]}")
    for line_id, reason in _dead_lines(sc, in_loop).items():
        warn(f"line {line_id}", f"can never fire: {reason}")


def _chain_loops(sc: CompiledScenario) -> tuple[list[list[str]], set[str]]:
    """Cycles of same-scene 直後: links (X → L when L says 直後:X)."""
    followers: dict[str, list[str]] = {}
    for scene in sc.scenes.values():
        for prev, lines in scene.chains.items():
            if prev in sc.lines and sc.lines[prev].place == scene.place:
                followers[prev] = [ln.id for ln in lines]
    color: dict[str, int] = {}
    loops: list[list[str]] = []
    in_loop: set[str] = set()
    for root in followers:
        if color.get(root):
            continue
        stack: list[tuple[str, Iterable[str]]] = [(root, iter(followers.get(root, ())))]
        path = [root]
        color[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)  # type: ignore[call-overload]
            if child is None:
                color[node] = 2
                stack.pop()
                path.pop()
                continue
            state = color.get(child, 0)
            if state == 1:
                cycle = path[path.index(child):]
                # Report from the line the author meets first in the file.
                first = min(range(len(cycle)), key=lambda k: sc.lines[cycle[k]].index)
                loops.append(cycle[first:] + cycle[:first])
                in_loop.update(cycle)
            elif state == 0:
                color[child] = 1
                path.append(child)
                stack.append((child, iter(followers.get(child, ()))))
    return loops, in_loop


def _static_reason(sc: CompiledScenario, line: CompiledLine, reachable: set[str], arrivable: set[str]) -> str | None:
    """Why the line can never fire, when every alternative of its condition provably cannot hold."""
    reasons = [_clause_reason(sc, line, clause, reachable, arrivable) for clause in line.condition.clauses]
    if any(r is None for r in reasons):
        return None
    if len(reasons) == 1:
        return reasons[0]
    return "no alternative of its condition can hold (" + "; ".join(
        f"{clause}: {reason}" for clause, reason in zip(line.condition.clauses, reasons, strict=True)) + ")"


def _clause_reason(sc: CompiledScenario, line: CompiledLine, c: Clause, reachable: set[str],
                   arrivable: set[str]) -> str | None:
    place = line.place
    exits = sc.places[place].exits
    if not c.has_trigger:
        return ("it has no trigger term (an input term, 入力, 開始, 到着 or 直後:), so no step ever looks for it"
                if c.terms else "its condition is empty, so no step ever looks for it")
    if len(c.inputs) > 1:
        return f"it needs two different inputs ({c.inputs[0]} and {c.inputs[1]}) in one step"
    if c.start and (c.inputs or c.any_input or c.arrival):
        return "開始 holds only at start, when there is no input and no arrival"
    if c.start and place != sc.start_place:
        return f"開始 only looks at the start place's scene ({sc.start_place})"
    if c.start and not c.after and c.shown:
        return f"at start nothing has been shown yet, so 済:{c.shown[0]} cannot hold"
    if len(set(c.after)) > 1:
        return f"it needs two different lines ({c.after[0]}, {c.after[1]}) immediately before"
    if line.id in c.after:
        return f"it cannot follow itself (直後:{line.id})"
    if line.id in c.shown:
        return f"it needs itself shown first (済:{line.id})"
    both = [i for i in c.shown if i in c.unshown]
    if both:
        return f"it needs {both[0]} both shown and not shown"
    if place not in reachable:
        return f"its place {place} cannot be reached from the start"
    wanted = c.input
    if c.arrival:
        if place not in arrivable:
            return f"到着: no exit of another place leads to {place}"
        if wanted is not None and wanted != PlayerInput.move(place):
            return f"到着 only holds on a move to {place}, so {wanted} cannot hold with it"
    elif wanted is not None and wanted.is_move:
        if wanted.target == place:
            return f"{wanted} from {place} itself is refused as already here"
        if wanted.target not in exits:
            return f"{wanted.target} is not an exit of {place}, so that move is refused before any line"
    if c.after and not (c.inputs or c.any_input or c.start or c.arrival):
        prev = sc.lines.get(c.after[0])
        if prev is not None and prev.place != place:
            return (f"直後:{prev.id} names a line of another scene ({prev.place}); a chain only continues within "
                    f"its scene")
    return None


def _dead_lines(sc: CompiledScenario, in_loop: set[str]) -> dict[str, str]:
    reachable = _reachable(sc)
    arrivable = {e for pid in reachable for e in sc.places[pid].exits if e != pid}
    dead: dict[str, str] = {}
    for line in sc.lines.values():
        reason = _static_reason(sc, line, reachable, arrivable)
        if reason is not None:
            dead[line.id] = reason
    # Only the first 開始 line that can hold at start ever fires as the start line.
    start_scene = sc.scenes.get(sc.start_place)
    if start_scene is not None:
        first = None
        for line in start_scene.starts:
            c = line.condition
            if line.id in dead or c.after or len(c.clauses) > 1:
                continue
            if first is None:
                first = line
            else:
                dead[line.id] = f"the 開始 line {first.id} always fires at start instead"
    dead_or_loop = set(dead) | in_loop
    changed = True
    while changed:
        changed = False
        for line in sc.lines.values():
            if line.id in dead_or_loop:
                continue
            reasons = []
            for c in line.condition.clauses:
                needed = next((i for i in c.shown if i in dead_or_loop), None)
                follows = next((i for i in c.after if i in dead_or_loop), None)
                if needed is not None:
                    reasons.append(f"it needs {needed} shown, which can never fire")
                elif follows is not None:
                    reasons.append(f"it follows {follows} (直後:), which can never fire")
                else:
                    break
            else:
                dead[line.id] = reasons[0] if len(reasons) == 1 else "; ".join(reasons)
                dead_or_loop.add(line.id)
                changed = True
    return dead


# ---------------------------------------------------------------- knowledge

def _check_knowledge(sc: CompiledScenario, warn) -> None:
    for character, entries in sc.knowledge.items():
        for entry in entries:
            where = f"character {character} knowledge #{entry.index + 1}"
            # never used when no alternative of its condition can hold in free conversation
            reasons = [_knowledge_clause_reason(clause) for clause in entry.condition.clauses]
            if all(r is not None for r in reasons):
                bad, message = reasons[0]  # type: ignore[misc]
                warn(where, message, bad)


def _knowledge_clause_reason(clause: Clause) -> tuple[str | None, str] | None:
    bad = next((t for t in clause.terms if str(t) in ("開始", "到着", "離脱") or isinstance(t, AfterTerm)
                or (getattr(t, "input", None) is not None and t.input.is_move)), None)  # type: ignore[union-attr]
    if bad is not None:
        return str(bad), (f'term "{bad}" never holds during free conversation (only 意図:/なし steps without a '
                          f'response line reach it), so this knowledge is never used')
    if len(clause.inputs) > 1:
        return None, "names two different inputs, so this knowledge is never used"
    return None


def played_problems(path: str | os.PathLike[str], sc: CompiledScenario) -> list[Problem]:
    """What playing the scenario on a stage in memory finds (explore.py): turns that cannot be played, and
    questions the same turn talks over."""
    from pathlib import Path

    from .explore import explore
    found = explore(Path(path), sc)
    return [Problem(sc.source, f.where, f.message, f.term, f.severity) for f in found.findings]  # type: ignore[arg-type]
