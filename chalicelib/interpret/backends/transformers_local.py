"""`transformers`: constrained choice with a local model, in process (CPU or CUDA).

The model never generates free text.  Every allowed answer (the option
labels and ``none``) is scored after the prompt and the best one is taken,
so the result is always a listed option or none, and every option gets a
probability:

- when every answer is a single token of the tokenizer (the label scheme is
  chosen so where it can), one forward pass over the prompt gives the
  next-token distribution, restricted to those tokens and renormalised;
- otherwise each answer is appended to the prompt and all of them go
  through one batched forward pass; an answer's score is the sum of its
  tokens' log-probabilities.

``torch`` and ``transformers`` are imported only when the backend is used.
"""
from __future__ import annotations

import concurrent.futures
import math
import threading
from typing import Any

from ..choices import NONE_ANSWER, BackendError, ErrorKind, InterpretChoices
from ..prompts import PromptFit
from .base import AnswerSheet, ModelBackend


class TransformersBackend(ModelBackend):
    name = "transformers"
    default_labels = "auto"

    def __init__(self, model_path: str, *, device: str = "auto", dtype: str | None = None,
                 model: Any = None, tokenizer: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not model_path and model is None:
            raise ValueError("the transformers backend needs a model directory (BUTAI_TRANSFORMERS_MODEL)")
        self.model_path = model_path
        self.device_setting = device
        self.dtype = dtype
        self._model = model
        self._tokenizer = tokenizer
        self._device: str | None = None
        self._lock = threading.Lock()
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._single_ids: dict[str, int] = {}

    # ---- loading

    def load(self) -> None:
        if self._model is not None and self._tokenizer is not None and self._device is not None:
            return
        with self._lock:
            if self._model is not None and self._tokenizer is not None and self._device is not None:
                return
            try:
                import torch
                import transformers
            except ImportError as exc:
                raise BackendError(ErrorKind.UNAVAILABLE,
                                   f"the transformers backend needs torch and transformers: {exc}") from None
            device = self.device_setting
            if device == "auto":
                device = "cuda" if torch.cuda.is_available() else "cpu"
            try:
                if self._tokenizer is None:
                    self._tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_path,
                                                                                 local_files_only=True)
                if self._model is None:
                    options: dict[str, Any] = {"local_files_only": True}
                    if self.dtype:
                        options["dtype"] = getattr(torch, self.dtype)
                    self._model = transformers.AutoModelForCausalLM.from_pretrained(self.model_path, **options)
                self._model.to(device)
                self._model.eval()
            except Exception as exc:
                raise BackendError(ErrorKind.UNAVAILABLE, f"cannot load {self.model_path}: {exc}") from None
            self._device = device

    @property
    def tokenizer(self) -> Any:
        self.load()
        return self._tokenizer

    @property
    def model(self) -> Any:
        self.load()
        return self._model

    # ---- prompt

    def fit(self, text, choices, context, sheet):
        return super().fit(self.defuse(text), choices, context, sheet)

    def defuse(self, text: str) -> str:
        """The player's text with this tokenizer's special tokens (</s>, <|im_end|>, [INST] …) broken by a
        word joiner, so that typed markers stay text and never become role or end tokens."""
        tokenizer = self.tokenizer
        specials = set(getattr(tokenizer, "all_special_tokens", []) or [])
        specials.update(getattr(tokenizer, "additional_special_tokens", []) or [])
        for token in sorted((t for t in specials if isinstance(t, str) and len(t) > 1), key=len, reverse=True):
            if token in text:
                text = text.replace(token, token[0] + "\u2060" + token[1:])
        return text

    def render(self, system: str, user: str) -> str:
        tokenizer = self.tokenizer
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        if getattr(tokenizer, "chat_template", None):
            try:
                return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                                     enable_thinking=False)
            except Exception:
                pass
        return f"{system}\n\n{user}\n\n答え: "

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _count_tokens(self, system: str, user: str) -> int:
        return len(self._encode(self.render(system, user)))

    def _server_context_limit(self) -> int | None:
        config = getattr(self.model, "config", None)
        value = getattr(config, "max_position_embeddings", None)
        return int(value) if isinstance(value, int) and value > 0 else None

    def _single_token(self, answer: str) -> int | None:
        if answer not in self._single_ids:
            ids = self._encode(answer)
            self._single_ids[answer] = ids[0] if len(ids) == 1 else -1
        value = self._single_ids[answer]
        return None if value < 0 else value

    def _label_scheme(self, choices: InterpretChoices) -> str:
        if self.labels != "auto":
            return self.labels
        for scheme in ("tokens", "letters"):
            sheet = AnswerSheet.make(choices, scheme)
            if sheet.scheme != scheme:
                continue
            ids = [self._single_token(a) for a in sheet.allowed]
            if all(i is not None for i in ids) and len(set(ids)) == len(ids):
                return scheme
        return "letters"

    # ---- scoring

    def score(self, prompt: str, answers: list[str]) -> list[float]:
        """Log-probability of each answer after `prompt` (comparable within one call)."""
        import torch

        model, device = self.model, self._device
        prompt_ids = self._encode(prompt)
        if not prompt_ids:
            bos = getattr(self.tokenizer, "bos_token_id", None)
            prompt_ids = [bos if bos is not None else 0]
        single = [self._single_token(a) for a in answers]
        with torch.inference_mode():
            if all(s is not None for s in single) and len(set(single)) == len(single):
                input_ids = torch.tensor([prompt_ids], device=device)
                logits = _forward(model, input_ids, None, keep=1)[0, -1].float()
                logprobs = torch.log_softmax(logits, dim=-1)
                # one gather and one copy to the host, not one device sync per answer
                return logprobs[single].tolist()
            # one batched pass: prompt + each answer, right-padded
            continuations = [self._encode(a) or [0] for a in answers]
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
            # only the positions that predict answer tokens: the last `longest + 1`
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

    def _complete(self, fit: PromptFit, sheet: AnswerSheet) -> tuple[str, dict[str, float]]:
        self.load()
        prompt = self.render(fit.system, fit.user)
        answers = sheet.allowed
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="interpret")
        future = self._executor.submit(self.score, prompt, answers)
        try:
            logprobs = future.result(timeout=self.timeout)
        except concurrent.futures.TimeoutError:
            raise BackendError(ErrorKind.TIMEOUT, f"scoring took longer than {self.timeout}s") from None
        finite = [lp if math.isfinite(lp) else -1e30 for lp in logprobs]
        top = max(finite)
        weights = [math.exp(lp - top) for lp in finite]
        total = sum(weights) or 1.0
        best = max(range(len(answers)), key=lambda i: finite[i])
        scores: dict[str, float] = {}
        for answer, weight in zip(answers, weights):
            key = NONE_ANSWER if answer == NONE_ANSWER else sheet.token_for(answer)
            if key is not None:
                scores[key] = weight / total
        return answers[best], scores


def _forward(model: Any, input_ids: Any, attention_mask: Any, keep: int) -> Any:
    """Logits of the last `keep` positions (all of them for a model that
    cannot skip the others)."""
    kwargs = {"input_ids": input_ids}
    if attention_mask is not None:
        kwargs["attention_mask"] = attention_mask
    try:
        logits = model(**kwargs, logits_to_keep=keep).logits
    except TypeError:
        logits = model(**kwargs).logits
    return logits[:, -keep:] if logits.shape[1] > keep else logits
