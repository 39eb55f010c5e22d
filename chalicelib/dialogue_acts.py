"""The dialogue acts a scenario's reactions answer (挨拶, 感謝, 注文…), as data: `interpret/lexicon/acts.json`.

The engine names an act by its key there (`ACT.greeting`), never by its word, and asks what an act is by its
groups (`ACT.group("social")`), so a new act — a toast, 乾杯 — is an entry of that file (its word, its groups,
the pattern that finds it and where it is tried), a reaction in a scenario, and the schema written again.  A
leaf: the scenario's format, the interpretation and the conversation all read it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

_FILE = Path(__file__).resolve().parent / "interpret" / "lexicon" / "acts.json"


@dataclass(frozen=True)
class DialogueActs:
    greeting: str
    thanks: str
    apology: str
    praise: str
    insult: str
    agree: str
    disagree: str
    question: str
    order: str
    paying: str
    about_self: str
    sad_news: str
    own_life: str
    all: tuple[str, ...]                          # every act's word, in the file's order (new ones too)
    groups: dict[str, frozenset[str]]             # group → the words of its acts
    descriptions: dict[str, str]                  # word → what the act is
    keys: dict[str, str]                          # key → word

    def group(self, name: str) -> frozenset[str]:
        return self.groups.get(name, frozenset())


def _load() -> DialogueActs:
    acts: dict[str, dict] = json.loads(_FILE.read_text(encoding="utf-8"))["acts"]
    keys = {key: entry["act"] for key, entry in acts.items()}
    groups: dict[str, set[str]] = {}
    for entry in acts.values():
        for group in entry.get("groups", ()):
            groups.setdefault(group, set()).add(entry["act"])
    named = {f: keys[f] for f in DialogueActs.__dataclass_fields__ if f not in ("all", "groups", "descriptions", "keys")}
    return DialogueActs(**named, all=tuple(keys.values()),
                        groups={g: frozenset(words) for g, words in groups.items()},
                        descriptions={entry["act"]: entry.get("description", "") for entry in acts.values()},
                        keys=keys)


ACT = _load()
