"""Domain errors that the API maps to JSON error responses.

Each carries the HTTP status, a stable machine code, a message for people and,
where one input is to blame, the field that names it.
"""
from __future__ import annotations


class ApiError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str, field: str | None = None, *, code: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.field = field
        if code:
            self.code = code
        self.headers = headers or {}

    def body(self) -> dict:
        err = {"code": self.code, "message": self.message}
        if self.field:
            err["field"] = self.field
        return {"error": err}


class ValidationFailed(ApiError):
    status, code = 400, "invalid_request"


class Unauthorized(ApiError):
    status, code = 401, "unauthorized"


class Forbidden(ApiError):
    status, code = 403, "forbidden"


class NotFound(ApiError):
    status, code = 404, "not_found"


class Conflict(ApiError):
    status, code = 409, "conflict"


class PayloadTooLarge(ApiError):
    status, code = 413, "payload_too_large"


class UnsupportedMediaType(ApiError):
    status, code = 415, "unsupported_media_type"


class Unavailable(ApiError):
    status, code = 503, "unavailable"
