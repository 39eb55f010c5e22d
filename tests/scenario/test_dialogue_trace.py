"""`butai trace SCENARIO --dialogue FILE`: dialogues replayed through the whole turn logic and asserted."""
from __future__ import annotations

import json

import pytest

from butai_tools.cli import main as butai_main
from tests.conftest import ROOT

DIALOGUES = ROOT / "scenarios" / "eval" / "dialogues.json"


def butai(*args: str) -> int:
    try:
        return butai_main(list(args)) or 0
    except SystemExit as exc:
        return int(exc.code or 0)


def write(tmp_path, dialogues) -> str:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"scenario": "chinoike.json", "dialogues": dialogues}, ensure_ascii=False),
                    encoding="utf-8")
    return str(path)


def test_a_dialogue_is_replayed_and_asserted(reference_path, tmp_path, capsys):
    path = write(tmp_path, [
        {"id": "ok", "split": "s", "turns": [
            {"say": "こんばんは"},
            {"say": "とりあえずビールください", "expect": {"order": "ビール", "answer": "order", "place": "店内"}},
            {"say": "ごちそうさま、また来ます", "expect": {"ended": True}},
            {"say": "まだいる", "expect": {"ended": True, "notices": 0}},
            {"restart": True, "expect": {"ended": False, "lines": ["A01", "A02"]}}]},
    ])
    assert butai("trace", str(reference_path), "--dialogue", path) == 0
    out = capsys.readouterr().out
    assert "#2 とりあえずビールください → なし [order] はい、ビール。よく冷えてるわよ。" in out
    assert "all 1 dialogues: 4/4 right (1.000), clarify 0" in out


def test_a_failed_expectation_and_an_unsafe_move_exit_1(reference_path, tmp_path, capsys):
    path = write(tmp_path, [
        {"id": "wrong", "turns": [{"say": "こんばんは", "expect": {"answer": "fallback", "says": "ナポリタン"}}]},
        {"id": "unsafe", "turns": [{"say": "じゃ、ちょっと控え室行ってきまーす", "expect": {"answer": "reaction"}}]},
    ])
    assert butai("trace", str(reference_path), "--dialogue", path, "--json") == 1
    out = json.loads(capsys.readouterr().out)
    assert [t["outcome"] for t in out["turns"]] == ["wrong", "unsafe"]
    assert out["turns"][0]["failures"] == ["answered by reaction:挨拶", "did not say ナポリタン"]
    assert out["wrong"] == 1 and out["unsafe"] == 1 and out["right_share"] == 0.0


def test_a_clarification_is_counted_apart(reference_path, tmp_path, capsys):
    path = write(tmp_path, [{"id": "c", "turns": [
        {"say": "こんばんは"},
        {"say": "お金のことなんだけど", "expect": {"answer": ["clarify", "knowledge"]}},
        {"say": "借りたほうのお金", "expect": {"input": "意図:二人の先の話"}}]}])
    assert butai("trace", str(reference_path), "--dialogue", path, "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert [t["outcome"] for t in out["turns"][1:]] == ["clarify", "right"]
    assert out["clarify"] == 1 and out["clarify_share"] == 0.5 and out["clarify_wanted"] == 1


def test_bad_dialogue_files_name_the_turn(reference_path, tmp_path, capsys):
    path = write(tmp_path, [{"id": "b", "turns": [{"say": "a", "input": "なし"}, {"input": "意図:天気"},
                                                  {"say": "x", "expect": {"colour": "red"}}]}])
    assert butai("trace", str(reference_path), "--dialogue", path) == 1
    err = capsys.readouterr().err
    assert "dialogue b turn 1: expected exactly one of say, input, move, restart" in err
    assert 'dialogue b turn 2: unknown intent "天気"' in err
    assert "dialogue b turn 3: unknown expect keys ['colour']" in err
    assert butai("trace", str(reference_path), "なし", "--dialogue", path) == 2


def test_the_dev_dialogues_stay_safe(reference_path, capsys):
    # A guard on the set the conversation layer was tuned on (the held-out split is not run here).
    assert butai("trace", str(reference_path), "--dialogue", str(DIALOGUES), "--split", "dialogue-dev",
                 "--json") in (0, 1)
    out = json.loads(capsys.readouterr().out)
    assert out["unsafe"] == 0 and out["right_share"] >= 0.9 and out["cases"] >= 60


def test_the_second_examples_dialogues_play_safe_and_no_worse(capsys):
    # The second example's set (scenarios/eval/hanaya-dialogues.json): both splits replayed, every case played
    # through the stage without an unplayable turn, nobody moved or sent home unasked, and the right share no
    # lower than the figures recorded in docs/director.md.
    scenario, dialogues = ROOT / "scenarios" / "hanaya.json", ROOT / "scenarios" / "eval" / "hanaya-dialogues.json"
    assert butai("trace", str(scenario), "--dialogue", str(dialogues), "--json") in (0, 1)
    out = json.loads(capsys.readouterr().out)
    assert out["cases"] >= 189 and out["unsafe"] == 0
    assert out["splits"]["hanaya-dev"]["right"] >= 100 and out["splits"]["hanaya-heldout"]["right"] >= 59


@pytest.mark.parametrize(("scenario", "variants", "floor"), [
    ("chinoike", "dialogues-variants", 1740), ("hanaya", "hanaya-variants", 545)])
def test_meaning_neutral_variants_stay_safe_and_no_worse(scenario, variants, floor, capsys):
    # The frozen variant sets (scripts/make_variants.py: a filler, a marker, an emoji, laughter, a word in
    # hiragana, a polite/casual shift on each case's line): none unsafe, and no fewer right than recorded in
    # docs/director.md.
    path = ROOT / "scenarios" / "eval" / f"{variants}.json"
    assert butai("trace", str(ROOT / "scenarios" / f"{scenario}.json"), "--dialogue", str(path), "--json") in (0, 1)
    out = json.loads(capsys.readouterr().out)
    assert out["unsafe"] == 0 and out["right"] >= floor


def test_the_reference_scenario_renamed_plays_as_the_original(tmp_path, capsys):
    # Its characters, items and places renamed in the scenario and the dialogue sets alike
    # (scenarios/eval/chinoike-renames.json): the engine knows nothing of the original names, so every split
    # scores within 2 cases of the original, and nothing is unsafe.
    from scripts.rename_scenario import rename_files
    scenario, dialogues = rename_files(ROOT / "scenarios" / "eval" / "chinoike-renames.json", tmp_path,
                                       ROOT / "scenarios" / "chinoike.json", DIALOGUES)
    assert "赤尾妙子" not in scenario.read_text(encoding="utf-8")
    figures = []
    for played in ((ROOT / "scenarios" / "chinoike.json", DIALOGUES), (scenario, dialogues)):
        assert butai("trace", str(played[0]), "--dialogue", str(played[1]), "--json") in (0, 1)
        figures.append(json.loads(capsys.readouterr().out))
    base, renamed = figures
    assert renamed["cases"] == base["cases"] and renamed["unsafe"] == 0
    assert renamed["right"] >= base["right"] - 2
    for split, counts in base["splits"].items():
        assert renamed["splits"][split]["right"] >= counts["right"] - 2, split
