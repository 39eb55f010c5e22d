"""The broken-scenario corpus: tests/scenario/broken/*.json are copies of the reference scenario
(scenarios/chinoike.json) with exactly one mistake each.  Every file must give exactly one clear load error
that names the file, where in the scenario (line, place, intent, start, JSON line:column) and the term at
fault, and `butai lint` must report it and exit 1 without a traceback."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from butai_tools.cli import main as butai
from butai_tools.scenario.lint import lint_path
from chalicelib.scenario import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parents[2]
BROKEN = Path(__file__).resolve().parent / "broken"

# file stem → (where, term, a fragment of the message)
EXPECTED = {
    "unknown_intent_term": ("line O1", "意図:音樂", 'unknown intent "音樂" in term "意図:音樂"'),
    "after_with_input_term": ("line O2", "直後:O1", 'term "直後:O1" cannot be combined with input term "意図:音楽"'),
    "unknown_line_in_shown": ("line M1", "済:A40", 'unknown line "A40" in term "済:A40"'),
    "unknown_line_in_unshown": ("line A03", "未:A3", 'unknown line "A3" in term "未:A3"'),
    "unknown_line_in_after": ("line B04", "直後:B3", 'unknown line "B3" in term "直後:B3"'),
    "unknown_term_kind": ("line F1", "済み:A04", 'unknown term "済み:A04" in condition; expected one of 意図:X'),
    "unknown_place_in_exits": ("place 店内", "控室", 'unknown place "控室" in exits; expected one of 店内, 控え室'),
    "unknown_place_in_move_term": ("line F1", "移動:屋上", 'unknown place "屋上" in term "移動:屋上"'),
    "unknown_speaker": ("line O2", "神楽坂茜", 'unknown character "神楽坂茜" as speaker'),
    "unknown_person_in_people": ("place 控え室", "赤尾妙", 'unknown character "赤尾妙" in people'),
    "unknown_responder": ("place 店内", "ママ", 'unknown character "ママ" as responder'),
    "effect_unknown_character": ("line A01", "表情:赤尾:smile", 'unknown character "赤尾" in effect "表情:赤尾:smile"'),
    "effect_unknown_expression": ("line O2", "表情:神楽坂葵:furious",
                                  'unknown expression "furious" for 神楽坂葵 in effect "表情:神楽坂葵:furious"'),
    "effect_unknown_kind": ("line M1", "音量:赤尾妙子:smile", 'unknown effect kind "音量" in effect'),
    "duplicate_line_id": ("line M1", "M1", 'duplicate line id "M1"'),
    "duplicate_intent_id": ("intent メニュー", "メニュー", 'duplicate intent id "メニュー"'),
    "unknown_start_place": ("start", "玄関", 'unknown place "玄関" as start.place'),
    "scene_for_unknown_place": ("scene 倉庫", "倉庫", 'unknown place "倉庫" for a scene'),
    "wrong_type": ("intent 音楽", "examples", 'key "examples": expected a valid list'),
    "missing_required_field": ("line O1", "text", 'missing required key "text"'),
    "misspelt_key": ("line M2", "efects", 'unknown key "efects"; expected one of id, speaker, condition, effects, '
                                          'text, repeatable, replies (did you mean "effects"?)'),
    "duplicate_json_key": ('object "A04"', "text", 'duplicate key "text" in one JSON object'),
    "json_syntax_error": ("2:26", None, "invalid JSON: Expecting property name enclosed in double quotes"),
    "not_utf8": ("file", None, "cannot read the scenario: not UTF-8"),
}
FILES = sorted(BROKEN.glob("*.json"))


def test_the_corpus_and_the_table_match():
    assert len(FILES) >= 15
    assert {p.stem for p in FILES} == set(EXPECTED)


def test_the_reference_scenario_itself_loads():
    load_scenario(ROOT / "scenarios" / "chinoike.json")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_exactly_one_clear_load_error(path):
    where, term, fragment = EXPECTED[path.stem]
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    problems = caught.value.problems
    assert len(problems) == 1, [str(p) for p in problems]
    problem = problems[0]
    assert problem.source == os.fspath(path)
    assert (problem.where, problem.term, problem.severity) == (where, term, "error")
    assert fragment in problem.message
    assert str(problem) == f"{path}:{where}: {problem.message}"
    assert str(caught.value) == str(problem) and "Traceback" not in str(caught.value)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_lint_reports_it_and_exits_1(path, capsys):
    assert butai(["lint", str(path)]) == 1
    out, err = capsys.readouterr()
    where, _, fragment = EXPECTED[path.stem]
    lines = out.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}:{where}: error: ") and fragment in lines[0]
    assert err.strip() == f"{path}: 1 error, 0 warnings"


def test_the_butai_command_on_the_whole_corpus():
    """One real `butai lint FILE…` process: exit status 1, one error line per file, no traceback."""
    command = Path(sys.executable).with_name("butai")
    argv = [str(command)] if command.exists() else [sys.executable, "-m", "butai_tools.cli"]
    relative = [str(p.relative_to(ROOT)) for p in FILES]
    done = subprocess.run(argv + ["lint", *relative], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    assert len(errors) == len(FILES)
    for rel in relative:
        where = EXPECTED[Path(rel).stem][0]
        assert sum(line.startswith(f"{rel}:{where}: error: ") for line in errors) == 1, rel
        assert f"{rel}: 1 error, 0 warnings" in done.stderr


def test_a_responder_who_is_not_present_is_a_warning_not_a_load_error(tmp_path, capsys):
    """A responder who is a character but not among the place's people loads (the lint warns), unlike an
    unknown responder (unknown_responder.json)."""
    text = (ROOT / "scenarios" / "chinoike.json").read_text(encoding="utf-8")
    broken = text.replace('"people": ["神楽坂葵"], "responder": "神楽坂葵"', '"people": ["神楽坂葵"], "responder": "赤尾妙子"')
    assert broken != text
    path = tmp_path / "responder_not_present.json"
    path.write_text(broken, encoding="utf-8")
    load_scenario(path)
    reference = {(p.where, p.message) for p in lint_path(ROOT / "scenarios" / "chinoike.json")}
    new = [p for p in lint_path(path) if (p.where, p.message) not in reference]
    assert [(p.where, p.term, p.severity, p.message) for p in new] == [
        ("place 控え室", "赤尾妙子", "warning", 'responder "赤尾妙子" is not among its people (神楽坂葵)')]
    assert butai(["lint", str(path)]) == 0
    assert butai(["lint", "--strict", str(path)]) == 1
    assert "Traceback" not in "".join(capsys.readouterr())
