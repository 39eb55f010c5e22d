"""`transformers`: constrained choice with a model in this process (`chalicelib.llm.local.LocalModel`).

The model never generates free text: every allowed answer (the option labels and ``none``) is scored
after the prompt, so the result is always a listed option or none, and every option gets a probability.
The label scheme defaults to ``auto``: option tokens when each is one token of this tokenizer, else
letters.  ``model_path`` is a model directory or a ``.gguf`` file.
"""
from __future__ import annotations

from typing import Any

from ...llm.build import build_chooser
from ...llm.local import DEFAULT_TIMEOUT, LocalModel
from .base import ModelBackend


class TransformersBackend(ModelBackend):
    chooser: LocalModel
    default_labels = "auto"

    def __init__(self, model_path: str = "", *, device: str = "auto", dtype: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, model: Any = None, tokenizer: Any = None, **kwargs: Any) -> None:
        super().__init__(build_chooser("transformers", model_path=model_path, device=device, dtype=dtype,
                                       timeout=timeout, model=model, tokenizer=tokenizer), **kwargs)

    @property
    def model_path(self) -> str:
        return self.chooser.model_path

    def load(self) -> None:
        self.chooser.load()
