"""The one model-call layer: how butai reaches a language model, for every use.

- `transport`: an OpenAI-compatible HTTP server or a SageMaker endpoint; timeouts and retries;
- `errors`: `ModelCallError` and its kinds;
- `choice`: constrained choice among labels (the classifier; any "pick one of these" judgement);
- `chat`: plain chat (free conversation);
- `settings`: the one switch (``BUTAI_MODEL_URL`` …) that points both uses at one server.

The classifier backends and free conversation differ only in the body they build and how they read
the answer; both go through a `Transport` from here.
"""
from __future__ import annotations

from .chat import Chat, chat_body, chat_text
from .choice import PROBE, Choice, ChoiceMode, Chooser, choice_body, label_probabilities, read_choice
from .errors import ErrorKind, ModelCallError
from .settings import ModelSwitch
from .transport import OpenAITransport, SageMakerTransport, Transport, with_retries

__all__ = ["PROBE", "Chat", "Choice", "ChoiceMode", "Chooser", "ErrorKind", "ModelCallError", "ModelSwitch",
           "OpenAITransport", "SageMakerTransport", "Transport", "chat_body", "chat_text", "choice_body",
           "label_probabilities", "read_choice", "with_retries"]
