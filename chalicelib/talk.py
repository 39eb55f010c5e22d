"""Free conversation: a character answers in their own words when no scripted
line does, from their profile and the knowledge the rules hand over.

The model only writes the words of one line; every output is checked, tried
once more when it fails, and replaced by one of the character's fallback
lines (rotating, never the same twice in a row) when it fails again.  Every
fallback carries its reason.  With no generation model configured (the
embedded default) the fallback lines answer.
"""
from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from .llm.chat import Chat
from .llm.choice import PROBE, ChoiceMode
from .llm.errors import ModelCallError
from .llm.transport import OpenAITransport, SageMakerTransport, Transport
from .turn_record import AnswerSource, FreeTalkRecord, TalkAttempt

MAX_CHARS = 120


@lru_cache(maxsize=1)
def _templates():
    # jinja2 is imported on first use: only a configured generation model renders these, and a new
    # process (a cold Lambda instance) should not pay for it otherwise.
    import jinja2
    return jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                              autoescape=False, keep_trailing_newline=False, undefined=jinja2.StrictUndefined)


@lru_cache(maxsize=1)
def _checks() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    # Compiled on the first generated line (only a model's output is checked): not at a cold import.
    japanese = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]")
    letter = re.compile(r"[^\W\d_]", re.UNICODE)
    # 「ママ：」「Assistant:」「葵「…」」: a speaker label or role prefix at the start.
    label = re.compile(r"^\s*(?:[\w\u3040-\u30ff\u3400-\u9fff・]{1,12}\s*[:：]|(?:assistant|user|system|ai|bot)\b|"
                       r"[\w\u3040-\u30ff\u3400-\u9fff・]{1,8}「.*」\s*$)", re.IGNORECASE | re.DOTALL)
    return japanese, letter, label
ECHO_WINDOW = 14


class Generator(Protocol):
    name: str

    def complete(self, messages: list[dict[str, str]], *, max_tokens: int, temperature: float) -> str: ...

    def describe(self) -> str: ...


class ModelGenerator(Chat):
    """Free text from a model through the shared transport layer; `name` is the backend's name."""

    def __init__(self, transport: Transport, *, model: str | None = None, mode: str = PROBE) -> None:
        super().__init__(transport, model=model, mode=mode)
        self.name = transport.name


def OpenAIGenerator(base_url: str, *, model: str | None = None, api_key: str | None = None, timeout: float = 8.0,
                    mode: str = PROBE, retries: int = 0) -> ModelGenerator:
    return ModelGenerator(OpenAITransport(base_url, api_key=api_key, timeout=timeout, retries=retries),
                          model=model, mode=mode)


def SageMakerGenerator(endpoint: str, client: Any = None, *, model: str | None = None, timeout: float = 8.0,
                       mode: str = ChoiceMode.VLLM.value, retries: int = 0) -> ModelGenerator:
    return ModelGenerator(SageMakerTransport(endpoint, client=client, timeout=timeout, retries=retries),
                          model=model, mode=mode)


def build_generator(name: str | None, **options: Any) -> Generator | None:
    """The free-conversation model by name (``openai`` | ``sagemaker``); None: the fallback lines answer."""
    if name == "openai":
        return OpenAIGenerator(options.pop("base_url"), **options)
    if name == "sagemaker":
        return SageMakerGenerator(options.pop("endpoint"), **options)
    if name:
        raise ValueError(f"unknown generator {name!r}; expected openai or sagemaker")
    return None


@dataclass
class TalkRequest:
    character: Any                       # scenario Character model (id, name, profile, fallbacks)
    knowledge: Sequence[Any]             # knowledge entries whose condition holds
    player_text: str
    place: str
    addressee: str | None = None         # display name, when the player addressed someone
    recent: Sequence[tuple[str, str]] = ()   # (speaker name, line), oldest first
    previous_line: str | None = None     # the line shown just before (must not be repeated)
    other_lines: Sequence[str] = ()      # other characters' recent lines (must not be echoed)
    last_fallback: str | None = None     # the character's fallback used last time


@dataclass
class TalkResult:
    text: str
    source: AnswerSource                 # model or fallback here; knowledge or reaction from answers.py
    reason: str | None = None            # why the fallback answered
    fallback_id: str | None = None
    attempts: list[TalkAttempt] = field(default_factory=list)
    ms: float = 0.0
    mode: str | None = None              # "vllm" or "standard": which body the server was sent
    # Set when an authored line answered (knowledge / reaction / fallback, see answers.py).
    speaker: str | None = None
    expression: str | None = None
    act: str | None = None
    ref: str | None = None

    def record(self, speaker: str, intent: str | None) -> FreeTalkRecord:
        """The answer as the turn's record keeps it."""
        authored = self.source != AnswerSource.MODEL
        return FreeTalkRecord(speaker=speaker, intent=intent, text=self.text, source=self.source,
                              reason=self.reason, fallback_id=self.fallback_id, attempts=list(self.attempts),
                              ms=round(self.ms, 3), mode=self.mode,
                              expression=self.expression if authored else None,
                              act=self.act if authored else None, ref=self.ref if authored else None)


def clean(text: str) -> str:
    text = unicodedata.normalize("NFC", text).strip()
    if len(text) >= 2 and text[0] in "「『\"" and text[-1] in "」』\"":
        text = text[1:-1].strip()
    return text


def check(text: str, request: TalkRequest, prompt: str) -> str | None:
    """The reason an output is unusable, or None when it may be shown."""
    if not text:
        return "empty"
    if len(text) > MAX_CHARS:
        return "too_long"
    japanese, letter, label = _checks()
    if label.match(text):
        return "speaker_label"
    letters = letter.findall(text)
    if not japanese.search(text) or (letters and len(japanese.findall(text)) / len(letters) < 0.5):
        return "not_japanese"
    if request.previous_line and text == request.previous_line.strip():
        return "repeat"
    sources = [prompt] + list(request.other_lines)
    if any(_echoes(text, source) for source in sources):
        return "echo"
    return None


def _echoes(text: str, source: str) -> bool:
    if not source:
        return False
    if len(text) < ECHO_WINDOW:
        return text in [line.strip() for line in source.splitlines()] or text == source.strip()
    return any(text[i:i + ECHO_WINDOW] in source for i in range(len(text) - ECHO_WINDOW + 1))


def next_fallback(fallbacks: Sequence[Any], last: str | None) -> tuple[str | None, str]:
    if not fallbacks:
        return None, "……"
    ids = [f.id for f in fallbacks]
    index = (ids.index(last) + 1) % len(ids) if last in ids else 0
    return fallbacks[index].id, fallbacks[index].text


class Talker:
    def __init__(self, generator: Generator | None = None, *, temperature: float = 0.7, max_tokens: int = 160,
                 attempts: int = 2):
        self.generator = generator
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.attempts = attempts

    def messages(self, request: TalkRequest) -> list[dict[str, str]]:
        system = _templates().get_template("talk_system.j2").render(character=request.character,
                                                                  knowledge=request.knowledge)
        user = _templates().get_template("talk_user.j2").render(
            place=request.place, recent=request.recent, addressee=request.addressee,
            player_text=_neutralise(request.player_text), character_name=request.character.name)
        return [{"role": "system", "content": system.strip()}, {"role": "user", "content": user.strip()}]

    def say(self, request: TalkRequest) -> TalkResult:
        start = time.perf_counter()
        attempts: list[TalkAttempt] = []
        reason = "no_model"
        if self.generator is not None:
            messages = self.messages(request)
            prompt = "\n".join(m["content"] for m in messages)
            for _ in range(self.attempts):
                try:
                    text = clean(self.generator.complete(messages, max_tokens=self.max_tokens,
                                                         temperature=self.temperature))
                except ModelCallError as exc:
                    reason = exc.kind
                    attempts.append(TalkAttempt(error=exc.kind, detail=exc.detail[:200]))
                    continue
                except Exception as exc:  # a failing model must never stop the game
                    reason = "internal"
                    attempts.append(TalkAttempt(error="internal", detail=f"{type(exc).__name__}: {exc}"[:200]))
                    continue
                problem = check(text, request, prompt)
                attempts.append(TalkAttempt(text=text[:200], rejected=problem))
                if problem is None:
                    return TalkResult(text, AnswerSource.MODEL, attempts=attempts, ms=(time.perf_counter() - start) * 1000,
                                      mode=getattr(self.generator, "current_mode", None))
                reason = problem
        fallback_id, text = next_fallback(request.character.fallbacks, request.last_fallback)
        return TalkResult(text, AnswerSource.FALLBACK, reason=reason, fallback_id=fallback_id, attempts=attempts,
                          ms=(time.perf_counter() - start) * 1000, mode=getattr(self.generator, "current_mode", None))


def _neutralise(text: str) -> str:
    # The player's words stay one quoted line: no new sections, no closing quote.
    return re.sub(r"\s+", " ", text).replace("「", "『").replace("」", "』").strip()
