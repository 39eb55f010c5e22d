"""Request parsing and JSON responses shared by the routes in app.py."""
from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import TypeVar

from chalice import Response
from pydantic import BaseModel, ValidationError

from .errors import ApiError, PayloadTooLarge, Unavailable, UnsupportedMediaType, ValidationFailed
from .stage.models import BODY_MAX_BYTES
from .stage.transient import transient

log = logging.getLogger("butai.http")
M = TypeVar("M", bound=BaseModel)

# Every response says it is JSON and must not be cached by shared caches.
BASE_HEADERS = {"Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store"}


def json_response(status: int, payload, headers: dict[str, str] | None = None) -> Response:
    if isinstance(payload, BaseModel):
        payload = payload.model_dump(mode="json")
    elif isinstance(payload, list):
        payload = [p.model_dump(mode="json") if isinstance(p, BaseModel) else p for p in payload]
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return Response(body=body, status_code=status, headers={**BASE_HEADERS, **(headers or {})})


def error_response(error: ApiError) -> Response:
    return json_response(error.status, error.body(), error.headers)


def header(request, name: str) -> str | None:
    # API Gateway and chalice local differ in header case; chalice's
    # CaseInsensitiveDict covers both.
    value = request.headers.get(name)
    return value if value else None


def header_count(request, name: str) -> int:
    """How many times the request carried header ``name``: API Gateway's ``multiValueHeaders`` keep every
    copy (its ``headers``, and so chalice's, keep only the last one)."""
    multi = (request.to_original_event() or {}).get("multiValueHeaders") or {}
    return sum(len(values or ()) for key, values in multi.items() if key.lower() == name.lower()) or \
        (1 if header(request, name) is not None else 0)


def query_int(request, name: str, default: int) -> int:
    raw = (request.query_params or {}).get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValidationFailed(f"{name} must be a whole number", name) from None


def parse_body(request, model: type[M], optional: bool = False) -> M:
    raw = request.raw_body or b""
    if len(raw) > BODY_MAX_BYTES:
        raise PayloadTooLarge(f"request body is {len(raw)} bytes; the limit is {BODY_MAX_BYTES}", "body")
    if optional and not raw.strip():
        return model()
    content_type = (header(request, "content-type") or "application/json").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise UnsupportedMediaType("send the body as application/json", "Content-Type")
    if not raw.strip():
        raise ValidationFailed("request body is empty; expected a JSON object", "body")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationFailed(f"request body is not valid JSON: {exc}", "body", code="invalid_json") from None
    except RecursionError:
        raise ValidationFailed("request body is nested too deeply", "body", code="invalid_json") from None
    if not isinstance(data, dict):
        raise ValidationFailed("request body must be a JSON object", "body")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "body"
        raise ValidationFailed(_message(dict(first), field), field) from None


def _message(err: dict, field: str) -> str:
    kind = err["type"]
    if kind == "missing":
        return f"{field} is required"
    if kind == "extra_forbidden":
        return f"{field} is not a known field"
    if kind in ("string_too_short",):
        return f"{field} must not be empty" if err["ctx"].get("min_length") == 1 else f"{field}: {err['msg']}"
    if kind == "string_too_long":
        return f"{field} must be at most {err['ctx']['max_length']} characters"
    if kind == "string_type":
        return f"{field} must be a string"
    if kind == "value_error":
        return f"{field} {err['ctx']['error']}"
    return f"{field}: {err['msg']}"


# How soon a client may retry a request refused because storage was busy.
RETRY_AFTER_S = "1"


def handles_errors(view: Callable) -> Callable:
    """Maps domain errors to JSON error responses, storage that stayed busy
    through its retries to a 503, and anything else to a logged 500."""
    @functools.wraps(view)
    def wrapper(*args, **kwargs):
        try:
            return view(*args, **kwargs)
        except ApiError as exc:
            return error_response(exc)
        except Exception as exc:  # noqa: BLE001 - the client gets JSON, the log gets the trace
            if transient(exc):
                log.warning("storage unavailable in %s: %s", view.__name__, type(exc).__name__)
                return error_response(Unavailable("the stage's storage is busy; retry shortly",
                                                  headers={"Retry-After": RETRY_AFTER_S}))
            log.exception("unhandled error in %s", view.__name__)
            return json_response(500, {"error": {"code": "internal", "message": "internal error"}})
    return wrapper
