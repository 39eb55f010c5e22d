"""butai's HTTP API: routes only.  Each reads the request, calls one service
method and lets ``handles_errors`` turn domain errors into JSON errors."""
from chalicelib import coldstart

coldstart.begin()   # before every other import: a new instance's start-up runs without the cyclic collector

from chalice import Chalice, Response  # noqa: E402

from chalicelib import context, observability, snapstart  # noqa: E402
from chalicelib.errors import ApiError, NotFound, Unauthorized, ValidationFailed  # noqa: E402
from chalicelib.http import handles_errors, header, header_count, json_response, parse_body, query_int  # noqa: E402
from chalicelib.stage.keys import bearer_token  # noqa: E402
from chalicelib.stage.models import AckRequest, FetchRequest, ReplyRequest, SpeakRequest  # noqa: E402
from chalicelib.stage.service import AGENT, PLAYER, NotModified, etag  # noqa: E402

app = Chalice(app_name="butai")
snapstart.install()   # the SnapStart hooks (Lambda's Python runtimes only): chalicelib/snapstart.py
# Pages subscribe to their stage over API Gateway's WebSocket API (chalicelib/push/): chalice's WebSocket
# handlers are behind this flag.
app.experimental_feature_flags.update(["WEBSOCKETS"])
# Chalice would answer other content types with its own error shape; taking
# every type lets parse_body reject them with butai's JSON error.
ANY_BODY = ["*/*"]
# The webhook and OpenAPI modules are imported by their routes: a new Lambda instance whose first
# request is a turn does not pay for them (cold start, docs/performance.md).


@app.middleware("http")
def correlate(event, get_response):
    # Every log line of a request carries its API Gateway request id.
    observability.set_correlation_id((event.context or {}).get("requestId"))
    try:
        return get_response(event)
    finally:
        coldstart.settle()   # after the first request only: see chalicelib/coldstart.py


@app.middleware("websocket")
def settle_after_a_message(event, get_response):
    # The WebSocket message function is a Lambda instance of its own that imports this same app (and so
    # begins with the collector paused): its first message lifts the pause, as the first request does here.
    try:
        return get_response(event)
    finally:
        coldstart.settle()


def _key():
    # Checked before the body is read, so an anonymous caller learns nothing
    # about what a valid request looks like.  Two Authorization headers are no key to choose from.
    if header_count(app.current_request, "authorization") > 1:
        raise ValidationFailed("send one Authorization header, not several", "Authorization")
    key = bearer_token(header(app.current_request, "authorization"))
    if key is None:
        raise Unauthorized("missing key: send `Authorization: Bearer <key>`", "Authorization",
                           code="missing_key")
    return key


def _body(stage_id, key, model, role, optional=False):
    # A write checks the key in its own guarded transaction (one request), so the key is not read
    # first; but a request refused for its body must be refused for a wrong key first: only then is
    # the stage read to tell which.
    try:
        return parse_body(app.current_request, model, optional=optional)
    except ApiError:
        context.get().stage.authenticate(stage_id, key, role)
        raise


@app.route("/stages/{stage_id}/speak", methods=["POST"], content_types=ANY_BODY)
@handles_errors
def speak(stage_id):
    key = _key()
    body = _body(stage_id, key, SpeakRequest, AGENT)
    return json_response(200, context.get().stage.speak(stage_id, key, body))


@app.route("/stages/{stage_id}/reply", methods=["POST"], content_types=ANY_BODY)
@handles_errors
def reply(stage_id):
    key = _key()
    body = _body(stage_id, key, ReplyRequest, PLAYER)
    # On a scenario stage the director answers at once and the answer carries the new view.
    return json_response(202, context.get().director.reply(stage_id, key, body))


@app.route("/stages/{stage_id}/fetch_replies", methods=["POST"], content_types=ANY_BODY)
@handles_errors
def fetch_replies(stage_id):
    key = _key()
    body = _body(stage_id, key, FetchRequest, AGENT, optional=True)
    return json_response(200, context.get().stage.fetch_replies(stage_id, key, body.request_id, body.wait,
                                                                ack=body.ack, lease=body.lease))


@app.route("/stages/{stage_id}/ack_replies", methods=["POST"], content_types=ANY_BODY)
@handles_errors
def ack_replies(stage_id):
    key = _key()
    body = _body(stage_id, key, AckRequest, AGENT)
    return json_response(200, context.get().stage.ack_replies(stage_id, key, body.ids))


def _webhooks():
    """The stage's webhooks (built on first use; a deployment without them has no such routes)."""
    service = context.get().webhooks
    if service is None:
        raise NotFound("webhooks are not enabled on this stage", "stage_id", code="webhooks_disabled")
    return service


@app.route("/stages/{stage_id}/webhook", methods=["PUT"], content_types=ANY_BODY)
@handles_errors
def set_webhook(stage_id):
    from chalicelib.webhooks.models import WebhookRequest
    key = _key()
    body = _body(stage_id, key, WebhookRequest, AGENT)
    return json_response(201, _webhooks().set(stage_id, key, body))


@app.route("/stages/{stage_id}/webhook", methods=["GET"], content_types=ANY_BODY)
@handles_errors
def show_webhook(stage_id):
    return json_response(200, _webhooks().show(stage_id, _key()))


@app.route("/stages/{stage_id}/webhook", methods=["DELETE"], content_types=ANY_BODY)
@handles_errors
def delete_webhook(stage_id):
    return json_response(200, _webhooks().delete(stage_id, _key()))


@app.route("/stages/{stage_id}/webhook/test", methods=["POST"], content_types=ANY_BODY)
@handles_errors
def test_webhook(stage_id):
    return json_response(200, _webhooks().test(stage_id, _key()))


@app.route("/stages/{stage_id}", methods=["GET"], content_types=ANY_BODY)
@handles_errors
def get_stage(stage_id):
    result = context.get().stage.get_stage(stage_id, _key(), header(app.current_request, "if-none-match"))
    if isinstance(result, NotModified):
        return Response(body="", status_code=304, headers={"ETag": etag(result.version),
                                                           "Cache-Control": "no-cache"})
    return json_response(200, result, {"ETag": etag(result.version), "Cache-Control": "no-cache"})


@app.route("/stages/{stage_id}/debug", methods=["GET"], content_types=ANY_BODY)
@handles_errors
def debug(stage_id):
    key = _key()
    services = context.get()
    try:
        limit = query_int(app.current_request, "limit", default=1)
    except ApiError:
        services.stage.check_key(stage_id, key, agent_only=not services.director.players_see_debug)
        raise
    return json_response(200, {"turns": [turn.to_dict() for turn in services.director.debug(stage_id, key, limit)]})


@app.on_ws_message()
def push(event):
    # A page's subscription (`{"action": "subscribe", "stage", "key"}`), answered on its socket. No $connect
    # or $disconnect handler: a socket is worth nothing until it subscribes with a key, and a closed one's
    # subscription goes with the first push that finds it gone, or with its TTL.
    from chalicelib.push.lambda_handlers import on_message
    on_message(event.connection_id, event.body)


@app.route("/openapi.json", methods=["GET"], content_types=ANY_BODY)
@handles_errors
def openapi():
    # Needs no key: it describes the API, not a stage.
    from chalicelib.openapi import document
    return json_response(200, document(app, local_webhooks=context.get().settings.local_webhooks),
                         {"Cache-Control": "public, max-age=300"})
