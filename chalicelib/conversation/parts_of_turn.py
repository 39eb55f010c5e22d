"""The parts every piece of the turn logic works with, built once per scenario: the rules, the answerer, what
was said (facts), orders, clarification, the focus reader and the knowledge entries.  `Conversation` (turn.py)
and its pieces (recalling.py, serving.py) share them."""
from __future__ import annotations

from ..answers import Answerer
from ..interpret.interpreter import Interpreter
from ..interpret.spelling import Respeller, authored_nouns, scenario_words
from ..interpret.text import make_matcher, prepare_words
from ..scenario import GameRules
from .book import LineBook
from .clarify import Clarifier
from .entries import Entries
from .facts import Facts
from .focus import FocusReader
from .orders import Orders


class TurnParts:
    def __init__(self, rules: GameRules, interpreter: Interpreter, answerer: Answerer | None = None) -> None:
        self.rules = rules
        self.scenario = rules.scenario
        self.interpreter = interpreter
        self.answerer = answerer or Answerer(rules, interpreter.names)
        self.names = interpreter.names
        all_names = [n for names in self.names.characters.values() for n in names] + \
                    [n for place in self.names.places.values() for n in place.names]
        self.book = LineBook(self.scenario)
        self.facts = Facts(self.book, all_names)
        spoken = authored_nouns(self.scenario)
        self.orders = Orders(self.scenario, all_names, {c: list(n) for c, n in self.names.characters.items()}, spoken)
        self.clarifier = Clarifier(self.scenario)
        self.matcher = make_matcher()
        self.focus_reader = FocusReader(self.names)
        self.entries = Entries(self.answerer)
        # kana spellings of the scenario's own words (names, places, items, topic words) read as those words
        words = scenario_words(self.scenario)
        self.respeller = Respeller(words, spoken)
        prepare_words(words)
