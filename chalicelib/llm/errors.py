"""The one error type of a model call, and the kinds it comes in.

Every transport and every reader raises `ModelCallError`; callers never see a
urllib, socket or botocore exception.  The kind is what the debug record, the
logs and `butai doctor` show, so it says what went wrong in terms a stage
author can act on.
"""
from __future__ import annotations


class ErrorKind:
    """Why a model call failed (a classifier answers なし, free conversation a fallback line)."""
    TIMEOUT = "timeout"                    # no answer in time
    UNREACHABLE = "unreachable"            # no connection: server not running, wrong host or port, killed
    UNAVAILABLE = "unavailable"            # reached, but not serving: 5xx, 429, endpoint missing, not loaded
    MODEL_MISSING = "model_missing"        # the server does not have the model asked for
    BAD_REQUEST = "bad_request"            # the server rejected the request (4xx)
    CONTEXT_OVERFLOW = "context_overflow"  # the prompt does not fit even without examples
    REFUSED = "refused"                    # the model or its filter declined (content_filter, refusal)
    INVALID_ANSWER = "invalid_answer"      # an answer outside the allowed ones, empty, cut off
    MALFORMED = "malformed_response"       # the response body could not be read (bad JSON, missing fields)
    INTERNAL = "internal"                  # a bug on our side, caught so the game goes on
    CIRCUIT_OPEN = "circuit_open"          # not asked: the server failed repeatedly just before (llm/breaker.py)

    ALL = (TIMEOUT, UNREACHABLE, UNAVAILABLE, MODEL_MISSING, BAD_REQUEST, CONTEXT_OVERFLOW, REFUSED,
           INVALID_ANSWER, MALFORMED, INTERNAL, CIRCUIT_OPEN)
    # Worth another try inside the same call: the server may be back a moment later.  A timeout is not
    # retried (the turn's time is already spent), nor is anything the server will answer the same way again.
    TRANSIENT = (UNREACHABLE, UNAVAILABLE)


class ModelCallError(Exception):
    """A model call that gave no usable answer.  `status` is the HTTP status when there was one."""

    def __init__(self, kind: str, message: str = "", *, status: int | None = None) -> None:
        super().__init__(message or kind)
        self.kind = kind
        self.message = message or kind
        self.status = status

    @property
    def detail(self) -> str:
        return self.message

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}" if self.message != self.kind else self.kind
