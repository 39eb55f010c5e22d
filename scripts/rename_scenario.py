"""Rename a scenario's names — characters, items, places — in the scenario and its dialogue sets alike.

The renamed copy tells the same story of other people, another menu and other rooms; replaying its dialogue
sets (`butai trace --dialogue`) shows whether the engine knows anything of the original names. The renames are
data (`scenarios/eval/chinoike-renames.json`: pairs, longer names first); each is replaced wherever it is
written, lines and examples included, so the copy stays one consistent world.

    .venv/bin/python scripts/rename_scenario.py scenarios/eval/chinoike-renames.json OUT_DIR \\
        scenarios/chinoike.json scenarios/eval/dialogues.json
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path


def load_renames(path: Path) -> list[tuple[str, str]]:
    pairs = [(a, b) for a, b in json.loads(path.read_text(encoding="utf-8"))["renames"]]
    return sorted(pairs, key=lambda pair: -len(pair[0]))


def renamed(text: str, renames: list[tuple[str, str]]) -> str:
    """Every name replaced in one pass (a new name never renamed again), longer names first."""
    table = dict(renames)
    pattern = re.compile("|".join(re.escape(old) for old, _ in renames))
    return pattern.sub(lambda m: table[m.group()], text)


def rename_files(renames_file: Path, out_dir: Path, *files: Path) -> list[Path]:
    renames = load_renames(renames_file)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in files:
        target = out_dir / path.name
        target.write_text(renamed(path.read_text(encoding="utf-8"), renames), encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    for written_path in rename_files(Path(sys.argv[1]), Path(sys.argv[2]), *map(Path, sys.argv[3:])):
        print(written_path)
