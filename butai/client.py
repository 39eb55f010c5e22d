"""A small Python client for a butai stage (the agent side of the protocol).

    from butai.client import Stage

    with Stage.from_local() as stage:              # the `make run` demo stage
        stage.speak("こんにちは！", expression="smile")
        for reply in stage.wait_for_replies(timeout=120):
            stage.speak(f"「{reply.text}」ですね", expression="surprised")

Replies are handed over under a lease (docs/stage.md): the stage gives them to no one else for 30 s,
and gives them out again if they are not acknowledged by then, so a program that dies holding replies
loses none.  This client acknowledges what it handed over with its next ``fetch_replies`` /
``wait_for_replies`` (in the same request), with :meth:`Stage.ack`, and when the ``with`` block ends
(:meth:`Stage.close`).  ``reply.deliveries`` above 1 marks a reply handed out before.

Only the standard library does the HTTP.  Requests that fail with 429, a 5xx
or a connection error are retried with exponential backoff and jitter,
honouring ``Retry-After``; ``speak`` sends the same ``request_id`` on every
try (one is generated when the caller gives none), so a retried line is never
spoken twice.  Error responses raise :class:`~butai.errors.StageError`
subclasses that carry the server's code, message and field.
"""
from __future__ import annotations

import datetime
import email.utils
import http.client
import json
import random
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

from . import config
from .errors import (
    ButaiError,
    ConfigError,
    Conflict,
    ConnectionFailed,
    Forbidden,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    StageError,
    Unauthorized,
    UnsupportedMediaType,
    error_class,
)
from .protocol import (
    ACK_MAX,
    MAX_WAIT_S,
    AckResult,
    Reply,
    SpeakResult,
    StageView,
    WebhookCreated,
    WebhookTestResult,
    WebhookView,
)
from .signing import SignatureError
from .signing import verify as _verify_signature

__all__ = [
    "Stage", "RetryPolicy", "new_request_id", "verify_webhook", "Reply", "AckResult", "SpeakResult", "StageView",
    "WebhookCreated", "WebhookView", "WebhookTestResult", "WebhookSignatureError",
    "ButaiError", "ConfigError", "ConnectionFailed", "StageError", "InvalidRequest", "Unauthorized", "Forbidden",
    "NotFound", "Conflict", "PayloadTooLarge", "UnsupportedMediaType", "RateLimited", "ServerError",
]

USER_AGENT = "butai-python"


def is_retryable(status: int) -> bool:
    """429 and every 5xx are worth another try; any other error would only repeat."""
    return status == 429 or 500 <= status <= 599


def new_request_id() -> str:
    """An idempotency key in the shape the API accepts (``[A-Za-z0-9._:-]``, at most 128)."""
    return f"py-{uuid.uuid4().hex}"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry 429, 5xx and connection errors.

    The n-th retry waits ``min(max_backoff, backoff * 2**(n-1))``, scaled by a
    random factor in ``[1 - jitter, 1]``; a ``Retry-After`` header, when the
    server sends one, is waited instead (at most ``max_retry_after`` seconds).
    """
    attempts: int = 5
    backoff: float = 0.5
    max_backoff: float = 8.0
    jitter: float = 0.5
    max_retry_after: float = 60.0

    def delay(self, retry: int, retry_after: float | None = None, rng: Callable[[], float] = random.random) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        base = min(self.max_backoff, self.backoff * (2 ** (retry - 1)))
        return base * (1.0 - self.jitter * rng())


class Stage:
    """One stage, seen with its agent key."""

    def __init__(self, api_url: str, stage_id: str, agent_key: str, *, timeout: float = 10.0,
                 retry: RetryPolicy | None = None, sleep: Callable[[float], None] = time.sleep):
        if not api_url or not stage_id or not agent_key:
            raise ValueError("api_url, stage_id and agent_key are all required")
        self.api_url = api_url.rstrip("/")
        self.stage_id = stage_id
        self.agent_key = agent_key
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        # Ids handed over to the caller and not acknowledged yet (sent as `ack` by the next fetch).
        self._handed_over: list[str] = []
        self._acks = threading.Lock()
        # The opener skips proxies: a stage URL on 127.0.0.1 must not go through one.
        self._opener = urllib.request.build_opener() if not _is_loopback(self.api_url) else \
            urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def __repr__(self) -> str:
        return f"Stage(api_url={self.api_url!r}, stage_id={self.stage_id!r})"

    def __enter__(self) -> Stage:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        # Leaving the block by an exception acknowledges nothing: the replies in hand may not have been
        # handled, and their lease brings them back.
        if kind is None:
            self.close()

    def close(self) -> None:
        """Acknowledges every reply handed over and not acknowledged yet (call it when done with them)."""
        if self.handed_over:
            self.ack()

    @property
    def handed_over(self) -> list[str]:
        """Ids of the replies this object handed over and has not acknowledged yet, oldest first."""
        with self._acks:
            return list(self._handed_over)

    # -- construction -------------------------------------------------------------
    @classmethod
    def from_local(cls, name: str = config.DEFAULT_LOCAL_STAGE, path: str | Path | None = None,
                   **kwargs: Any) -> Stage:
        """A stage of the local run (`make run`), by its name in ``.butai/local.json``.

        ``path`` defaults to ``$BUTAI_LOCAL_JSON``, else ``.butai/local.json``.
        """
        path = Path(path) if path is not None else config.local_json_path()
        local = config.read_local(path)
        if local is None:
            raise ConfigError(f"no {path}: start the local stage with `make run`")
        if name not in (local.get("stages") or {}):
            known = ", ".join(sorted(local.get("stages") or {})) or "none"
            raise ConfigError(f"no local stage named {name!r} in {path} (known: {known})")
        target = config.resolve(name, env={}, local_json=path)
        return cls(target.api_url, target.stage_id, target.agent_key, **kwargs)

    @classmethod
    def from_env(cls, stage: str | None = None, *, env: Mapping[str, str] | None = None, **kwargs: Any) -> Stage:
        """A stage named by ``BUTAI_API_URL``/``BUTAI_STAGE_ID``/``BUTAI_AGENT_KEY``, or by
        ``BUTAI_STAGE`` in the local run's ``local.json`` (see :mod:`butai.config`)."""
        target = config.resolve(stage, env=env)
        return cls(target.api_url, target.stage_id, target.agent_key, **kwargs)

    # -- the protocol --------------------------------------------------------------
    def speak(self, text: str, expression: str | None = None, speaker: str | None = None,
              request_id: str | None = None, audio: str | None = None, voice: str | None = None) -> SpeakResult:
        """Shows one line on the stage.

        ``expression`` is a hint: a key the character has is always shown; leave it out (or pass
        ``"auto"``) and the stage judges the face from the line among the character's expressions
        (``result.expression_source`` is then ``"auto"`` and ``result.expression_scores`` holds the
        judge's scores).  Unknown keys are shown as ``neutral``.  ``audio`` is an optional voice
        for the line: a path on the stage's origin (``butai audio upload``) or an https URL on an
        origin the operator listed; without one, a stage that renders voices says the line in the
        character's voice (``voice`` names another: jf_alpha, jf_gongitsune, jf_nezumi, jf_tebukuro, jm_kumo)
        and ``result.audio_status`` is ``"pending"`` until its audio follows on the page."""
        body: dict[str, Any] = {"text": text, "request_id": request_id or new_request_id()}
        if expression is not None:
            body["expression"] = expression
        if speaker is not None:
            body["speaker"] = speaker
        if audio is not None:
            body["audio"] = audio
        if voice is not None:
            body["voice"] = voice
        return SpeakResult.model_validate(self._call("POST", "speak", body))

    def fetch_replies(self, request_id: str | None = None, wait: float | None = None, *,
                      lease: float | None = None, ack: Iterable[str] = ()) -> list[Reply]:
        """The player's new replies, oldest first, each handed to this caller only, under a lease.

        The replies handed over by earlier calls are acknowledged in the same request (calling again
        means they were handled), so none of them comes back.  Replies this call returns are held for
        ``lease`` seconds (the stage's default, 30, when not given): acknowledge them before, by the
        next call or :meth:`ack`, or the stage gives them out again (``reply.deliveries`` then counts).

        Every call carries a request id (made here when not given) that its retries reuse, so a
        reply whose answer was lost on the way comes back on the retry instead of waiting for its
        lease.  ``wait`` (seconds, at most 20) long-polls: an empty answer is held until a reply
        arrives or the wait ends.  ``ack`` names more replies to acknowledge in the same request (ids
        handed over by something else than this object: another process, an earlier run)."""
        body: dict[str, Any] = {"request_id": request_id or new_request_id()}
        if wait:
            body["wait"] = min(float(wait), MAX_WAIT_S)
        if lease is not None:
            body["lease"] = lease
        with self._acks:
            acking = list(dict.fromkeys([*ack, *self._handed_over]))
        if len(acking) > ACK_MAX:
            # More than one request carries: the rest first, on their own.
            self.ack(acking[ACK_MAX:])
            acking = acking[:ACK_MAX]
        if acking:
            body["ack"] = acking
        # The request may take the wait on top of the usual time.
        timeout = self.timeout + (body.get("wait") or 0)
        replies = [Reply.model_validate(r) for r in self._call("POST", "fetch_replies", body, timeout=timeout)]
        with self._acks:
            done = set(acking)
            self._handed_over = [rid for rid in self._handed_over if rid not in done]
            self._handed_over += [r.id for r in replies if r.id not in self._handed_over]
        return replies

    def ack(self, replies: list[Reply] | list[str] | None = None) -> AckResult:
        """Acknowledges replies (or ids) as handled: the stage never gives them out again.  Without an
        argument, every reply handed over and not acknowledged yet."""
        with self._acks:
            wanted = list(self._handed_over) if replies is None else \
                [r if isinstance(r, str) else r.id for r in replies]
        acked: list[str] = []
        unknown: list[str] = []
        for start in range(0, len(wanted), ACK_MAX):
            result = AckResult.model_validate(self._call("POST", "ack_replies",
                                                         {"ids": wanted[start:start + ACK_MAX]}))
            acked += result.acked
            unknown += result.unknown
        with self._acks:
            done = set(wanted)
            self._handed_over = [rid for rid in self._handed_over if rid not in done]
        return AckResult(acked=acked, unknown=unknown)

    def get_stage(self) -> StageView:
        """The current line and the recent log (replies stay unread)."""
        return StageView.model_validate(self._call("GET", None))

    def expressions(self) -> tuple[list[str], str]:
        """The expression keys the stage's character has images for, and the character's name.

        Read from the character's public manifest next to its images (where the page loads them)."""
        view = self.get_stage()
        # Image URLs may be relative to the API's origin (the cloud serves both from one CloudFront origin).
        folder = urljoin(self.api_url + "/", view.current.fallback_image_url).rsplit("/", 1)[0]
        parts = urlsplit(f"{folder}/manifest.json")
        url = urlunsplit(parts._replace(path=quote(parts.path, safe="/%")))
        try:
            with self._opener.open(urllib.request.Request(url, headers={"User-Agent": USER_AGENT}),
                                   timeout=self.timeout) as response:
                manifest = json.loads(response.read())
            keys = list(manifest["expressions"])
        except (OSError, ValueError, KeyError, TypeError, http.client.HTTPException) as err:
            raise ConnectionFailed(f"cannot read the expressions of {view.stage.character!r} ({err})",
                                   folder) from None
        return keys, view.stage.character_name

    def wait_for_replies(self, timeout: float | None = 60.0, interval: float = 2.0,
                         long_poll: bool = True, ack: Iterable[str] = ()) -> list[Reply]:
        """Blocks until there is at least one reply or ``timeout`` seconds have passed (``None``:
        no limit).  Returns the replies, or ``[]`` on timeout.

        By default each call long-polls (``fetch_replies(wait=…)``, up to 20 s at a time), so a reply
        arrives as soon as it is written and an idle wait costs one request per 20 s.  A stage that
        does not know ``wait`` yet is polled every ``interval`` seconds instead, as is every stage with
        ``long_poll=False``.  ``ack``, as for :meth:`fetch_replies`, rides on the first request."""
        ack = list(ack)
        if interval <= 0:
            raise ValueError("interval must be positive")
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            asked, started = 0.0, time.monotonic()
            if long_poll:
                asked = MAX_WAIT_S if left is None else max(0.0, min(MAX_WAIT_S, left))
                try:
                    replies = self.fetch_replies(wait=asked, ack=ack)
                except InvalidRequest as exc:
                    if exc.field != "wait":
                        raise
                    long_poll = False      # an older stage: poll instead
                    continue
            else:
                replies = self.fetch_replies(ack=ack)
            ack = []                       # acknowledged with the first request
            if replies:
                return replies
            # Polling, or a long-poll answered empty long before its wait (something in between does not
            # hold requests): pause, so the loop never spins.
            pause = not long_poll or time.monotonic() - started < asked / 2
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return []
                if pause:
                    self._sleep(min(interval, left))
            elif pause:
                self._sleep(interval)

    # -- webhooks ----------------------------------------------------------------------
    def set_webhook(self, url: str) -> WebhookCreated:
        """Registers (or replaces) the stage's webhook; the answer's ``secret`` is shown only now."""
        return WebhookCreated.model_validate(self._call("PUT", "webhook", {"url": url}))

    def get_webhook(self) -> WebhookView:
        """The webhook's URL and its last deliveries (newest first); the secret is never shown again."""
        return WebhookView.model_validate(self._call("GET", "webhook"))

    def delete_webhook(self) -> bool:
        """Removes the webhook; False when there was none."""
        return bool(self._call("DELETE", "webhook")["deleted"])

    def test_webhook(self) -> WebhookTestResult:
        """Sends one signed ``webhook.test`` event now and says how the receiver answered."""
        return WebhookTestResult.model_validate(self._call("POST", "webhook/test"))

    # -- HTTP ------------------------------------------------------------------------
    def _url(self, action: str | None) -> str:
        url = f"{self.api_url}/stages/{quote(self.stage_id, safe='')}"
        return f"{url}/{action}" if action else url

    def _call(self, method: str, action: str | None, body: dict | None = None,
              timeout: float | None = None) -> Any:
        url = self._url(action)
        data = json.dumps(body, ensure_ascii=False).encode("utf-8") if body is not None else None
        headers = {"Authorization": f"Bearer {self.agent_key}", "Accept": "application/json",
                   "User-Agent": USER_AGENT}
        if method == "POST" or data is not None:
            headers["Content-Type"] = "application/json"
        if data is None and method == "POST":
            data = b""
        attempts = max(1, self.retry.attempts)
        for attempt in range(1, attempts + 1):
            last = attempt == attempts
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                with self._opener.open(request, timeout=timeout or self.timeout) as response:
                    raw = response.read()
            except urllib.error.HTTPError as err:
                error = _stage_error(err.code, _read(err), err.headers)
                if is_retryable(err.code) and not last:
                    self._sleep(self.retry.delay(attempt, error.retry_after))
                    continue
                raise error from None
            except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError) as err:
                if not last:
                    self._sleep(self.retry.delay(attempt))
                    continue
                reason = getattr(err, "reason", None) or err
                raise ConnectionFailed(f"cannot reach {self.api_url} ({reason}) after {attempts} "
                                       f"attempt{'s' if attempts > 1 else ''}", url) from None
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                raise ConnectionFailed(f"{url} answered with something that is not JSON", url) from None
        raise AssertionError("unreachable")


class WebhookSignatureError(ButaiError, SignatureError):
    """A request that is not a genuine, fresh delivery from the stage (``reason``: ``missing_header``,
    ``bad_timestamp``, ``stale_timestamp`` or ``bad_signature``)."""


def verify_webhook(secret: str, headers: Mapping[str, str], body: bytes, *, tolerance: float = 300,
                   now: float | None = None) -> dict:
    """Checks a webhook delivery and returns its JSON payload.

    ``headers`` are the request's headers (any mapping; names are matched without regard to case), ``body``
    the raw bytes received.  Raises :class:`WebhookSignatureError` when the signature does not match the
    body and timestamp, or the timestamp is more than ``tolerance`` seconds from now (a replay).
    The payload's ``reply.id`` (also the ``Butai-Webhook-Id`` header) is the same on every retry.
    """
    try:
        _verify_signature(secret, headers, body, tolerance=tolerance, now=now)
    except SignatureError as exc:
        raise WebhookSignatureError(exc.reason, str(exc)) from None
    return json.loads(body)


def _read(err: urllib.error.HTTPError) -> bytes:
    try:
        return err.read() or b""
    except (OSError, http.client.HTTPException):
        return b""


def _stage_error(status: int, raw: bytes, headers) -> StageError:
    code, message, field = f"http_{status}", "", None
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = None
    detail = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(detail, dict):
        code = str(detail.get("code") or code)
        message = str(detail.get("message") or "")
        field = detail.get("field")
    elif isinstance(payload, dict) and isinstance(payload.get("message"), str):
        message = payload["message"]  # e.g. API Gateway's own errors
    if not message:
        text = raw.decode("utf-8", "replace").strip()
        message = text[:200] if text else http.client.responses.get(status, "error")
    return error_class(status)(status, code, message, field,
                               retry_after=_retry_after(headers.get("Retry-After") if headers else None))


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: either delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, when.timestamp() - time.time())


def _is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")
