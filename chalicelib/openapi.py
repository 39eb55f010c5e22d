"""The OpenAPI 3.1 document served at ``GET /openapi.json``.

Schemas come from the same pydantic models the routes parse and return
(``chalicelib.stage.models``); paths come from the Chalice app's own route
table, so a route added to app.py shows up here even before it is described
in ``OPERATIONS`` (with only the generic error responses).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from . import errors
from .stage.face_images import BASIC, FALLBACK
from .stage.models import (
    BODY_MAX_BYTES,
    LEASE_DEFAULT_S,
    LOG_LIMIT,
    AckRequest,
    AckResult,
    DebugTurns,
    ErrorBody,
    FetchRequest,
    Reply,
    ReplyAccepted,
    ReplyRequest,
    SpeakRequest,
    SpeakResult,
    StageView,
    id_pattern,
    visible_pattern,
)
from .webhooks import signing, targets
from .webhooks.models import (
    SHOWN_DELIVERIES,
    WebhookCreated,
    WebhookDeleted,
    WebhookRequest,
    WebhookTestResult,
    WebhookView,
)

OPENAPI_VERSION = "3.1.0"
API_VERSION = "1.0"
REF = "#/components/schemas/{model}"

REQUEST_MODELS = (SpeakRequest, ReplyRequest, FetchRequest, AckRequest, WebhookRequest)
RESPONSE_MODELS = (SpeakResult, ReplyAccepted, Reply, AckResult, StageView, DebugTurns, ErrorBody, WebhookCreated,
                   WebhookView, WebhookDeleted, WebhookTestResult)

AGENT, PLAYER, EITHER, NONE = "agent", "player", "either", "none"
SECURITY: dict[str, list[dict[str, list[str]]]] = {AGENT: [{"agentKey": []}], PLAYER: [{"playerKey": []}],
            EITHER: [{"agentKey": []}, {"playerKey": []}], NONE: []}

# What each error status means on this API; the codes are the `error.code` values sent.
ERROR_MEANINGS = {
    400: "The request is invalid (`invalid_request`, `invalid_json`, `webhook_url_refused`); `field` names the "
         "culprit.",
    401: "No key, or not this stage's key (`missing_key`, `wrong_key`).",
    403: "The stage's other key was sent (`agent_key_required`, `player_key_required`).",
    404: "No such stage (`stage_not_found`), no webhook on it (`webhook_not_found`), or no such route "
         "(`not_found`).",
    405: "The path exists but not with this method (`method_not_allowed`); `Allow` lists the methods.",
    409: "The request_id was already used for a different line (`request_id_reused`); a webhook on a scenario "
         "stage (`scenario_stage`).",
    413: f"The body is larger than {BODY_MAX_BYTES} bytes (`payload_too_large`).",
    415: "The body was not sent as application/json (`unsupported_media_type`).",
    429: "Too many requests from this key or address (`rate_limited`); retry after `Retry-After` seconds.",
    500: "An unexpected error (`internal`); safe to retry a speak with the same request_id.",
    503: "Temporarily unavailable (`unavailable`); retry with backoff, honouring Retry-After.",
}
ALWAYS = (500, 503)
# Answered before any route's code runs (the local runtime; API Gateway, CloudFront and WAF in the cloud).
EVERYWHERE = (405, 429)


@dataclass(frozen=True)
class Operation:
    operation_id: str
    summary: str
    description: str
    key: str
    success_status: int
    success_description: str
    success_schema: dict | None
    errors: tuple[int, ...]
    request: type[BaseModel] | None = None
    extra: dict = field(default_factory=dict)
    body_required: bool = True


def _ref(model: type[BaseModel]) -> dict:
    return {"$ref": REF.format(model=model.__name__)}


STAGE_ID = {"name": "stage_id", "in": "path", "required": True, "schema": {"type": "string"},
            "description": "The stage's id (`s_…`)."}

OPERATIONS: dict[tuple[str, str], Operation] = {
    ("POST", "/stages/{stage_id}/speak"): Operation(
        "speak", "Show one line (agent)",
        "Replaces the stage's current line and adds it to the log. `expression` is optional: without it "
        "(or with `auto`) the stage judges the face from the line among the character's own expressions "
        "and answers `expression_source: auto` with the judge's `expression_scores`; a key sent is a hint, "
        f"always obeyed when the character has it (basic set: {', '.join(BASIC)}; a key the character has "
        f"no image for is shown as `{FALLBACK}`). `audio` (optional) is a URL on the stage's own origin or "
        "on an https origin the operator listed; the page plays it once the player turned sound on. Sending "
        "the same `request_id` again returns the first result without a second line (409 if the text "
        "differs).",
        AGENT, 200, "The line is on the stage.", _ref(SpeakResult),
        (400, 401, 403, 404, 409, 413, 415), SpeakRequest),
    ("POST", "/stages/{stage_id}/reply"): Operation(
        "reply", "Answer the character (player)",
        "Stores the player's answer as an unread reply and adds it to the log. The stage page calls this. "
        "On a scenario stage the director answers at once (`to`: the addressed character, `move`: a tapped "
        "destination) and `view` is the stage after the turn.",
        PLAYER, 202, "The reply is stored for the agent.", _ref(ReplyAccepted),
        (400, 401, 403, 404, 413, 415), ReplyRequest),
    ("POST", "/stages/{stage_id}/fetch_replies"): Operation(
        "fetch_replies", "Receive new replies under a lease (agent)",
        "Returns every reply nobody holds, oldest first, each handed to this caller alone for a lease "
        f"(`lease` seconds, default {LEASE_DEFAULT_S}): no other fetch gets it meanwhile. Acknowledge each "
        "reply once handled (`ack` in the next fetch, or `ack_replies`); one whose lease ends "
        "unacknowledged is handed out again with `deliveries` one higher, so a reply whose agent went "
        "away, or whose answer was lost on the way, is not lost. The body is optional; with a `request_id`, "
        "a retry of the same call returns what that call still holds (lease renewed) and claims nothing "
        "new. With `wait` (seconds, at most 20) it long-polls: when nothing is there, the answer is held "
        "until a reply arrives or a lease ends (then returned at once) or the wait ends (`[]`); the key is "
        "checked before any waiting.",
        AGENT, 200, "The replies handed out (possibly none).", {"type": "array", "items": _ref(Reply)},
        (400, 401, 403, 404, 413, 415), FetchRequest, body_required=False),
    ("POST", "/stages/{stage_id}/ack_replies"): Operation(
        "ack_replies", "Acknowledge handled replies (agent)",
        "Marks replies a fetch handed out as handled: they are never handed out again. Acknowledging one "
        "twice is harmless; ids of no reply, or of one no fetch has handed out, come back in `unknown`.",
        AGENT, 200, "What was acknowledged.", _ref(AckResult), (400, 401, 403, 404, 413, 415), AckRequest),
    ("PUT", "/stages/{stage_id}/webhook"): Operation(
        "set_webhook", "Register the stage's webhook (agent)",
        "Every new reply on the stage is then POSTed to `url` as `{\"type\": \"reply.created\", \"stage_id\", "
        "\"reply\": {id, text, created_at}}`, at least once (retried with exponential backoff for a bounded time; "
        f"`{signing.ID_HEADER}` is the reply id on every attempt), signed: `{signing.TIMESTAMP_HEADER}` (unix "
        f"seconds) and `{signing.SIGNATURE_HEADER}: {signing.SCHEME}=<hex HMAC-SHA256(secret, \"<id>.<timestamp>.<raw "
        "body>\")>`. "
        "A delivery wakes the agent; `fetch_replies` still claims each reply once. The URL must be https on a "
        "public address (http://127.0.0.1 in a local run); redirects are not followed. Replaces an earlier "
        "webhook; the new `secret` is shown only in this answer. Scenario stages take no webhook (409).",
        AGENT, 201, "The webhook is registered.", _ref(WebhookCreated), (400, 401, 403, 404, 409, 413, 415),
        WebhookRequest),
    ("GET", "/stages/{stage_id}/webhook"): Operation(
        "show_webhook", "The stage's webhook and its last deliveries (agent)",
        f"The URL (never the secret) and the last {SHOWN_DELIVERIES} deliveries, newest first: `delivered`, "
        "`retrying` or `failed`, with attempts, the receiver's last status and the last error.",
        AGENT, 200, "The webhook.", _ref(WebhookView), (401, 403, 404)),
    ("DELETE", "/stages/{stage_id}/webhook"): Operation(
        "delete_webhook", "Remove the stage's webhook (agent)",
        "No more deliveries; `deleted` is false when there was no webhook.",
        AGENT, 200, "Removed (or there was none).", _ref(WebhookDeleted), (401, 403, 404)),
    ("POST", "/stages/{stage_id}/webhook/test"): Operation(
        "test_webhook", "Send one test delivery now (agent)",
        "POSTs a signed `{\"type\": \"webhook.test\", \"stage_id\", \"reply\": null}` once (no retries) and "
        "says how the receiver answered.",
        AGENT, 200, "How the receiver answered.", _ref(WebhookTestResult), (401, 403, 404)),
    ("GET", "/stages/{stage_id}"): Operation(
        "get_stage", "What the stage shows (agent or player)",
        f"The current line and the last {LOG_LIMIT} log entries, oldest first. Send the ETag back in "
        "If-None-Match to get 304 while nothing changed.",
        EITHER, 200, "The stage.", _ref(StageView), (401, 403, 404),
        extra={
            "parameters": [{"name": "If-None-Match", "in": "header", "required": False,
                            "schema": {"type": "string"}, "description": "An ETag from an earlier answer."}],
            "success_headers": {"ETag": {"schema": {"type": "string"},
                                         "description": "The stage's version, for If-None-Match."}},
            "responses": {"304": {"description": "Not modified since the ETag sent in If-None-Match."}},
        }),
    ("GET", "/stages/{stage_id}/debug"): Operation(
        "debug", "How the last turns were understood (scenario stages)",
        "The development view of a scenario stage: per turn, everything the interpreter and the rules did. "
        "Needs the agent key (the player key too in a local run).",
        AGENT, 200, "The newest turns.", _ref(DebugTurns), (400, 401, 403, 404),
        extra={"parameters": [{"name": "limit", "in": "query", "required": False,
                               "schema": {"type": "integer", "minimum": 1, "maximum": 50, "default": 1}}]}),
    ("GET", "/openapi.json"): Operation(
        "openapi", "This document",
        "The OpenAPI description of this API, generated from the models the routes use. Needs no key.",
        NONE, 200, "An OpenAPI 3.1 document.", {"type": "object"}, ()),
}


def error_statuses() -> set[int]:
    """Every status a domain error can carry, plus the 500 of an unexpected one."""
    found, todo = set(), [errors.ApiError]
    while todo:
        cls = todo.pop()
        found.add(cls.status)
        todo.extend(cls.__subclasses__())
    return found | {500}


def schemas(local_webhooks: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    modes: tuple[tuple[Any, Literal["validation", "serialization"]], ...] = (
        (REQUEST_MODELS, "validation"), (RESPONSE_MODELS, "serialization"))
    for models, mode in modes:
        for model in models:
            schema = model.model_json_schema(ref_template=REF, mode=mode)
            for name, sub in schema.pop("$defs", {}).items():
                out.setdefault(name, sub)
            out[model.__name__] = schema
    _write_text_rules(out)
    # The webhook URL's shape as the API checks it (local runs also take http to loopback).
    out["WebhookRequest"]["properties"]["url"]["pattern"] = targets.url_pattern(local_webhooks)
    return out


def _write_text_rules(out: dict[str, Any]) -> None:
    """The rules the models check in code (not blank; what an id may hold) as JSON Schema patterns, so the
    published contract is the one enforced."""
    for model in ("SpeakRequest", "ReplyRequest"):
        out[model]["properties"]["text"]["pattern"] = visible_pattern()
    for name in ("to", "move"):
        for option in out["ReplyRequest"]["properties"][name]["anyOf"]:
            if option.get("type") == "string":
                option["pattern"] = id_pattern()


def _error_response(status: int) -> dict:
    return {"description": ERROR_MEANINGS.get(status, "An error."),
            "content": {"application/json": {"schema": _ref(ErrorBody)}}}


def _undescribed(view_name: str) -> Operation:
    return Operation(view_name, view_name.replace("_", " "), "", EITHER, 200, "Success.", None,
                     (400, 401, 403, 404))


def _operation(method: str, path: str, entry) -> dict:
    op = OPERATIONS.get((method, path)) or _undescribed(entry.view_name)
    success: dict[str, Any] = {"description": op.success_description}
    if op.success_schema is not None:
        success["content"] = {"application/json": {"schema": op.success_schema}}
    if "success_headers" in op.extra:
        success["headers"] = op.extra["success_headers"]
    responses: dict[str, Any] = {str(op.success_status): success}
    responses.update(op.extra.get("responses", {}))
    statuses = set(op.errors) | set(EVERYWHERE) | (set(ALWAYS) if op.key != NONE else {500})
    for status in sorted(statuses):
        responses[str(status)] = _error_response(status)
    params = [dict(STAGE_ID) if name == "stage_id" else
              {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
              for name in re.findall(r"{([^}]+)}", path)]
    params += op.extra.get("parameters", [])
    out: dict[str, Any] = {"operationId": op.operation_id, "summary": op.summary, "responses": responses,
                           "security": SECURITY[op.key]}
    if op.description:
        out["description"] = op.description
    if params:
        out["parameters"] = params
    if op.request is not None:
        out["requestBody"] = {"required": op.body_required,
                              "content": {"application/json": {"schema": _ref(op.request)}}}
    return out


def build(app, local_webhooks: bool = False) -> dict:
    """The document for a Chalice app: every route in ``app.routes``, every model the routes use
    (``local_webhooks``: as the local runtime serves it, which takes webhooks on loopback)."""
    paths: dict[str, dict] = {}
    for path, methods in sorted(app.routes.items()):
        for method, entry in sorted(methods.items()):
            paths.setdefault(path, {})[method.lower()] = _operation(method, path, entry)
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "butai stage API",
            "version": API_VERSION,
            "description": (
                "The agent protocol of a butai stage. The agent `speak`s lines (with an expression, or "
                "leaving the face to the stage) and "
                "receives the player's replies with `fetch_replies` (each under a lease, acknowledged once "
                "handled); the player's page "
                "calls `reply` and `get_stage`. Every error has the shape `{\"error\": {\"code\", "
                "\"message\", \"field\"?}}`. Keys travel as `Authorization: Bearer <key>`."),
        },
        "paths": paths,
        "components": {
            "schemas": schemas(local_webhooks),
            "securitySchemes": {
                "agentKey": {"type": "http", "scheme": "bearer", "description": "The stage's agent key (`bka_…`)."},
                "playerKey": {"type": "http", "scheme": "bearer",
                              "description": "The stage's player key (`bkp_…`)."},
            },
        },
    }


_cache: dict[tuple[int, bool], dict] = {}


def document(app, local_webhooks: bool = False) -> dict:
    """``build(app)``, made once per app (routes do not change after import)."""
    key = (id(app), local_webhooks)
    if key not in _cache:
        _cache[key] = build(app, local_webhooks)
    return copy.deepcopy(_cache[key])
