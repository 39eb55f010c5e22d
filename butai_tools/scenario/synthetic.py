"""A synthetic scenario of any size, for benchmarks and scale tests.

Deterministic for a given seed.  Its shape imitates a hand-written scenario:
each place has a few people, a handful of topics with response lines gated by
earlier lines, 直後: chains, progression and arrival lines, and each intent has
knowledge for a couple of characters.  It loads without errors.
"""
from __future__ import annotations

import random
from typing import Any

from chalicelib.scenario.inputs import PlayerInput

EXPRESSIONS = ["neutral", "smile", "troubled", "angry"]


def synthetic_scenario(intents: int = 1000, lines: int = 10000, places: int = 50, seed: int = 0) -> dict[str, Any]:
    if intents < 1 or places < 1 or lines < 0:
        raise ValueError("need at least one intent and one place, and a non-negative number of lines")
    rng = random.Random(seed)
    n_chars = max(2, places * 2)
    characters = [{
        "id": f"C{c}", "name": f"人物{c}", "aliases": [f"c{c}"], "profile": f"synthetic character {c}",
        "expressions": EXPRESSIONS, "knowledge": [], "fallbacks": [{"id": f"C{c}-拒1", "text": "……"}],
    } for c in range(n_chars)]
    intent_ids = [f"I{i}" for i in range(intents)]
    for i, intent_id in enumerate(intent_ids):
        for c in rng.sample(range(n_chars), k=min(2, n_chars)):
            condition = str(PlayerInput.intent(intent_id))
            characters[c]["knowledge"].append({"info": f"opinion of C{c} about {intent_id}", "condition": condition})

    place_ids = [f"P{p}" for p in range(places)]
    place_list = []
    for p, place_id in enumerate(place_ids):
        people = [f"C{c}" for c in rng.sample(range(n_chars), k=min(3, n_chars))]
        exits = []
        if places > 1:
            exits = [place_ids[(p + 1) % places], place_ids[(p - 1) % places]]
            if places > 3:
                exits.append(place_ids[rng.randrange(places)])
            exits = [e for e in dict.fromkeys(exits) if e != place_id]
        place_list.append({"id": place_id, "aliases": [f"場所{p}"], "people": people, "responder": people[0],
                           "exits": exits})

    per_place = [lines // places + (1 if p < lines % places else 0) for p in range(places)]
    scenes = []
    for p, place_id in enumerate(place_ids):
        people = place_list[p]["people"]
        topics = rng.sample(intent_ids, k=min(len(intent_ids), max(1, per_place[p] // 4)))
        exits = place_list[p]["exits"]
        scene_lines: list[dict[str, Any]] = []
        budget = per_place[p]

        def add(condition: str, effect: bool = False) -> str:
            line_id = f"L{p}_{len(scene_lines)}"
            speaker = rng.choice(people)
            line: dict[str, Any] = {"id": line_id, "speaker": speaker, "condition": condition,
                                    "text": f"line {line_id}"}
            if effect:
                line["effects"] = [f"表情:{speaker}:{rng.choice(EXPRESSIONS)}"]
            scene_lines.append(line)
            return line_id

        def gate() -> str:
            # Gate on an earlier line of this scene now and then, as authors do.
            if scene_lines and rng.random() < 0.3:
                return " + 済:" + rng.choice(scene_lines)["id"]
            return ""

        if p == 0 and budget:
            first = add("開始", effect=True)
            budget -= 1
            if budget:
                add(f"直後:{first}")
                budget -= 1
        if budget and places > 1:
            add("到着 + 未:" + f"L{p}_{len(scene_lines)}")
            budget -= 1
        while budget > 0:
            roll = rng.random()
            if roll < 0.62:
                prev = add(f"{PlayerInput.intent(rng.choice(topics))}{gate()}", effect=rng.random() < 0.3)
                budget -= 1
                while budget > 0 and rng.random() < 0.35:
                    prev = add(f"直後:{prev}", effect=rng.random() < 0.2)
                    budget -= 1
            elif roll < 0.8:
                own = f"L{p}_{len(scene_lines)}"
                add(f"入力{gate()} + 未:{own}")
                budget -= 1
            elif roll < 0.88 and exits:
                add(f"{PlayerInput.move(rng.choice(exits))}{gate()}")
                budget -= 1
            elif roll < 0.92:
                add(f"離脱{gate()}")
                budget -= 1
            else:
                add(f"なし{gate()}")
                budget -= 1
        scenes.append({"place": place_id, "lines": scene_lines})

    return {
        "title": f"synthetic {intents} intents / {lines} lines / {places} places (seed {seed})",
        "start": {"place": place_ids[0]},
        "characters": characters,
        "places": place_list,
        "intents": [{"id": intent_id, "description": f"topic {intent_id}", "examples": [f"{intent_id}について"],
                     "words": []} for intent_id in intent_ids],
        "scenes": scenes,
    }
