"""Exceptions raised by the butai client.

An error response from the stage becomes a :class:`StageError` subclass chosen
by its HTTP status, carrying the server's machine ``code``, its ``message`` and,
where one input is to blame, the ``field`` that names it.
"""
from __future__ import annotations


class ButaiError(Exception):
    """Base class of everything the client raises on purpose."""


class ConfigError(ButaiError):
    """The client could not tell which stage to talk to, where, or with which key."""


class ConnectionFailed(ButaiError):
    """The stage could not be reached, even after the retries."""

    def __init__(self, message: str, url: str | None = None):
        super().__init__(message)
        self.message = message
        self.url = url


class StageError(ButaiError):
    """The stage answered with an error (the JSON error shape ``{"error": {code, message, field?}}``)."""

    status: int | None = None

    def __init__(self, status: int, code: str, message: str, field: str | None = None,
                 *, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = f" (field: {self.field})" if self.field else ""
        return f"{self.status} {self.code}: {self.message}{where}"

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
                f"message={self.message!r}, field={self.field!r})")


class InvalidRequest(StageError):
    """400: the request was malformed (see ``field``)."""


class Unauthorized(StageError):
    """401: no key, or the wrong key for this stage."""


class Forbidden(StageError):
    """403: the key belongs to the stage but not to this route (a player key on an agent route)."""


class NotFound(StageError):
    """404: no such stage."""


class Conflict(StageError):
    """409: e.g. a ``request_id`` reused for a different line."""


class PayloadTooLarge(StageError):
    """413: the body is over the size limit."""


class UnsupportedMediaType(StageError):
    """415: the body was not sent as JSON."""


class RateLimited(StageError):
    """429 after the retries ran out."""


class ServerError(StageError):
    """5xx after the retries ran out."""


_BY_STATUS: dict[int, type[StageError]] = {
    400: InvalidRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict,
    413: PayloadTooLarge, 415: UnsupportedMediaType, 429: RateLimited,
}


def error_class(status: int) -> type[StageError]:
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else StageError
