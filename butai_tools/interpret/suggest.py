"""`butai suggest SCENARIO DATASET`: what an author could add so that missed inputs are caught.

The data set is an evaluation set (``export-eval`` writes one from real
play; ``eval-interpret`` reads the same).  Every case is interpreted as in
``eval-interpret``; for each miss whose expected input is an intent, the
report gives, per intent, the missed text, why it was missed and the
smallest change that would have caught it:

- *narrowed out* by word narrowing: none of the intent's ``words`` occurs;
  the suggestion is the player's content word(s) to add to ``words``,
  nearest in meaning to the intent's words first;
- *classifier chose X*: the intent was offered but lost; the suggestion is
  the text as an ``example`` (and its content words missing from ``words``);
- *refinement rule Y* changed the choice: named, with the text as an example;
- not a candidate in that state, or removed by addressee narrowing: no word
  helps; said so.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from typing import Any

from butai_tools.interpret.evaluation import CaseResult, load_for_command, run_dataset
from chalicelib.interpret.interpreter import Interpreter
from chalicelib.interpret.ja import analyse, word_meaning
from chalicelib.interpret.text import nfkc
from chalicelib.scenario import GameRules


@dataclass
class Suggestion:
    case: str
    text: str
    reason: str                       # narrowed / classifier / refinement / not_offered
    detail: str
    add_words: list[str] = field(default_factory=list)
    add_example: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.case, "text": self.text, "reason": self.reason, "detail": self.detail,
                "add_words": self.add_words, "add_example": self.add_example}


def _content_words(text: str) -> list[str]:
    out = []
    for token in analyse(nfkc(text)).tokens:
        if token.is_content and len(token.surface) >= 1 and not token.pos[1:2] == ("固有名詞",):
            out.append(token.surface if token.pos[0] == "名詞" else token.lemma)
    return list(dict.fromkeys(out))


def _rank_by_meaning(candidates: list[str], anchors: list[str]) -> list[str]:
    table = word_meaning()
    if table is None or not anchors:
        return candidates

    def nearness(word: str) -> float:
        return max((table.cosine(word, a) for a in anchors), default=0.0)
    return sorted(candidates, key=nearness, reverse=True)


def suggest_for(result: CaseResult, rules: GameRules) -> tuple[str, Suggestion] | None:
    if result.correct:
        return None
    intents = [e for e in result.case.expect if e.is_intent]
    if not intents:
        return None
    target = intents[0]
    intent = rules.scenario.intents.get(target.target)
    if intent is None:
        return None
    debug = result.turn.debug
    by_words = {n.input for n in debug.narrowing.words}
    by_addressee = {n.input for n in debug.narrowing.addressee}
    candidates = {c.input for c in debug.candidates}
    have = {nfkc(w) for w in intent.words}
    # a word another intent lists would only move the contest, not win it
    others = {nfkc(w) for other in rules.scenario.intents.values() if other.id != intent.id for w in other.words}
    missing = [w for w in _content_words(result.case.text) if nfkc(w) not in have and nfkc(w) not in others]
    missing = _rank_by_meaning(missing, list(intent.words))
    text, key = result.case.text, str(target)
    if key not in candidates:
        return key, Suggestion(result.case.id, text, "not_offered",
                               "not a candidate in this state (the rules do not offer it here): no word helps")
    if key in by_addressee:
        return key, Suggestion(result.case.id, text, "not_offered",
                               "removed by addressee narrowing (the addressee has no line or knowledge for it)")
    if key in by_words:
        return key, Suggestion(result.case.id, text, "narrowed",
                               "narrowed out: none of its words occurs in the text", add_words=missing[:2])
    model = debug.backend.input if debug.backend is not None else None
    if model == key:
        return key, Suggestion(result.case.id, text, "refinement",
                               f"refinement rule {result.turn.rule} changed it to {result.got}", add_example=text)
    return key, Suggestion(result.case.id, text, "classifier",
                           f"classifier chose {model or 'なし'}", add_words=missing[:1], add_example=text)


def suggestions(rules: GameRules, results: list[CaseResult]) -> dict[str, list[Suggestion]]:
    out: dict[str, list[Suggestion]] = {}
    for result in results:
        found = suggest_for(result, rules)
        if found is not None:
            out.setdefault(found[0], []).append(found[1])
    return out


def format_suggestions(found: dict[str, list[Suggestion]], total: int) -> str:
    if not found:
        return f"no missed intent in {total} cases"
    lines = []
    for intent, items in sorted(found.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"{intent}  ({len(items)} missed)")
        for s in items:
            lines.append(f"  {s.case}: 「{s.text}」")
            lines.append(f"      why: {s.detail}")
            if s.add_words:
                lines.append(f"      add to words: {', '.join(s.add_words)}")
            if s.add_example:
                lines.append(f"      add as example: {s.add_example}")
        words = list(dict.fromkeys(w for s in items if s.reason == "narrowed" for w in s.add_words))
        if words:
            lines.append(f"  → words that would have caught the narrowed ones: {', '.join(words)}")
        lines.append("")
    return "\n".join(lines).rstrip()


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "suggest", help="per intent, the missed inputs of a data set and the words or examples that would catch them",
        description="Interpret every case of a data set (from export-eval, or an evaluation set) and list, per "
                    "intent, the missed inputs, why each was missed (narrowed out, classifier chose X, "
                    "refinement rule Y) and the words or examples that would have caught it.")
    parser.add_argument("scenario", metavar="SCENARIO")
    parser.add_argument("dataset", metavar="DATASET")
    parser.add_argument("--split", default=None, help="only the cases of this split")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run_suggest)


def run_suggest(args: argparse.Namespace) -> int:
    loaded = load_for_command("suggest", args.scenario, args.dataset, args.split)
    if isinstance(loaded, int):
        return loaded
    rules, dataset = loaded
    results = run_dataset(Interpreter(rules), dataset)
    found = suggestions(rules, results)
    if args.json:
        print(json.dumps({"scenario": args.scenario, "dataset": args.dataset, "cases": len(results),
                          "intents": {k: [s.to_dict() for s in v] for k, v in found.items()}},
                         ensure_ascii=False, indent=1))
    else:
        print(format_suggestions(found, len(results)))
    return 0
