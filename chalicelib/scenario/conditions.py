"""Conditions and effects, parsed once at load into a form that is cheap to test.

A condition is written `term + term + ...` (every term must hold), with `|`
between alternatives (either holds) and parentheses to group.  Parsing only
checks syntax; whether the ids named exist is the loader's job, since
only it knows the scenario (and the file and line to blame).
"""
from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass, field

from .. import lazyre
from .inputs import INTENT_PREFIX, LEAVE, LEAVE_WORD, MOVE_PREFIX, NONE, NONE_WORD, PlayerInput

ANY_INPUT_WORD = "入力"
START_WORD = "開始"
ARRIVAL_WORD = "到着"
SHOWN_PREFIX = "済:"
UNSHOWN_PREFIX = "未:"
AFTER_PREFIX = "直後:"
EXPRESSION_PREFIX = "表情:"
# Flags (set by an order of a menu item with a `flag`, or by a line's effect) live in the same
# membership view as shown lines, under this prefix: ids cannot contain ":", so none can collide.
FLAG_PREFIX = "フラグ:"

TERM_FORMS = ("意図:X", "移動:P", "離脱", "なし", "入力", "開始", "到着", "済:ID", "未:ID", "直後:ID", "フラグ:NAME")
EXPECTED_TERMS = "expected one of " + ", ".join(TERM_FORMS)
EFFECT_FORMS = ("表情:CHARACTER:KEY", "フラグ:NAME")
EXPECTED_EFFECTS = "expected " + " or ".join(EFFECT_FORMS)


class TermSyntaxError(ValueError):
    """A condition or effect that cannot be parsed; `term` is the text at fault."""

    def __init__(self, term: str, message: str) -> None:
        super().__init__(message)
        self.term = term
        self.message = message


# ---------------------------------------------------------------- terms

@dataclass(frozen=True, slots=True)
class InputTerm:
    """`意図:X`, `移動:P`, `離脱`, `なし`: this step's input is exactly that."""
    input: PlayerInput

    def __str__(self) -> str:
        return str(self.input)


@dataclass(frozen=True, slots=True)
class AnyInputTerm:
    """`入力`: this step has a player input (false at start)."""

    def __str__(self) -> str:
        return ANY_INPUT_WORD


@dataclass(frozen=True, slots=True)
class StartTerm:
    """`開始`: the game is starting."""

    def __str__(self) -> str:
        return START_WORD


@dataclass(frozen=True, slots=True)
class ArrivalTerm:
    """`到着`: the player arrived at this scene's place in this step."""

    def __str__(self) -> str:
        return ARRIVAL_WORD


@dataclass(frozen=True, slots=True)
class ShownTerm:
    """`済:ID`: line ID has been shown."""
    line_id: str

    def __str__(self) -> str:
        return SHOWN_PREFIX + self.line_id


@dataclass(frozen=True, slots=True)
class UnshownTerm:
    """`未:ID`: line ID has not been shown."""
    line_id: str

    def __str__(self) -> str:
        return UNSHOWN_PREFIX + self.line_id


@dataclass(frozen=True, slots=True)
class AfterTerm:
    """`直後:ID`: line ID was the line shown immediately before, in this step."""
    line_id: str

    def __str__(self) -> str:
        return AFTER_PREFIX + self.line_id


@dataclass(frozen=True, slots=True)
class FlagTerm:
    """`フラグ:NAME`: flag NAME has been set (by an order or a line's effect)."""
    name: str

    def __str__(self) -> str:
        return FLAG_PREFIX + self.name


Term = InputTerm | AnyInputTerm | StartTerm | ArrivalTerm | ShownTerm | UnshownTerm | AfterTerm | FlagTerm

_BARE_TERMS: dict[str, Term] = {
    LEAVE_WORD: InputTerm(LEAVE),
    NONE_WORD: InputTerm(NONE),
    ANY_INPUT_WORD: AnyInputTerm(),
    START_WORD: StartTerm(),
    ARRIVAL_WORD: ArrivalTerm(),
}
_ID_TERMS: dict[str, type[ShownTerm | UnshownTerm | AfterTerm]] = {SHOWN_PREFIX: ShownTerm, UNSHOWN_PREFIX: UnshownTerm, AFTER_PREFIX: AfterTerm}
_PREFIXES = (INTENT_PREFIX, MOVE_PREFIX, SHOWN_PREFIX, UNSHOWN_PREFIX, AFTER_PREFIX, FLAG_PREFIX)


def parse_term(text: str) -> Term:
    term = text.strip()
    if term in _BARE_TERMS:
        return _BARE_TERMS[term]
    for prefix, cls in _ID_TERMS.items():
        if term.startswith(prefix):
            ident = term[len(prefix):].strip()
            if not ident:
                raise TermSyntaxError(term, f'term "{term}" is missing the line id after "{prefix}"; '
                                            f'expected {prefix}ID')
            return cls(ident)
    if term.startswith(FLAG_PREFIX):
        name = term[len(FLAG_PREFIX):].strip()
        if not name:
            raise TermSyntaxError(term, f'term "{term}" is missing the flag name after "{FLAG_PREFIX}"; '
                                        f'expected {FLAG_PREFIX}NAME')
        return FlagTerm(name)
    if term.startswith(INTENT_PREFIX) or term.startswith(MOVE_PREFIX):
        prefix = INTENT_PREFIX if term.startswith(INTENT_PREFIX) else MOVE_PREFIX
        ident = term[len(prefix):].strip()
        if not ident:
            what = "intent" if prefix == INTENT_PREFIX else "place"
            raise TermSyntaxError(term, f'term "{term}" is missing the {what} after "{prefix}"; expected {prefix}ID')
        return InputTerm(PlayerInput.intent(ident) if prefix == INTENT_PREFIX else PlayerInput.move(ident))
    raise TermSyntaxError(term, f'unknown term "{term}" in condition; {EXPECTED_TERMS}{_term_hint(term)}')


def _term_hint(term: str) -> str:
    if "：" in term:
        return ' (use the ASCII colon ":" instead of "：")'
    for prefix in _PREFIXES:
        bare = prefix[:-1]
        rest = term[len(bare):]
        if term.startswith(bare) and rest and ":" not in rest:
            return f' (did you mean "{prefix}{rest.strip()}"?)'
    return ""


# ---------------------------------------------------------------- conditions

@dataclass(frozen=True, slots=True)
class Clause:
    """Terms that must all hold (`term + term + ...`).  `terms` keeps the written order for display and
    analysis; the other fields are the same facts laid out for `holds`."""
    terms: tuple[Term, ...]
    inputs: tuple[PlayerInput, ...] = ()
    any_input: bool = False
    start: bool = False
    arrival: bool = False
    shown: tuple[str, ...] = ()
    unshown: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()        # as FLAG_PREFIX + name, looked up in the shown view

    @property
    def input(self) -> PlayerInput | None:
        """The input this clause answers, when it names one."""
        return self.inputs[0] if self.inputs else None

    @property
    def has_trigger(self) -> bool:
        """Whether some step kind can select this clause at all."""
        return bool(self.inputs or self.any_input or self.start or self.arrival or self.after)

    def holds(self, input: PlayerInput | None, shown: Container[str], last: str | None,
              starting: bool = False, arrived: bool = False) -> bool:
        for wanted in self.inputs:
            if input != wanted:
                return False
        if self.any_input and input is None:
            return False
        if self.start and not starting:
            return False
        if self.arrival and not arrived:
            return False
        for line_id in self.after:
            if last != line_id:
                return False
        return self.holds_in(shown)

    def holds_in(self, shown: Container[str]) -> bool:
        """The terms about the story so far (済:, 未:, フラグ:)."""
        for line_id in self.shown:
            if line_id not in shown:
                return False
        for line_id in self.unshown:
            if line_id in shown:
                return False
        for flag in self.flags:
            if flag not in shown:
                return False
        return True

    def holds_for_intent(self, shown: Container[str]) -> bool:
        """Whether the clause holds at the start of a step whose input is the intent it names."""
        if self.start or self.arrival or self.after:
            return False
        if len(self.inputs) > 1 and any(i != self.inputs[0] for i in self.inputs):
            return False
        return self.holds_in(shown)

    def __str__(self) -> str:
        return " + ".join(str(t) for t in self.terms)


@dataclass(frozen=True, slots=True)
class Condition:
    """A parsed condition: alternatives (`|`), each a clause of terms that must all hold (`+`); parentheses
    group.  It is kept as the clauses of its disjunctive normal form, so a step and the candidate builder
    ask each clause the same questions a condition without `|` was asked.  `unless` is a condition that,
    once it holds, stops this one from holding (a knowledge entry's `until`)."""
    text: str
    clauses: tuple[Clause, ...]
    unless: Condition | None = None

    # -- what the clauses name, together (indexing, lint, analysis) --
    @property
    def terms(self) -> tuple[Term, ...]:
        return tuple(dict.fromkeys(t for c in self.clauses for t in c.terms))

    @property
    def inputs(self) -> tuple[PlayerInput, ...]:
        return tuple(dict.fromkeys(i for c in self.clauses for i in c.inputs))

    @property
    def input(self) -> PlayerInput | None:
        """The input this condition answers, when it names one."""
        inputs = self.inputs
        return inputs[0] if inputs else None

    @property
    def shown(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i for c in self.clauses for i in c.shown))

    @property
    def unshown(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i for c in self.clauses for i in c.unshown))

    @property
    def after(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i for c in self.clauses for i in c.after))

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f for c in self.clauses for f in c.flags))

    @property
    def any_input(self) -> bool:
        return any(c.any_input for c in self.clauses)

    @property
    def start(self) -> bool:
        return any(c.start for c in self.clauses)

    @property
    def arrival(self) -> bool:
        return any(c.arrival for c in self.clauses)

    @property
    def has_trigger(self) -> bool:
        return any(c.has_trigger for c in self.clauses)

    @property
    def always(self) -> bool:
        return len(self.clauses) == 1 and not self.clauses[0].terms and self.unless is None

    # -- holding --
    def holds(self, input: PlayerInput | None, shown: Container[str], last: str | None,
              starting: bool = False, arrived: bool = False) -> bool:
        """`input` is None at start; `shown` holds every line shown so far, this step included (and the
        flags set, under FLAG_PREFIX); `last` is the line shown just before in this step."""
        if not any(c.holds(input, shown, last, starting, arrived) for c in self.clauses):
            return False
        return self.unless is None or not self.unless.holds_in(shown)

    def holds_in(self, shown: Container[str]) -> bool:
        """Whether some clause's story terms hold (what an `until` asks)."""
        return any(c.holds_in(shown) for c in self.clauses)

    def holds_for_intent(self, shown: Container[str], intent: PlayerInput | None = None) -> bool:
        """Whether the condition holds at the start of a step whose input is an intent it names: the
        question candidate building asks ("could fire now").  With `intent`, only the clauses naming it
        count; without, every clause that could answer an intent (callers pass conditions indexed
        under the intent they mean)."""
        if not any(c.holds_for_intent(shown) for c in self.clauses if intent is None or intent in c.inputs):
            return False
        return self.unless is None or not self.unless.holds_in(shown)

    def waits_for_lines(self, shown: Container[str], intent: PlayerInput) -> bool:
        """Whether every clause naming `intent` needs a line not shown yet (its topic is not open)."""
        named = [c for c in self.clauses if intent in c.inputs]
        return bool(named) and all(any(i not in shown for i in c.shown) for c in named)

    def __str__(self) -> str:
        # One clause reads as its terms; alternatives read as the author wrote them.
        if len(self.clauses) == 1:
            return str(self.clauses[0])
        return " ".join(self.text.split())


ALWAYS = Condition(text="", clauses=(Clause(terms=()),))
# A condition with more alternatives than this is refused (grouping multiplies them out).
MAX_CLAUSES = 64
_TOKEN = lazyre.compile(r"[+|()]")
_WIDE = {"＋": "+", "｜": "|", "（": "(", "）": ")"}


def parse_condition(text: str) -> tuple[Condition, list[TermSyntaxError]]:
    """Parse `text`; returns the condition built from the good terms and every term error, so one load
    reports all mistakes at once.  `a + b` needs both, `a | b` either, parentheses group:
    `意図:音楽 + (済:A04 | フラグ:常連)`."""
    errors: list[TermSyntaxError] = []
    if not text.strip():
        return Condition(text=text, clauses=(Clause(terms=()),)), errors
    for wide, ascii_ in _WIDE.items():
        if wide in text:
            errors.append(TermSyntaxError(wide, f'full-width "{wide}" in condition; expected the ASCII "{ascii_}" '
                                                f'(term + term, term | term, (group))'))
    normal = "".join(_WIDE.get(ch, ch) for ch in text)
    parser = _Parser(text, normal, errors)
    alternatives = parser.parse()
    if len(alternatives) > MAX_CLAUSES:
        errors.append(TermSyntaxError(text, f'condition "{text}" has {len(alternatives)} alternatives once its '
                                            f'groups are multiplied out; at most {MAX_CLAUSES}'))
        alternatives = alternatives[:MAX_CLAUSES]
    clauses = tuple(dict.fromkeys(build_clause(terms) for terms in alternatives)) or (Clause(terms=()),)
    return Condition(text=text, clauses=clauses), errors


class _Parser:
    """Recursive descent over `+`, `|` and parentheses, giving the alternatives' term lists."""

    def __init__(self, text: str, normal: str, errors: list[TermSyntaxError]) -> None:
        self.text = text
        self.errors = errors
        # Operators, and the non-blank text between them (a term); blank pieces are dropped, so a missing
        # term shows as an operator (or the end) where a term is expected.
        self.tokens: list[str] = []
        pos = 0
        for m in _TOKEN.finditer(normal):
            if normal[pos:m.start()].strip():
                self.tokens.append(normal[pos:m.start()].strip())
            self.tokens.append(m.group())
            pos = m.end()
        if normal[pos:].strip():
            self.tokens.append(normal[pos:].strip())
        self.at = 0

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _empty(self) -> None:
        self.errors.append(TermSyntaxError(self.text, f'empty term in condition "{self.text}"; '
                                                      f'expected term + term + ...'))

    def parse(self) -> list[list[Term]]:
        found = self._either()
        while (stray := self._peek()) is not None:
            self.at += 1
            if stray == ")":
                self.errors.append(TermSyntaxError(")", f'unmatched ")" in condition "{self.text}"'))
            else:
                self.errors.append(TermSyntaxError(stray, f'unexpected "{stray}" in condition "{self.text}"; '
                                                          f'expected + or | between terms'))
                found += self._either()
        return found

    def _either(self) -> list[list[Term]]:
        found = self._all()
        while self._peek() == "|":
            self.at += 1
            found += self._all()
        return found

    def _all(self) -> list[list[Term]]:
        found: list[list[Term]] = [[]]
        while True:
            part = self._one()
            if part is not None:
                found = [a + b for a in found for b in part]
            if self._peek() != "+":
                return found
            self.at += 1

    def _one(self) -> list[list[Term]] | None:
        """One term or group; None where it is missing or broken (reported)."""
        piece = self._peek()
        if piece is None or piece in "+|)":
            self._empty()
            return None
        self.at += 1
        if piece == "(":
            inner = self._either()
            if self._peek() == ")":
                self.at += 1
            else:
                self.errors.append(TermSyntaxError("(", f'unclosed "(" in condition "{self.text}"'))
            return inner
        try:
            return [[parse_term(piece)]]
        except TermSyntaxError as exc:
            self.errors.append(exc)
            return None


def build_clause(terms: Iterable[Term]) -> Clause:
    terms = tuple(terms)
    inputs: list[PlayerInput] = []
    shown: list[str] = []
    unshown: list[str] = []
    after: list[str] = []
    flag_names: list[str] = []
    kinds = {"any_input": False, "start": False, "arrival": False}
    for term in terms:
        if isinstance(term, InputTerm):
            if term.input not in inputs:
                inputs.append(term.input)
        elif isinstance(term, AnyInputTerm):
            kinds["any_input"] = True
        elif isinstance(term, StartTerm):
            kinds["start"] = True
        elif isinstance(term, ArrivalTerm):
            kinds["arrival"] = True
        elif isinstance(term, ShownTerm):
            shown.append(term.line_id)
        elif isinstance(term, UnshownTerm):
            unshown.append(term.line_id)
        elif isinstance(term, AfterTerm):
            after.append(term.line_id)
        elif isinstance(term, FlagTerm):
            flag_names.append(FLAG_PREFIX + term.name)
    return Clause(terms=terms, inputs=tuple(inputs), shown=tuple(shown), unshown=tuple(unshown),
                  after=tuple(after), flags=tuple(flag_names), **kinds)


def build_condition(text: str, terms: Iterable[Term]) -> Condition:
    """A condition of one clause (every term must hold)."""
    return Condition(text=text, clauses=(build_clause(terms),))


# ---------------------------------------------------------------- effects

@dataclass(frozen=True, slots=True)
class ExpressionEffect:
    """`表情:CHARACTER:KEY`: set the character's expression on the stage."""
    character: str
    key: str
    kind: str = field(default="expression", init=False)

    def __str__(self) -> str:
        return f"{EXPRESSION_PREFIX}{self.character}:{self.key}"


@dataclass(frozen=True, slots=True)
class FlagEffect:
    """`フラグ:NAME`: set flag NAME when the line fires."""
    name: str
    kind: str = field(default="flag", init=False)

    def __str__(self) -> str:
        return FLAG_PREFIX + self.name


Effect = ExpressionEffect | FlagEffect


def faces_set(effects: Iterable[Effect]) -> dict[str, str]:
    """character → expression, for the face effects among `effects` (the later wins)."""
    return {e.character: e.key for e in effects if isinstance(e, ExpressionEffect)}


def parse_effect(text: str) -> Effect:
    raw = text.strip()
    if raw.startswith(FLAG_PREFIX):
        name = raw[len(FLAG_PREFIX):].strip()
        if not name or ":" in name:
            raise TermSyntaxError(raw, f'effect "{raw}" is malformed; {EXPECTED_EFFECTS}')
        return FlagEffect(name)
    if raw.startswith(EXPRESSION_PREFIX):
        parts = raw[len(EXPRESSION_PREFIX):].split(":")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise TermSyntaxError(raw, f'effect "{raw}" is malformed; {EXPECTED_EFFECTS}')
        return ExpressionEffect(parts[0].strip(), parts[1].strip())
    kind = raw.split(":", 1)[0] if ":" in raw else raw
    hint = ' (use the ASCII colon ":" instead of "：")' if "：" in raw else ""
    raise TermSyntaxError(raw, f'unknown effect kind "{kind}" in effect "{raw}"; {EXPECTED_EFFECTS}{hint}')
