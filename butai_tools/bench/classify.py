"""`butai bench classify`: the in-process `transformers` backend against the bare model.

A randomly initialised model of a real size (the shapes of Qwen2.5-1.5B or of
a Qwen3-4B-like model; ``tiny`` for CI) is built from a config this bench
writes, with a byte-level BPE tokenizer trained here on the reference
scenario's texts and the evaluation set's texts, so nothing is downloaded.
The model's vocabulary has the real size (151,936 rows in the embedding and
the output layer); the tokenizer uses the first ids of it.  The tokenizer
splits digits one by one and keeps tokens to two Japanese characters, like
the real one roughly does, so that the prompts have realistic lengths (about
0.9 tokens per character) and the auto label scheme picks single-token
letters, as it does with the real tokenizer.

The prompts are the project's own: states from the evaluation set's setups,
the backend's ``fit`` and chat rendering, with the option examples (as sent
when they fit) and without them (as sent when the context is short).

Figures per (size, examples on/off):

- p50/p99 milliseconds per classification at batch 1 (``backend.interpret``:
  label scheme, prompt, chat template, tokenisation, forward pass, mapping
  back);
- the floor: one bare prefill forward pass of the same token ids, already on
  the device (``model(input_ids, logits_to_keep=1)`` under inference mode),
  timed the same way, interleaved with the classifications, CUDA-synchronised;
- the ratio of the two p50s (target: at most 1.3 at batch 1 on real sizes);
- classifications per second at batch 1 and with several threads calling
  ``interpret`` at once (the backend scores one call at a time, so the
  concurrent figures show what queueing costs, not a batched path).

Every answer is checked: a listed option of its call, or none.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import platform
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from butai_tools.interpret.evaluation import load_dataset, percentile
from chalicelib.interpret.backends.base import AnswerSheet, messages
from chalicelib.interpret.backends.transformers_local import TransformersBackend
from chalicelib.interpret.options import InterpretChoices, InterpretContext
from chalicelib.interpret.prompts import PromptFit, PromptTemplates, fit_prompt
from chalicelib.scenario import GameRules, load_scenario

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SCENARIO = ROOT / "scenarios" / "chinoike.json"
DEFAULT_DATASET = ROOT / "scenarios" / "eval" / "interpret.json"
TARGET_RATIO = 1.3
REAL_VOCAB = 151936

# Model shapes.  "tiny" takes its vocabulary size from the tokenizer.
SIZES: dict[str, dict[str, Any]] = {
    "tiny": {
        "family": "qwen2", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 32768,
        "tie_word_embeddings": True,
    },
    "1.5b": {      # Qwen2.5-1.5B
        "family": "qwen2", "vocab_size": REAL_VOCAB, "hidden_size": 1536, "intermediate_size": 8960,
        "num_hidden_layers": 28, "num_attention_heads": 12, "num_key_value_heads": 2,
        "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "tie_word_embeddings": True,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
    },
    "4b": {        # Qwen3-4B-like
        "family": "qwen3", "vocab_size": REAL_VOCAB, "hidden_size": 2560, "intermediate_size": 9728,
        "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
        "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "tie_word_embeddings": True,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
    },
}

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]
# Qwen's chat format; the qwen3 one closes an empty thought when thinking is off.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% if think_block and enable_thinking is defined and enable_thinking is false %}"
    "{{ '<think>\\n\\n</think>\\n\\n' }}{% endif %}{% endif %}"
)
MAX_TOKEN_CHARS = 6          # byte-level characters: two Japanese characters, six ASCII ones
TOKENIZER_VOCAB = 8000
CASES_PER_SETUP = 3


def register_bench(bench_subparsers: Any) -> None:
    parser = bench_subparsers.add_parser(
        "classify", help="transformers backend: ms per classification against one bare forward pass",
        description="Build a randomly initialised model of a real size (or a tiny one) and a tokenizer trained "
                    "here, classify the evaluation set's inputs through the transformers backend with the "
                    "project's prompts (examples on and off), and print p50/p99 ms per classification, the floor "
                    "(one bare prefill forward pass of the same prompt), their ratio and classifications per "
                    "second at batch 1 and with concurrent callers.  No downloads.")
    parser.add_argument("--size", default=None,
                        help="tiny, 1.5b or 4b, or several separated by commas "
                             "(default: 1.5b on CUDA, tiny on CPU)")
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    parser.add_argument("--dtype", choices=("auto", "bfloat16", "float16", "float32"), default="auto",
                        help="default: bfloat16 on CUDA, float32 on CPU")
    parser.add_argument("--iterations", type=int, default=None,
                        help="timed classifications (and floor passes) per size and examples setting "
                             "(default: 100 on CUDA, 20 on CPU)")
    parser.add_argument("--concurrency", default="4,16",
                        help="thread counts calling interpret at once, comma-separated; empty or 0 for none "
                             "(default 4,16)")
    parser.add_argument("--labels", choices=("auto", "letters", "tokens"), default="auto",
                        help="answer labels (default auto: single tokens where the tokenizer allows)")
    parser.add_argument("--examples", choices=("both", "on", "off"), default="both")
    parser.add_argument("--warmup", type=int, default=None, help="untimed calls first (default: 5 CUDA, 1 CPU)")
    parser.add_argument("--scenario", default=str(DEFAULT_SCENARIO))
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(func=run_bench)


# ---------------------------------------------------------------- model and tokenizer

def corpus(rules: GameRules, texts: list[str], templates: PromptTemplates) -> list[str]:
    """The tokenizer's training text: the instructions, the scenario's texts,
    the evaluation set's inputs and the prompt's fixed pieces."""
    sc = rules.scenario
    lines = templates.instructions().splitlines()
    for intent in sc.intents.values():
        lines += [intent.id, intent.description, *intent.examples, *intent.words]
    for line in sc.lines.values():
        lines.append(line.text)
    for character in sc.characters.values():
        lines += [character.id, character.name, *character.aliases, character.profile or "",
                  *(k.info for k in character.knowledge)]
    for place in sc.places.values():
        lines += [place.id, *place.aliases]
    lines += texts
    lines += ["## 選択肢", "## 今の場面", "- 場所: ", "- その場の人物: ", "- 直前の相手の発言: ",
              "- プレイヤーが話しかけた相手: ", "発言:「", "」", "どれにも当たらない", "場所を移る：「", "」へ行く",
              "今いる場所を離れる", "none", "none: ", "assistant", "system", "user", "\n\n"]
    lines += [f"- {c}: " for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"] + list("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    return [t for t in lines if t] * 3


def train_tokenizer(lines: list[str], family: str) -> Any:
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=TOKENIZER_VOCAB, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  max_token_length=MAX_TOKEN_CHARS, show_progress=False)
    tok.train_from_iterator(lines, trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>",
                                                pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE.replace("think_block", "true" if family == "qwen3" else "false")
    return fast


def model_config(size: str, tokenizer: Any) -> Any:
    import transformers

    shape = dict(SIZES[size])
    family = shape.pop("family")
    if "vocab_size" not in shape:
        shape["vocab_size"] = -(-len(tokenizer) // 64) * 64
    if shape["vocab_size"] < len(tokenizer):
        raise ValueError(f"the tokenizer has {len(tokenizer)} tokens, more than the model's {shape['vocab_size']}")
    cls = transformers.Qwen3Config if family == "qwen3" else transformers.Qwen2Config
    ids = {"pad_token_id": tokenizer.pad_token_id, "eos_token_id": tokenizer.eos_token_id}
    return cls(**shape, **ids)


def build_model(config: Any, device: str, dtype: Any, seed: int) -> Any:
    import torch
    import transformers

    torch.manual_seed(seed)
    with torch.device(device):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=dtype)
    return model.eval()


# ---------------------------------------------------------------- backend and cases

class BenchBackend(TransformersBackend):
    """The transformers backend; with ``with_examples=False`` its prompts never
    carry the option examples (as when the context is short)."""

    def __init__(self, *args: Any, with_examples: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.with_examples = with_examples

    def fit(self, text: str, choices: InterpretChoices, context: InterpretContext,
            sheet: AnswerSheet) -> PromptFit:
        if self.with_examples:
            return super().fit(text, choices, context, sheet)
        addressee = None
        if context.addressee is not None:
            addressee = next((p.name for p in context.people if p.id == context.addressee), context.addressee)
        user = self.templates.prompt(text, choices, context, sheet.answers, with_examples=False,
                                     addressee=addressee, text_limit=self.text_limit)
        fit = fit_prompt(lambda _: (self.instructions, user), self.count_tokens, self.context_limit(), self.reserve)
        return PromptFit(fit.system, fit.user, fit.tokens, True, fit.fits, fit.counted_by)


@dataclass
class BenchCase:
    id: str
    text: str
    choices: InterpretChoices
    context: InterpretContext
    allowed: frozenset[str]


def bench_cases(rules: GameRules, dataset: Any) -> list[BenchCase]:
    """Up to `CASES_PER_SETUP` cases for each distinct (setup, addressee) of
    the evaluation set, interleaved so that a short run still sees every state."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for case in dataset.cases:
        groups.setdefault((tuple(str(s) for s in case.setup), case.to), []).append(case)
    cases: list[BenchCase] = []
    picked = [group[:CASES_PER_SETUP] for group in groups.values()]
    for round_ in range(CASES_PER_SETUP):
        for group in picked:
            if round_ >= len(group):
                continue
            case = group[round_]
            step = rules.start()
            for s in case.setup:
                step = rules.handle(s, step.state)
            choices = InterpretChoices.make(rules, step.state)
            context = InterpretContext.make(rules, step.state, case.to)
            cases.append(BenchCase(case.id, case.text, choices, context, frozenset(choices.tokens)))
    return cases


def prompt_ids(backend: TransformersBackend, case: BenchCase) -> tuple[list[int], int, str]:
    """The token ids the backend sends for `case` (its own path), the prompt's
    characters and the label scheme."""
    scheme = backend.label_scheme(case.choices)
    sheet = AnswerSheet.make(case.choices, scheme)
    fit = backend.fit(case.text, case.choices, case.context, sheet)
    prompt, _ = backend.chooser.render(messages(fit.system, fit.user))
    return backend.chooser.prompt_ids(messages(fit.system, fit.user)), len(prompt), sheet.scheme


# ---------------------------------------------------------------- timing

def _summary(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "p50": percentile(values, 0.5), "max": max(values)} if values else {}


def _ms(values: list[float], q: float) -> float:
    return round(percentile(values, q), 3)


class Tally:
    """Answers of a run, checked against each call's options."""

    def __init__(self) -> None:
        self.answers: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.unlisted = 0

    def add(self, case: BenchCase, result: Any) -> None:
        if result.error:
            self.errors[str(result.error)] += 1
        if result.token is None:
            self.answers["none"] += 1
        else:
            self.answers[result.token] += 1
            if result.token not in case.allowed:
                self.unlisted += 1


def bench_setting(backend: TransformersBackend, cases: list[BenchCase], *, iterations: int, warmup: int,
                  concurrency: list[int], device: str) -> dict[str, Any]:
    import torch

    model = backend.chooser.model
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    prepared = []
    schemes = set()
    for case in cases:
        ids, chars, scheme = prompt_ids(backend, case)
        schemes.add(scheme)
        prepared.append((case, torch.tensor([ids], device=device), len(ids), chars))
    single = all(backend.chooser.single_token(a) is not None
                 for case in cases
                 for a in AnswerSheet.make(case.choices, backend.label_scheme(case.choices)).allowed)

    def floor(input_ids: Any) -> None:
        with torch.inference_mode():
            model(input_ids=input_ids, logits_to_keep=1)

    tally = Tally()
    for i in range(max(0, warmup)):
        case, input_ids, _, _ = prepared[i % len(prepared)]
        backend.interpret(case.text, case.choices, case.context)
        floor(input_ids)
        sync()

    clock = time.perf_counter
    times: list[float] = []
    floors: list[float] = []
    prep: list[float] = []
    used_tokens: list[int] = []
    used_chars: list[int] = []
    floor_total = 0.0
    for i in range(iterations):
        case, input_ids, n_tokens, chars = prepared[i % len(prepared)]
        used_tokens.append(n_tokens)
        used_chars.append(chars)
        sync()
        t = clock()
        result = backend.interpret(case.text, case.choices, case.context)
        sync()
        times.append((clock() - t) * 1000.0)
        tally.add(case, result)
        t = clock()
        floor(input_ids)
        sync()
        floors.append((clock() - t) * 1000.0)
        floor_total += floors[-1] / 1000.0
    batch1_wall = sum(times) / 1000.0

    # host work only (label scheme, prompt, chat template, tokenisation): where the rest of the time goes
    for i in range(min(iterations, len(prepared) * 2)):
        case = prepared[i % len(prepared)][0]
        t = clock()
        prompt_ids(backend, case)
        prep.append((clock() - t) * 1000.0)

    cls_per_s: dict[str, float] = {"1": round(iterations / batch1_wall, 2) if batch1_wall > 0 else 0.0}
    concurrent_p50: dict[str, float] = {}
    for threads in concurrency:
        requests = max(iterations, 2 * threads)
        latencies: list[float] = []

        def one(i: int) -> tuple[BenchCase, Any, float]:
            case = prepared[i % len(prepared)][0]
            t = clock()
            result = backend.interpret(case.text, case.choices, case.context)
            return case, result, (clock() - t) * 1000.0

        sync()
        t0 = clock()
        with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as pool:
            for case, result, ms in pool.map(one, range(requests)):
                tally.add(case, result)
                latencies.append(ms)
        sync()
        wall = clock() - t0
        cls_per_s[str(threads)] = round(requests / wall, 2) if wall > 0 else 0.0
        concurrent_p50[str(threads)] = _ms(latencies, 0.5)

    p50, floor_p50 = percentile(times, 0.5), percentile(floors, 0.5)
    return {
        "label_scheme": "/".join(sorted(schemes)),
        "single_token_answers": single,
        "cases": len(prepared),
        "prompt_tokens": {k: round(v) for k, v in _summary(used_tokens).items()},
        "prompt_chars": {k: round(v) for k, v in _summary(used_chars).items()},
        "classifications": sum(tally.answers.values()),
        "p50_ms": round(p50, 3), "p99_ms": _ms(times, 0.99), "mean_ms": round(sum(times) / len(times), 3),
        "floor_p50_ms": round(floor_p50, 3), "floor_p99_ms": _ms(floors, 0.99),
        "ratio": round(p50 / floor_p50, 3) if floor_p50 > 0 else None,
        "host_prep_p50_ms": _ms(prep, 0.5),
        "cls_per_s": cls_per_s,
        "floor_per_s": round(iterations / floor_total, 2) if floor_total > 0 else 0.0,
        "concurrent_p50_ms": concurrent_p50,
        "answers": dict(sorted(tally.answers.items())),
        "offered": sorted({t for case in cases for t in case.allowed}),
        "unlisted": tally.unlisted,
        "errors": dict(tally.errors),
    }


# ---------------------------------------------------------------- the bench

def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def _parse_sizes(value: str | None, device: str) -> list[str]:
    if not value:
        return ["1.5b" if device == "cuda" else "tiny"]
    sizes = [s.strip().lower() for s in value.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown or not sizes:
        raise SystemExit(f"unknown size {', '.join(unknown) or value!r}; expected {', '.join(SIZES)}")
    return sizes


def _parse_concurrency(value: str | None) -> list[int]:
    if not value:
        return []
    levels = []
    for part in value.split(","):
        part = part.strip()
        if part:
            n = int(part)
            if n > 1:
                levels.append(n)
    return levels


def bench_classify(sizes: list[str], device: str = "auto", dtype: str = "auto", iterations: int | None = None,
                   concurrency: list[int] | None = None, labels: str = "auto", examples: str = "both",
                   warmup: int | None = None, scenario: str | Path = DEFAULT_SCENARIO,
                   dataset: str | Path = DEFAULT_DATASET, seed: int = 0) -> dict[str, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    import transformers

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA device "
                         f"(torch {torch.__version__}, built for CUDA {torch.version.cuda})")
    if dtype == "auto":
        dtype = "bfloat16" if device == "cuda" else "float32"
    torch_dtype = getattr(torch, dtype)
    if iterations is None:
        iterations = 100 if device == "cuda" else 20
    iterations = max(1, iterations)
    if warmup is None:
        warmup = 5 if device == "cuda" else 1
    concurrency = [4, 16] if concurrency is None else concurrency
    settings = {"both": [True, False], "on": [True], "off": [False]}[examples]

    rules = GameRules(load_scenario(scenario))
    data = load_dataset(dataset, rules)
    cases = bench_cases(rules, data)
    templates = PromptTemplates()
    lines = corpus(rules, [c.text for c in data.cases], templates)

    figures: dict[str, Any] = {
        "bench": "classify", "backend": "transformers", "device": device,
        "device_name": torch.cuda.get_device_name(0) if device == "cuda" else _cpu_name(),
        "dtype": dtype, "cpu_threads": torch.get_num_threads(),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        "iterations": iterations, "warmup": warmup, "concurrency": concurrency, "labels": labels,
        "target_ratio": TARGET_RATIO, "floor": "model(input_ids, logits_to_keep=1), inference mode",
        "results": [],
    }
    for size in sizes:
        family = SIZES[size]["family"]
        with tempfile.TemporaryDirectory(prefix=f"butai-classify-{size}-") as directory:
            t = time.perf_counter()
            tokenizer = train_tokenizer(lines, family)
            config = model_config(size, tokenizer)
            tokenizer.save_pretrained(directory)
            config.save_pretrained(directory)          # the config this bench writes
            model = build_model(config, device, torch_dtype, seed)
            build_s = time.perf_counter() - t
            info = {
                "architecture": type(model).__name__,
                "parameters": sum(p.numel() for p in model.parameters()),
                "hidden_size": config.hidden_size, "layers": config.num_hidden_layers,
                "heads": config.num_attention_heads, "kv_heads": config.num_key_value_heads,
                "intermediate_size": config.intermediate_size, "vocab_size": config.vocab_size,
                "tokenizer_vocab": len(tokenizer), "build_s": round(build_s, 2),
            }
            for with_examples in settings:
                backend = BenchBackend(directory, device=device, model=model, tokenizer=tokenizer, labels=labels,
                                       timeout=3600.0, with_examples=with_examples)
                row = bench_setting(backend, cases, iterations=iterations, warmup=warmup,
                                    concurrency=concurrency, device=device)
                figures["results"].append({"size": size, "examples": with_examples, "model": info, **row})
                if backend.chooser._executor is not None:
                    backend.chooser._executor.shutdown(wait=True)
            del model
            if device == "cuda":
                torch.cuda.empty_cache()
    real = [r["ratio"] for r in figures["results"] if r["size"] != "tiny" and r["ratio"] is not None]
    figures["meets_target"] = all(r <= TARGET_RATIO for r in real) if real else None
    return figures


def _rate(value: float) -> str:
    return f"{value:>9.1f}" if value >= 10 else f"{value:>9.3f}"


def print_table(figures: dict[str, Any]) -> None:
    levels = [str(n) for n in figures["concurrency"]]
    print(f"classification, transformers backend: {figures['device']} ({figures['device_name']}), "
          f"{figures['dtype']}, {figures['iterations']} per row, floor = {figures['floor']}")
    head = (f"{'size':<5} {'examples':<8} {'tokens':>6} {'p50 ms':>9} {'p99 ms':>9} {'floor p50':>9} "
            f"{'ratio':>6} {'cls/s b1':>9}" + "".join(f" {'cls/s c' + n:>9}" for n in levels) + "  answers")
    print(head)
    for r in figures["results"]:
        answers = "ok" if not r["unlisted"] and not r["errors"] else f"unlisted {r['unlisted']} errors {r['errors']}"
        print(f"{r['size']:<5} {'on' if r['examples'] else 'off':<8} {r['prompt_tokens']['p50']:>6} "
              f"{r['p50_ms']:>9.2f} {r['p99_ms']:>9.2f} {r['floor_p50_ms']:>9.2f} {r['ratio'] or 0.0:>6.2f} "
              f"{_rate(r['cls_per_s']['1'])}" + "".join(f" {_rate(r['cls_per_s'].get(n, 0.0))}" for n in levels)
              + f"  {answers}")
    sizes = dict.fromkeys(r["size"] for r in figures["results"])
    for size in sizes:
        m = next(r["model"] for r in figures["results"] if r["size"] == size)
        print(f"  {size}: {m['architecture']}, {m['parameters'] / 1e6:.1f}M parameters, hidden {m['hidden_size']}, "
              f"{m['layers']} layers, {m['heads']}/{m['kv_heads']} heads, vocab {m['vocab_size']} "
              f"(tokenizer {m['tokenizer_vocab']}), built in {m['build_s']:.1f} s")
    if figures["meets_target"] is not None:
        print(f"  target ratio <= {figures['target_ratio']} at batch 1: "
              f"{'met' if figures['meets_target'] else 'NOT met'}")


def run_bench(args: argparse.Namespace) -> int:
    device = args.device
    if device == "auto":
        try:
            import torch
            device = "cuda" if torch.cuda.is_available() else "cpu"
        except ImportError:
            device = "cpu"
    try:
        import tokenizers  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        print(f"butai bench classify needs torch, transformers and tokenizers: {exc}")
        return 2
    figures = bench_classify(_parse_sizes(args.size, device), device=device, dtype=args.dtype,
                             iterations=args.iterations, concurrency=_parse_concurrency(args.concurrency),
                             labels=args.labels, examples=args.examples, warmup=args.warmup,
                             scenario=args.scenario, dataset=args.dataset, seed=args.seed)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=2))
    else:
        print_table(figures)
    bad = [r for r in figures["results"] if r["unlisted"] or r["errors"]]
    return 1 if bad else 0
