"""`butai trace`, `butai lint`, `butai schema`, `butai bench rules` through argparse,
as the main CLI registers them."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from butai_tools.bench import rules as bench
from butai_tools.scenario import commands
from butai_tools.scenario.lint import lint_path

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "scenarios" / "schema.json"


def butai(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="butai")
    sub = parser.add_subparsers(dest="command")
    commands.register(sub)
    bench_parser = sub.add_parser("bench")
    bench.register_bench(bench_parser.add_subparsers(dest="bench"))
    args = parser.parse_args(list(argv))
    return args.func(args)


# ---------------------------------------------------------------- trace

def test_trace_json(reference_path, capsys):
    assert butai("trace", str(reference_path), "なし", "意図:音楽", "移動:控え室", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    steps = out["steps"]
    assert [s["input"] for s in steps] == [None, "なし", "意図:音楽", "移動:控え室"]
    assert steps[0]["lines"][0] == {"id": "A01", "speaker": "赤尾妙子",
                                    "text": "いらっしゃい。赤いドア、よく開けたわね。初めての人はたいてい素通りするのよ。"}
    assert steps[0]["effects"] == ["表情:赤尾妙子:smile"]
    free_talk = steps[1]["free_talk"]
    assert free_talk["speaker"] == "赤尾妙子" and free_talk["intent"] is None
    assert free_talk["knowledge"] and all("意図" not in k for k in free_talk["knowledge"])  # entries of no topic
    assert [line["id"] for line in steps[1]["lines"]] == ["A03", "A04"]
    assert [line["id"] for line in steps[2]["lines"]] == ["O1", "O2"]
    assert steps[2]["effects"] == ["表情:神楽坂葵:angry"]
    assert steps[3]["place"] == "控え室" and [line["id"] for line in steps[3]["lines"]] == ["B01"]
    assert steps[1]["candidates"] == ["意図:音楽", "意図:メニュー", "意図:二人の先の話", "移動:控え室", "離脱",
                                      "意図:赤いドア", "意図:店名と看板", "意図:宣伝の写真", "意図:いい店とは",
                                      "意図:今のままでいい"]
    assert set(steps[0]) == {"input", "lines", "effects", "free_talk", "notices", "place", "candidates"}


def test_trace_json_notices(reference_path, capsys):
    assert butai("trace", str(reference_path), "移動:控え室", "離脱", "移動:控え室", "--json") == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert steps[2]["notices"] == [{"kind": "exits", "destinations": ["店内"]}]
    assert steps[3]["notices"] == [{"kind": "already_here", "place": "控え室"}]


def test_trace_json_ending(reference_path, capsys):
    assert butai("trace", str(reference_path), "離脱", "なし", "--json") == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert [line["speaker"] for line in steps[1]["lines"]] == ["赤尾妙子", "神楽坂葵"]
    assert steps[1]["notices"][0]["kind"] == "ending"
    # after the end nothing is played, and the ending is not announced again
    assert steps[2]["notices"] == [] and steps[2]["lines"] == [] and steps[2]["free_talk"] is None


def test_trace_takes_free_text(reference_path, capsys):
    assert butai("trace", str(reference_path), "こんばんは", "流す曲を変えてみたら？", "流す曲を変えてみたら？",
                 "控え室に行こうかと思ったけど、やっぱやめとく", "--json") == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    greeting, music, again, hedge = steps[1:]
    assert greeting["text"] == "こんばんは" and greeting["input"] == "なし"
    assert greeting["answer"]["source"] == "reaction" and greeting["answer"]["act"] == "挨拶"
    assert music["decision"]["input"] == "意図:音楽" and [l["id"] for l in music["lines"]] == ["O1", "O2"]
    # the topic's scripted lines are used up: ママ answers from her knowledge, in her own words
    assert again["answer"]["source"] == "knowledge" and again["answer"]["speaker"] == "赤尾妙子"
    assert hedge["input"] == "なし" and hedge["place"] == "店内"


def test_trace_text_shows_the_decision(reference_path, capsys):
    assert butai("trace", str(reference_path), "ありがとう") == 0
    out = capsys.readouterr().out
    assert "#1 「ありがとう」 → なし\n  解釈    backend なし" in out
    assert "  答え    reaction reaction/赤尾妙子/感謝#1 (act 感謝) 赤尾妙子「どういたしまして。」 [smile]" in out


def test_trace_text(reference_path, capsys):
    assert butai("trace", str(reference_path), "なし", "意図:音楽", "意図:音楽", "離脱") == 0
    out = capsys.readouterr().out
    assert out.startswith(f"血の池の夜 ({reference_path})\n")
    assert "#0 (開始)\n  A01    赤尾妙子「いらっしゃい。" in out
    assert "         effect 表情:赤尾妙子:smile\n" in out
    # a written なし has no words to react to: the responder brings something up herself
    knowledge = json.loads(reference_path.read_text(encoding="utf-8"))["characters"][0]["knowledge"]
    general = [k for k in knowledge if not k.get("condition")]
    music = [k for k in knowledge if k.get("condition") == "意図:音楽"]
    assert f"#1 なし\n  自由会話  赤尾妙子 (なし; knowledge {len(general)})\n" in out
    assert "  答え    chatter chatter/赤尾妙子#1 (act なし) 赤尾妙子「そういえば、" in out
    assert f"#3 意図:音楽\n  自由会話  赤尾妙子 (意図:音楽; knowledge {len(general) + len(music)})\n            - 店では、" in out
    assert "  notice ending: 血の池の夜　おしまい\n" in out
    assert ("  candidates A1 意図:メニュー A2 意図:二人の先の話 A3 移動:控え室 A4 離脱 A5 意図:音楽 A6 意図:赤いドア "
            "A7 意図:店名と看板 A8 意図:宣伝の写真 A9 意図:いい店とは A10 意図:今のままでいい\n") in out
    assert "  place  店内\n" in out


def test_trace_shows_what_a_reply_line_does(tmp_path, capsys):
    from tests.feature_scenarios import every_feature
    path = tmp_path / "every.json"
    path.write_text(json.dumps(every_feature(), ensure_ascii=False), encoding="utf-8")
    assert butai("trace", str(path), "意図:約束", "うん、来るよ") == 0
    out = capsys.readouterr().out
    assert "reply line/Q1>yes#1 (act 同意) 甲「よかった、待ってるね。」 [smile]\n" \
           "         effect フラグ:約束\n         effect 表情:乙:smile\n" in out
    assert butai("trace", str(path), "意図:約束", "ううん、行けない", "--json") == 0
    no = json.loads(capsys.readouterr().out)["steps"][2]
    assert no["answer"]["ref"] == "line/Q1>no#1" and no["answer"]["effects"] == ["フラグ:断った"]


def test_trace_with_no_inputs_shows_the_start(reference_path, capsys):
    assert butai("trace", str(reference_path), "--json") == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert len(steps) == 1 and steps[0]["candidates"][:2] == ["移動:控え室", "離脱"]


@pytest.mark.parametrize("bad, fragment", [
    ("意図音楽", '"意図音楽" is not a player input; expected 意図:X, 移動:P, 離脱 or なし'),
    ("意図:ラーメン", 'unknown intent "ラーメン" in "意図:ラーメン"; expected one of 音楽, メニュー'),
    ("移動:裏口", 'unknown place "裏口" in "移動:裏口"; expected one of 店内, 控え室'),
])
def test_trace_bad_input_exits_2(reference_path, capsys, bad, fragment):
    assert butai("trace", str(reference_path), "なし", bad) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"butai trace: error: {fragment}")


def test_trace_bad_scenario_exits_1(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text("{", encoding="utf-8")
    assert butai("trace", str(path), "なし") == 1
    assert capsys.readouterr().err.startswith(f"{path}:1:2: error: invalid JSON")


# ---------------------------------------------------------------- lint

def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)


def test_lint_exit_codes(tmp_path, make_data, capsys):
    clean = write(tmp_path, "clean.json", make_data(room=[("R1", "甲", "意図:天気")]))
    warned = write(tmp_path, "warned.json", make_data(room=[("R1", "甲", "済:R1")]))
    broken = write(tmp_path, "broken.json", make_data(room=[("R1", "甲", "直後O1")]))
    assert butai("lint", clean) == 0
    assert butai("lint", clean, "--strict") == 0
    assert butai("lint", warned) == 0
    assert butai("lint", warned, "--strict") == 1
    assert butai("lint", broken) == 1
    assert butai("lint", clean, broken) == 1
    out = capsys.readouterr()
    assert f"{warned}:line R1: warning: can never fire: it has no trigger term" in out.out
    assert f'{broken}:line R1: error: unknown term "直後O1" in condition' in out.out
    assert f"{clean}: 0 errors, 0 warnings" in out.err
    assert f"{broken}: 1 error, 0 warnings" in out.err


def test_lint_reference(reference_path, capsys):
    assert butai("lint", str(reference_path)) == 0
    assert butai("lint", str(reference_path), "--strict") == 0     # the reference lints clean
    captured = capsys.readouterr()
    assert captured.out == ""
    hints = len([p for p in lint_path(str(reference_path)) if p.severity == "hint"])
    assert hints > 0 and f"{reference_path}: 0 errors, 0 warnings, {hints} hints (--hints shows them)" in captured.err
    assert butai("lint", str(reference_path), "--hints") == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == hints and all(": hint: " in line for line in out)
    # words no example holds: one hint per intent (7 intents, 42 words), not one per word
    worded = [line for line in out if " of its words are in no example " in line]
    assert len(worded) == 7 and sum(int(line.split(": hint: ")[1].split()[0]) for line in worded) == 42


def test_lint_a_glob_skips_the_schema(reference_path, capsys):
    schema = reference_path.parent / "schema.json"
    assert butai("lint", str(reference_path), str(schema), "--strict") == 0
    err = capsys.readouterr().err
    assert f"{schema}: skipped (the JSON Schema of the format, not a scenario)" in err


# ---------------------------------------------------------------- schema

def test_schema_file_is_in_sync(capsys):
    assert butai("schema") == 0
    printed = capsys.readouterr().out
    assert SCHEMA_FILE.read_text(encoding="utf-8") == printed, \
        "scenarios/schema.json is stale: run `butai schema > scenarios/schema.json`"
    schema = json.loads(printed)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    line = schema["$defs"]["Line"]
    assert line["additionalProperties"] is False
    assert set(line["required"]) == {"id", "speaker", "condition", "text"}
    assert "直後:ID" in line["properties"]["condition"]["description"]
    assert all(p.get("description") for p in line["properties"].values())


def test_reference_scenario_matches_the_schema_shape(reference_data):
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert set(reference_data) <= set(schema["properties"])
    for name, section in (("characters", "Character"), ("places", "Place"), ("intents", "Intent"),
                          ("scenes", "Scene")):
        allowed = set(schema["$defs"][section]["properties"])
        for item in reference_data[name]:
            assert set(item) <= allowed


# ---------------------------------------------------------------- bench

def test_bench_rules_smoke(capsys):
    assert butai("bench", "rules", "--intents", "20", "--lines", "200", "--places", "5", "--steps", "60",
                 "--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["lines"] == 200 and result["steps"] == 60
    assert result["load_ms"] > 0
    for key in ("candidates", "handle"):
        assert set(result[key]) == {"p50_ms", "p99_ms", "first_tenth_p50_ms", "last_tenth_p50_ms"}
        assert 0 < result[key]["p50_ms"] <= result[key]["p99_ms"]
    assert result["lines_shown_at_end"] > result["lines_shown_after_first_tenth"] > 0


def test_bench_rules_table(capsys):
    assert butai("bench", "rules", "--intents", "10", "--lines", "50", "--places", "3", "--steps", "20") == 0
    out = capsys.readouterr().out
    assert "rules benchmark: 10 intents, 50 lines, 3 places, 20 steps" in out
    assert "input_candidates + answered_intents" in out and "handle" in out and "first 10% p50" in out


def test_bench_rejects_bad_sizes(capsys):
    assert butai("bench", "rules", "--places", "0") == 2
