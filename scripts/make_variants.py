"""Make a set of meaning-neutral variants of a dialogue set (run once; the output is committed and frozen).

Each dialogue with a case in it comes back once per kind of variant, the player's line of every case changed
in a way that keeps what it means: a filler in front (えっと、), a discourse marker in front (あのさ、), an
emoji at the end, laughter at the end (笑), one word in hiragana (先代 → せんだい), a polite/casual shift
(ですか → なの, ください → ちょうだい). The setup turns stay as they are, so a variant measures only how the
case's line is read. A variant that would not change the line (no kanji word to respell, no form to shift) is
left out. Choices are made from a hash of the dialogue id, so running the script again gives the same file.

    .venv/bin/python scripts/make_variants.py scenarios/eval/dialogues.json scenarios/eval/dialogues-variants.json
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chalicelib.interpret.ja import analyse  # noqa: E402

FILLERS = ["えっと、", "あのー、", "うーん、", "えー、", "んー、"]
MARKERS = ["あのさ、", "ところで、", "そういえば、", "ねえ、", "ていうか、"]
EMOJI = ["😊", "🙏", "✨", "💦", "😂", "👍"]
LAUGHTER = ["笑", "w", "ｗｗ", "（笑）", "ははは"]
KANJI = re.compile(r"[\u4e00-\u9fff]")
END = re.compile(r"[。！？!?…]*$")


def _pick(options: list[str], key: str) -> str:
    return options[int(hashlib.sha256(key.encode()).hexdigest(), 16) % len(options)]


def _hiragana(katakana: str) -> str:
    return "".join(chr(ord(c) - 0x60) if "ァ" <= c <= "ヶ" else c for c in katakana)


def respelled(text: str) -> str | None:
    """The first common noun written with kanji, written in hiragana instead (its reading)."""
    for token in analyse(text).tokens:
        if token.pos[:2] == ("名詞", "普通名詞") and KANJI.search(token.surface) and token.reading:
            return text[:token.start] + _hiragana(token.reading) + text[token.end:]
    return None


def shifted(text: str) -> str | None:
    """A polite line said casually (or the other way round), where one of a few safe rules applies."""
    for polite, casual in (("ですか？", "なの？"), ("ですか?", "なの?"), ("ください", "ちょうだい"),
                           ("ありますか", "ある"), ("いいですか", "いい"), ("でしょうか", "かな")):
        if polite in text:
            return text.replace(polite, casual, 1)
    for casual, polite in (("ありがとう", "ありがとうございます"), ("ごめん", "すみません")):
        if casual in text and polite not in text:
            return text.replace(casual, polite, 1)
    return None


def variant(kind: str, text: str, key: str) -> str | None:
    if kind == "filler":
        return _pick(FILLERS, key) + text
    if kind == "marker":
        return _pick(MARKERS, key) + text
    if kind == "emoji":
        return text + _pick(EMOJI, key)
    if kind == "laughter":
        body = END.sub("", text)
        return body + _pick(LAUGHTER, key) + text[len(body):]
    if kind == "hiragana":
        return respelled(text)
    if kind == "polite":
        return shifted(text)
    raise ValueError(kind)


KINDS = ("filler", "marker", "emoji", "laughter", "hiragana", "polite")


def make(data: dict) -> dict:
    out = []
    for dialogue in data["dialogues"]:
        cases = [i for i, t in enumerate(dialogue["turns"]) if "expect" in t and "say" in t]
        if not cases:
            continue
        for kind in KINDS:
            changed = copy.deepcopy(dialogue)
            any_change = False
            for i in cases:
                turn = changed["turns"][i]
                new = variant(kind, turn["say"], f"{dialogue['id']}/{i}/{kind}")
                if new is not None and new != turn["say"]:
                    turn["say"] = new
                    any_change = True
                else:
                    turn.pop("expect")       # this case has no variant of this kind: not counted
            if any_change:
                changed["id"] = f"{dialogue['id']}~{kind}"
                changed["split"] = f"variants-{kind}"
                changed["note"] = f"{dialogue.get('note', '')} [{kind} variant of {dialogue['id']}, " \
                                  f"{dialogue.get('split', '')}]".strip()
                out.append(changed)
    return {"scenario": data["scenario"], "note": "meaning-neutral variants of each case's line (scripts/"
            "make_variants.py); each split is one kind of variant, compared with the unvaried set",
            "dialogues": out}


def main(argv: list[str]) -> int:
    source, target = Path(argv[0]), Path(argv[1])
    data = json.loads(source.read_text(encoding="utf-8"))
    made = make(data)
    target.write_text(json.dumps(made, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{target}: {len(made['dialogues'])} dialogues")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
