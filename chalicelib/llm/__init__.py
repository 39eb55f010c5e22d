"""The one model-call layer: how butai reaches a language model, for every use.

- `transport`: an OpenAI-compatible HTTP server or a SageMaker endpoint (its client handed in); timeouts
  and retries;
- `errors`: `ModelCallError`, the one error of a model call, and its kinds;
- `breaker`: a circuit breaker per server, so a server that keeps failing is not asked for a while;
- `choice`: constrained choice among labels (the classifier, the expression judge: any "pick one of
  these"), `Chooser` over a transport; `local`: the same in this process (transformers);
- `build`: a constrained-choice model by name from a model use's options;
- `prompt`: what every prompt shares (the player's text neutralised, the context budget);
- `chat`: plain chat (free conversation);
- `settings`: the one switch (``BUTAI_MODEL_URL`` …) that points every use at one server.

The classifier, the expression judge and free conversation differ only in the prompt they build and how
they read the answer; all of them reach a model through here.
"""
from __future__ import annotations

from .chat import Chat, chat_body, chat_text
from .choice import PROBE, Choice, ChoiceMode, ChoiceModel, Chooser, choice_body, label_probabilities, read_choice
from .errors import ErrorKind, ModelCallError
from .settings import ModelSettings, ModelSwitch
from .transport import OpenAITransport, SageMakerTransport, Transport, with_retries

__all__ = ["PROBE", "Chat", "Choice", "ChoiceMode", "ChoiceModel", "Chooser", "ErrorKind", "ModelCallError",
           "ModelSettings", "ModelSwitch", "OpenAITransport", "SageMakerTransport", "Transport", "chat_body",
           "chat_text", "choice_body", "label_probabilities", "read_choice", "with_retries"]
