"""A model in this process (``transformers``, CPU or CUDA): constrained choice by scoring, never free text.

Every allowed label is scored after the prompt and the best one is taken, so the answer is always one of
the labels and every label gets a probability:

- when every label is a single token of the tokenizer (the classifier picks its label scheme so where it
  can), one forward pass over the prompt gives the next-token distribution, restricted to those tokens
  and renormalised;
- otherwise each label is appended to the prompt and all of them go through one batched forward pass;
  a label's score is the sum of its tokens' log-probabilities.

The prompt is encoded the way the model expects it.  A model with a chat template gets the template
(which writes the model's own start tokens, Gemma's ``<bos>`` among them); a model without one — a base
model, or a GGUF file whose metadata carries none — gets plain text encoded *with* the tokenizer's special
tokens, so it still starts with its ``<bos>``.

``model_path`` is a model directory (``save_pretrained``) or a ``.gguf`` file, which transformers
dequantises on load (it needs the ``gguf`` package).  ``torch`` and ``transformers`` are imported only when
the model is first used.
"""
from __future__ import annotations

import concurrent.futures
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .choice import Choice
from .errors import ErrorKind, ModelCallError

DEFAULT_TIMEOUT = 10.0
# After the prompt of a model without a chat template: where the answer goes.
PLAIN_ANSWER_CUE = "答え: "


def load_pretrained(model_path: str, *, dtype: Any = None) -> tuple[Any, Any]:
    """(tokenizer, model) from a model directory or a ``.gguf`` file, from local files only."""
    import transformers
    path = Path(model_path)
    options: dict[str, Any] = {"local_files_only": True}
    if path.suffix == ".gguf":
        where, options["gguf_file"] = str(path.parent), path.name
    else:
        where = model_path
    model_options = dict(options)
    if dtype is not None:
        model_options["dtype"] = dtype
    tokenizer = transformers.AutoTokenizer.from_pretrained(where, **options)
    model = transformers.AutoModelForCausalLM.from_pretrained(where, **model_options)
    return tokenizer, model


class LocalModel:
    name = "transformers"
    current_mode = None          # nothing to negotiate: the labels are scored, not generated

    def __init__(self, model_path: str = "", *, device: str = "auto", dtype: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, model: Any = None, tokenizer: Any = None) -> None:
        if not model_path and model is None:
            raise ValueError("the transformers backend needs a model directory or .gguf file "
                             "(BUTAI_TRANSFORMERS_MODEL)")
        self.model_path = model_path
        self.device_setting = device
        self.dtype = dtype
        self.timeout = float(timeout)
        self._model = model
        self._tokenizer = tokenizer
        self._device: str | None = None
        self._lock = threading.Lock()
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._single_ids: dict[str, int] = {}

    def describe(self) -> str:
        return self.model_path or type(self._model).__name__

    # ---- loading

    def load(self) -> None:
        """Load once; `ModelCallError` (unavailable) when torch, transformers or the model is missing."""
        if self._model is not None and self._tokenizer is not None and self._device is not None:
            return
        with self._lock:
            if self._model is not None and self._tokenizer is not None and self._device is not None:
                return
            try:
                import torch
                import transformers  # noqa: F401
            except ImportError as exc:
                raise ModelCallError(ErrorKind.UNAVAILABLE,
                                     f"the transformers backend needs torch and transformers: {exc}") from None
            device = self.device_setting
            if device == "auto":
                device = "cuda" if torch.cuda.is_available() else "cpu"
            try:
                if self._tokenizer is None or self._model is None:
                    tokenizer, model = load_pretrained(self.model_path,
                                                       dtype=getattr(torch, self.dtype) if self.dtype else None)
                    self._tokenizer = self._tokenizer or tokenizer
                    self._model = self._model or model
                self._model.to(device)
                self._model.eval()
            except Exception as exc:
                raise ModelCallError(ErrorKind.UNAVAILABLE, f"cannot load {self.model_path}: {exc}") from None
            self._device = device

    @property
    def tokenizer(self) -> Any:
        self.load()
        return self._tokenizer

    @property
    def model(self) -> Any:
        self.load()
        return self._model

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    # ---- the prompt

    def defuse(self, text: str) -> str:
        """`text` with this tokenizer's special tokens (</s>, <|im_end|>, <start_of_turn> …) broken by a word
        joiner, so that typed markers stay text and never become role or end tokens."""
        tokenizer = self.tokenizer
        specials = set(getattr(tokenizer, "all_special_tokens", []) or [])
        specials.update(getattr(tokenizer, "additional_special_tokens", []) or [])
        for token in sorted((t for t in specials if isinstance(t, str) and len(t) > 1), key=len, reverse=True):
            if token in text:
                text = text.replace(token, token[0] + "\u2060" + token[1:])
        return text

    def render(self, messages: list[dict[str, str]]) -> tuple[str, bool]:
        """The prompt as text, and whether the tokenizer must add its special tokens to it: the chat
        template's rendering (which writes the start tokens itself), or for a model without one (or whose
        template refuses these messages) the messages as plain paragraphs ending with the answer cue."""
        if self.has_chat_template:
            try:
                return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                                          enable_thinking=False), False
            except Exception:     # a template that rejects a system turn, say: plain text still works
                pass
        return "\n\n".join(m["content"] for m in messages) + "\n\n" + PLAIN_ANSWER_CUE, True

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """The prompt's token ids: a template's text as it is, plain text with the tokenizer's special
        tokens (``<bos>``), without which a model never sees its start."""
        text, add_special = self.render(messages)
        ids = list(self.tokenizer(text, add_special_tokens=add_special)["input_ids"])
        if not ids:
            bos = getattr(self.tokenizer, "bos_token_id", None)
            ids = [bos if bos is not None else 0]
        return ids

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def count_tokens(self, messages: list[dict[str, str]]) -> int:
        return len(self.prompt_ids(messages))

    def context_limit(self) -> int | None:
        config = getattr(self.model, "config", None)
        config = getattr(config, "text_config", None) or config
        value = getattr(config, "max_position_embeddings", None)
        return int(value) if isinstance(value, int) and value > 0 else None

    def single_token(self, label: str) -> int | None:
        if label not in self._single_ids:
            ids = self._encode(label)
            self._single_ids[label] = ids[0] if len(ids) == 1 else -1
        value = self._single_ids[label]
        return None if value < 0 else value

    def single_tokens(self, labels: Sequence[str]) -> bool:
        ids = [self.single_token(label) for label in labels]
        return all(i is not None for i in ids) and len(set(ids)) == len(ids)

    # ---- scoring

    def score(self, prompt_ids: list[int], labels: Sequence[str]) -> list[float]:
        """Log-probability of each label after the prompt (comparable within one call)."""
        import torch

        model, device = self.model, self._device
        single = [self.single_token(a) for a in labels]
        with torch.inference_mode():
            if all(s is not None for s in single) and len(set(single)) == len(single):
                input_ids = torch.tensor([prompt_ids], device=device)
                logits = _forward(model, input_ids, None, keep=1)[0, -1].float()
                logprobs = torch.log_softmax(logits, dim=-1)
                # one gather and one copy to the host, not one device sync per label
                return logprobs[single].tolist()
            # one batched pass: prompt + each label, right-padded
            continuations = [self._encode(a) or [0] for a in labels]
            length = len(prompt_ids) + max(len(c) for c in continuations)
            pad = getattr(self.tokenizer, "pad_token_id", None)
            pad = 0 if pad is None else pad
            batch, mask = [], []
            for cont in continuations:
                ids = prompt_ids + cont
                batch.append(ids + [pad] * (length - len(ids)))
                mask.append([1] * len(ids) + [0] * (length - len(ids)))
            input_ids = torch.tensor(batch, device=device)
            attention = torch.tensor(mask, device=device)
            longest = max(len(c) for c in continuations)
            # only the positions that predict label tokens: the last `longest + 1`
            logits = _forward(model, input_ids, attention, keep=longest + 1).float()
            logprobs = torch.log_softmax(logits, dim=-1)
            first = logits.shape[1] - (length - (len(prompt_ids) - 1))   # index of position len(prompt)-1
            scores = []
            for row, cont in enumerate(continuations):
                total = 0.0
                for offset, token_id in enumerate(cont):
                    total += float(logprobs[row, first + offset, token_id])
                scores.append(total)
            return scores

    def choose(self, messages: list[dict[str, str]], labels: Sequence[str]) -> Choice:
        self.load()
        prompt_ids = self.prompt_ids(messages)
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="local-model")
        future = self._executor.submit(self.score, prompt_ids, list(labels))
        try:
            logprobs = future.result(timeout=self.timeout)
        except concurrent.futures.TimeoutError:
            raise ModelCallError(ErrorKind.TIMEOUT, f"scoring took longer than {self.timeout}s") from None
        finite = [lp if math.isfinite(lp) else -1e30 for lp in logprobs]
        top = max(finite)
        weights = [math.exp(lp - top) for lp in finite]
        total = sum(weights) or 1.0
        best = max(range(len(labels)), key=lambda i: finite[i])
        return Choice(labels[best], {label: w / total for label, w in zip(labels, weights)}, None, labels[best])


def _forward(model: Any, input_ids: Any, attention_mask: Any, keep: int) -> Any:
    """Logits of the last `keep` positions (all of them for a model that cannot skip the others)."""
    kwargs = {"input_ids": input_ids}
    if attention_mask is not None:
        kwargs["attention_mask"] = attention_mask
    try:
        logits = model(**kwargs, logits_to_keep=keep).logits
    except TypeError:
        logits = model(**kwargs).logits
    return logits[:, -keep:] if logits.shape[1] > keep else logits
