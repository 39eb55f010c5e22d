"""`butai bench classify` in its CPU mode (tiny model, tokenizer trained here, no downloads)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def figures() -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "butai_tools.cli", "bench", "classify", "--device", "cpu", "--size", "tiny",
         "--iterations", "5", "--json"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-4000:] + done.stdout[-2000:]
    return json.loads(done.stdout)


def test_shape(figures):
    assert figures["bench"] == "classify" and figures["backend"] == "transformers"
    assert figures["device"] == "cpu" and figures["iterations"] == 5
    assert figures["concurrency"] == [4, 16]
    rows = figures["results"]
    assert [(r["size"], r["examples"]) for r in rows] == [("tiny", True), ("tiny", False)]
    for r in rows:
        assert r["model"]["layers"] == 2 and r["model"]["hidden_size"] == 64
        assert r["model"]["vocab_size"] >= r["model"]["tokenizer_vocab"]
        for key in ("p50_ms", "p99_ms", "floor_p50_ms", "floor_p99_ms", "ratio", "host_prep_p50_ms"):
            assert isinstance(r[key], (int, float)) and r[key] > 0, key
        assert r["p99_ms"] >= r["p50_ms"]
        assert set(r["cls_per_s"]) == {"1", "4", "16"} and all(v > 0 for v in r["cls_per_s"].values())
        assert set(r["concurrent_p50_ms"]) == {"4", "16"}
        assert r["prompt_tokens"]["min"] > 0 and r["prompt_chars"]["min"] > 0
        # batch 1, then 4 and 16 threads (at least 2 x threads requests each)
        assert r["classifications"] == 5 + 8 + 32
        # the reference scenario's letters are single tokens: one forward pass per classification
        assert r["label_scheme"] == "letters" and r["single_token_answers"] is True
    on, off = rows
    assert on["prompt_tokens"]["p50"] > off["prompt_tokens"]["p50"]        # the examples make it longer


def test_every_answer_is_a_listed_token_or_none(figures):
    for r in figures["results"]:
        assert r["errors"] == {} and r["unlisted"] == 0
        assert set(r["answers"]) <= set(r["offered"]) | {"none"}
        assert sum(r["answers"].values()) == r["classifications"]
        assert all(t.startswith("A") and t[1:].isdigit() for t in r["offered"])


def test_options_parse():
    from butai_tools.cli import build_parser
    args = build_parser().parse_args(["bench", "classify", "--device", "cpu", "--size", "1.5b,4b",
                                      "--iterations", "3", "--concurrency", "0"])
    from butai_tools.bench.classify import _parse_concurrency, _parse_sizes
    assert _parse_sizes(args.size, "cpu") == ["1.5b", "4b"]
    assert _parse_sizes(None, "cpu") == ["tiny"] and _parse_sizes(None, "cuda") == ["1.5b"]
    assert _parse_concurrency(args.concurrency) == []
    with pytest.raises(SystemExit):
        _parse_sizes("7b", "cpu")


def test_real_shapes_are_written_as_configs():
    from types import SimpleNamespace

    from butai_tools.bench.classify import REAL_VOCAB, model_config

    class Tok(SimpleNamespace):
        def __len__(self):
            return 1000

    tok = Tok(pad_token_id=0, eos_token_id=2)
    small = model_config("1.5b", tok)
    assert type(small).__name__ == "Qwen2Config" and small.vocab_size == REAL_VOCAB
    assert (small.hidden_size, small.num_hidden_layers, small.num_attention_heads, small.num_key_value_heads,
            small.intermediate_size) == (1536, 28, 12, 2, 8960)
    big = model_config("4b", tok)
    assert type(big).__name__ == "Qwen3Config" and big.vocab_size == REAL_VOCAB
    assert (big.hidden_size, big.num_hidden_layers, big.num_attention_heads, big.num_key_value_heads,
            big.head_dim, big.intermediate_size) == (2560, 36, 32, 8, 128, 9728)
    assert model_config("tiny", tok).vocab_size == 1024          # the tokenizer's, rounded up to 64
