"""`butai eval-interpret` and `butai bench interpret`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from butai_tools.cli import main
from butai_tools.interpret.evaluation import DatasetError, classify_miss, load_dataset, parse_dataset
from chalicelib.config import Settings
from chalicelib.context import build_models
from chalicelib.interpret.backends import build_backend

EVAL_SET = str(Path(__file__).resolve().parents[2] / "scenarios" / "eval" / "interpret.json")


def write(tmp_path, cases):
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"scenario": "chinoike.json", "cases": cases}, ensure_ascii=False), encoding="utf-8")
    return str(path)


SMALL_SET = [
    {"id": "a", "setup": ["なし"], "text": "BGM変えたら？", "expect": "意図:音楽"},
    {"id": "b", "setup": ["なし"], "text": "控え室には行ったことある？", "expect": "なし"},
    {"id": "c", "setup": ["なし"], "text": "こんばんは", "expect": "移動:控え室"},           # a classifier miss
    {"id": "d", "setup": ["なし"], "text": "今の店が一番", "expect": "意図:今のままでいい"},  # narrowed by words
    {"id": "e", "setup": [], "text": "流す曲を変えてみたら？", "expect": "意図:音楽"},        # not a candidate
    {"id": "f", "setup": ["なし"], "to": "神楽坂葵", "text": "葵はSNSとかやってるの？", "expect": ["意図:宣伝の写真", "なし"]},
]


def test_text_report(tmp_path, capsys, reference_path):
    code = main(["eval-interpret", str(reference_path), write(tmp_path, SMALL_SET)])
    out = capsys.readouterr().out
    assert code == 0
    assert "accuracy 3/6 = 0.500" in out and "unsafe 0" in out
    assert "p50" in out and "p95" in out
    assert "precision / recall" in out and "confusions" in out
    assert "narrowed: 2" in out and "classifier: 1" in out
    assert "removed by word narrowing" in out and "not a candidate in this state" in out
    assert "BGM変えたら？" in out


def test_json_report(tmp_path, capsys, reference_path):
    code = main(["eval-interpret", str(reference_path), write(tmp_path, SMALL_SET), "--json", "--repeat", "2"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"total", "correct", "accuracy", "unsafe", "cases"} <= set(data)
    assert data["total"] == 6 and data["correct"] == 3 and data["unsafe"] == 0
    assert data["agreement"]["repeat"] == 2 and data["agreement"]["rate"] == 1.0
    first = data["cases"][0]
    assert first["got"] == "意図:音楽" and first["token"] == "A1" and first["runs"] == ["意図:音楽"] * 2
    misses = {c["id"]: c["miss"] for c in data["cases"] if c["miss"]}
    assert misses == {"c": "classifier", "d": "narrowed", "e": "narrowed"}


def test_unsafe_and_gates(tmp_path, capsys, reference_path):
    cases = [{"id": "u", "setup": ["なし"], "text": "控え室に行こう", "expect": "なし"}]
    code = main(["eval-interpret", str(reference_path), write(tmp_path, cases), "--json", "--max-unsafe", "0"])
    data = json.loads(capsys.readouterr().out)
    assert data["unsafe"] == 1 and data["cases"][0]["unsafe"] and code == 1


def test_refinement_miss_kind(rules):
    from butai_tools.interpret.evaluation import run_dataset
    from chalicelib.interpret import Interpretation, Interpreter
    from chalicelib.scenario import PlayerInput

    class AlwaysMove:
        name = "always-move"

        def interpret(self, text, choices, context):
            move = PlayerInput.move("控え室")
            return Interpretation(move, choices.token_of(move), backend=self.name)

    dataset = parse_dataset({"cases": [{"id": "r", "setup": ["なし"], "text": "葵、今度一緒に映画見ようよ",
                                        "expect": "移動:控え室"}]}, rules)
    [result] = run_dataset(Interpreter(rules, AlwaysMove()), dataset)
    assert result.miss == "refinement" and result.turn.rule == "unfounded_move"
    assert "unfounded_move" in result.miss_detail


def test_reference_set_passes_the_targets(capsys, reference_path):
    code = main(["eval-interpret", str(reference_path), EVAL_SET, "--json", "--min-accuracy", "0.9",
                 "--max-unsafe", "0"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0, (data["accuracy"], data["unsafe"])
    assert set(data["splits"]) >= {"dev", "heldout", "moves-dev", "moves-heldout"}
    # hedged, cancelled, reported and hypothetical moves never move or leave
    assert data["splits"]["moves-heldout"]["unsafe"] == 0 and data["splits"]["moves-dev"]["unsafe"] == 0
    by_id = {c["id"]: c for c in data["cases"]}
    assert by_id["m001"]["got"] == "なし"            # 「控え室に行こうかと思ったけど、やっぱやめとく」
    assert by_id["m005"]["got"] == "移動:店内"       # 「ママのところ戻ろ」
    assert by_id["m006"]["got"] == "移動:控え室"     # 「じゃあ奥の部屋で話そうか」 after 葵's invitation


def test_bad_inputs(tmp_path, capsys, reference_path):
    assert main(["eval-interpret", str(reference_path), str(tmp_path / "missing.json")]) == 1
    bad = write(tmp_path, [{"id": "x", "text": "やあ", "expect": "意図:ない話題"}])
    assert main(["eval-interpret", str(reference_path), bad]) == 1
    assert "unknown intent" in capsys.readouterr().err
    assert main(["eval-interpret", str(reference_path), EVAL_SET, "--split", "nothing"]) == 2


def test_dataset_validation(rules):
    with pytest.raises(DatasetError, match="duplicate id"):
        parse_dataset({"cases": [{"id": "a", "text": "x", "expect": "なし"}] * 2}, rules)
    with pytest.raises(DatasetError, match="unknown place"):
        parse_dataset({"cases": [{"id": "a", "text": "x", "expect": "移動:屋上"}]}, rules)
    with pytest.raises(DatasetError, match="unknown character"):
        parse_dataset({"cases": [{"id": "a", "text": "x", "expect": "なし", "to": "誰か"}]}, rules)
    dataset = load_dataset(EVAL_SET, rules)
    assert all(c.expect for c in dataset.cases)


def test_bench_interpret(capsys, reference_path):
    code = main(["bench", "interpret", "--scenario", str(reference_path), "--dataset", EVAL_SET, "--rounds", "1",
                 "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    for mode in ("variant_words", "plain_words"):
        assert data[mode]["p50_ms"] > 0 and data[mode]["p99_ms"] >= data[mode]["p50_ms"]
    assert data["variant_words"]["correct"] > data["plain_words"]["correct"]


def classifier_from(environ: dict):
    """The classifier the services build from settings read from `environ`."""
    return build_models(Settings.from_env(environ)).classifier()


def test_backend_configuration(monkeypatch):
    assert build_backend().name == "lexical"
    assert classifier_from({}).name == "lexical"
    use = Settings.from_env({"BUTAI_CLASSIFIER": "openai", "BUTAI_OPENAI_BASE_URL": "http://127.0.0.1:1/v1",
                             "BUTAI_OPENAI_MODEL": "m", "BUTAI_CLASSIFIER_TIMEOUT": "2.5",
                             "BUTAI_CONTEXT_LIMIT": "4096"}).models.classifier
    assert use.name == "openai" and use.options["timeout"] == 2.5 and use.options["context_limit"] == 4096
    backend = classifier_from({"BUTAI_CLASSIFIER": "openai", "BUTAI_OPENAI_BASE_URL": "http://127.0.0.1:1/v1",
                               "BUTAI_OPENAI_MODEL": "m", "BUTAI_CLASSIFIER_TIMEOUT": "2.5"})
    assert backend.name == "openai" and backend.timeout == 2.5 and backend.model == "m"
    sm = classifier_from({"BUTAI_CLASSIFIER": "sagemaker", "BUTAI_SAGEMAKER_ENDPOINT": "ep"})
    # the endpoint's client is made from the same settings (context.model_clients), never by the transport
    assert sm.name == "sagemaker" and sm.endpoint == "ep" and sm.client is not None
    tf = classifier_from({"BUTAI_CLASSIFIER": "transformers", "BUTAI_TRANSFORMERS_MODEL": "/nowhere"})
    assert tf.name == "transformers" and tf.model_path == "/nowhere"
    with pytest.raises(ValueError):
        build_backend("oracle")
    with pytest.raises(ValueError):
        classifier_from({"BUTAI_CLASSIFIER": "sagemaker"})       # no endpoint
    with pytest.raises(ValueError):
        build_backend("sagemaker", endpoint="ep")                # no client: the transport reads no settings


def test_classify_miss_names_the_narrowing(rules, states, interpreter):
    from butai_tools.interpret.evaluation import Case
    from chalicelib.scenario import PlayerInput
    case = Case("x", "今の店が一番", (PlayerInput.intent("今のままでいい"),))
    turn = interpreter.interpret_turn(case.text, states["none"])
    kind, detail = classify_miss(case, turn)
    assert kind == "narrowed" and "word narrowing" in detail
