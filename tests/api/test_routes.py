"""The HTTP routes through chalice's test client, over moto."""
import json

import pytest

from chalicelib import aws, tables
from tests.conftest import auth


def post(client, path, key=None, body=None, raw=None, headers=None):
    hdrs = {"Content-Type": "application/json"}
    if key is not None:
        hdrs["Authorization"] = f"Bearer {key}"
    hdrs.update(headers or {})
    data = raw if raw is not None else (json.dumps(body, ensure_ascii=False) if body is not None else "")
    return client.http.post(path, headers=hdrs, body=data)


def get(client, path, key=None, headers=None):
    hdrs = dict(headers or {})
    if key is not None:
        hdrs["Authorization"] = f"Bearer {key}"
    return client.http.get(path, headers=hdrs)


def snapshot(settings):
    db = aws.client("dynamodb", settings)
    return {t: sorted(json.dumps(i, sort_keys=True) for i in
                      db.scan(TableName=tables.table_name(settings, t))["Items"]) for t in tables.TABLES}


# --- the stage design's verification checklist (§10), API half -------------------------

def test_speak_replaces_current_and_adds_one_log_entry(client, stage):
    r = post(client, f"/stages/{stage.stage_id}/speak", stage.agent_key, {"text": "はじめまして", "expression": "smile"})
    assert r.status_code == 200
    assert r.json_body["expression"] == "smile"
    view = get(client, f"/stages/{stage.stage_id}", stage.player_key).json_body
    assert view["current"]["text"] == "はじめまして"
    assert view["current"]["image_url"] == "/characters/hiyori/smile.svg"
    assert len(view["log"]) == 1 and view["log"][0]["text"] == "はじめまして"
    post(client, f"/stages/{stage.stage_id}/speak", stage.agent_key, {"text": "次", "expression": "embarrassed"})
    view = get(client, f"/stages/{stage.stage_id}", stage.player_key).json_body
    assert view["current"]["text"] == "次" and view["current"]["expression"] == "embarrassed"
    assert len(view["log"]) == 2


def test_fetch_replies_once_then_empty(client, stage):
    r = post(client, f"/stages/{stage.stage_id}/reply", stage.player_key, {"text": "こんにちは"})
    assert r.status_code == 202 and r.json_body["id"]
    first = post(client, f"/stages/{stage.stage_id}/fetch_replies", stage.agent_key)
    assert first.status_code == 200
    assert [x["text"] for x in first.json_body] == ["こんにちは"]
    assert post(client, f"/stages/{stage.stage_id}/fetch_replies", stage.agent_key).json_body == []


def test_line_spoken_while_nobody_watches_is_there_on_open(client, stage):
    post(client, f"/stages/{stage.stage_id}/speak", stage.agent_key, {"text": "留守中の台詞", "expression": "smile"})
    view = get(client, f"/stages/{stage.stage_id}", stage.player_key).json_body
    assert view["current"]["text"] == "留守中の台詞"


def test_etag_and_304(client, stage):
    first = get(client, f"/stages/{stage.stage_id}", stage.player_key)
    tag = first.headers["ETag"]
    assert tag.startswith('"') and first.json_body["version"] in tag
    again = get(client, f"/stages/{stage.stage_id}", stage.player_key, {"If-None-Match": tag})
    assert again.status_code == 304 and again.body in (b"", "")
    post(client, f"/stages/{stage.stage_id}/speak", stage.agent_key, {"text": "更新", "expression": "smile"})
    changed = get(client, f"/stages/{stage.stage_id}", stage.player_key, {"If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["ETag"] != tag


def test_speak_without_expression_gets_a_judged_face_kept_in_the_log(client, stage):
    r = post(client, f"/stages/{stage.stage_id}/speak", stage.agent_key, {"text": "ありがとう、嬉しい！"})
    assert r.status_code == 200, r.body
    said = r.json_body
    assert (said["expression"], said["asked_expression"], said["expression_source"]) == ("smile", "auto", "auto")
    assert said["image_url"].endswith("/characters/hiyori/smile.svg")
    view = get(client, f"/stages/{stage.stage_id}", stage.player_key).json_body
    entry = view["log"][-1]
    assert entry["expression_source"] == "auto" and entry["expression_scores"] == said["expression_scores"]
    assert view["current"]["expression_source"] == "auto"
    assert view["stage"]["voice"]["lang"] == "ja-JP"
    r = post(client, f"/stages/{stage.stage_id}/speak", stage.agent_key,
             {"text": "ありがとう、嬉しい！", "expression": "troubled", "audio": "/audio/x.mp3"})
    assert (r.json_body["expression"], r.json_body["expression_source"], r.json_body["audio"]) == \
        ("troubled", "agent", "/audio/x.mp3")
    assert get(client, f"/stages/{stage.stage_id}", stage.player_key).json_body["current"]["audio"] == "/audio/x.mp3"


def test_unknown_expression_response_says_what_was_shown(client, stage):
    r = post(client, f"/stages/{stage.stage_id}/speak", stage.agent_key, {"text": "x", "expression": "angry"})
    assert (r.json_body["expression"], r.json_body["asked_expression"]) == ("neutral", "angry")


def test_retried_speak_with_request_id(client, stage, aws_settings):
    body = {"text": "一回だけ", "expression": "smile", "request_id": "retry-1"}
    a = post(client, f"/stages/{stage.stage_id}/speak", stage.agent_key, body)
    b = post(client, f"/stages/{stage.stage_id}/speak", stage.agent_key, body)
    assert a.json_body == b.json_body
    assert len(get(client, f"/stages/{stage.stage_id}", stage.agent_key).json_body["log"]) == 1
    c = post(client, f"/stages/{stage.stage_id}/speak", stage.agent_key, {**body, "text": "違う"})
    assert c.status_code == 409 and c.json_body["error"]["field"] == "request_id"


# --- bad input: right status, clear message naming the field, no change -----------------

LONG = "あ" * 2001
BAD = [
    # (route, key kind, body or raw, status, code, field)
    ("speak", "agent", {}, 400, "invalid_request", "text"),
    ("speak", "agent", {"text": ""}, 400, "invalid_request", "text"),
    ("speak", "agent", {"text": "   "}, 400, "invalid_request", "text"),
    ("speak", "agent", {"text": LONG}, 400, "invalid_request", "text"),
    ("speak", "agent", {"text": 12}, 400, "invalid_request", "text"),
    ("speak", "agent", {"text": "x", "expression": 3}, 400, "invalid_request", "expression"),
    ("speak", "agent", {"text": "x", "expresion": "smile"}, 400, "invalid_request", "expresion"),
    ("speak", "agent", {"text": "x", "request_id": "has space"}, 400, "invalid_request", "request_id"),
    ("speak", "agent", {"text": "x", "speaker": ""}, 400, "invalid_request", "speaker"),
    ("speak", "agent", {"text": "x", "audio": ""}, 400, "invalid_request", "audio"),
    ("speak", "agent", {"text": "x", "audio": 5}, 400, "invalid_request", "audio"),
    ("speak", "agent", {"text": "x", "audio": "https://elsewhere.example/a.mp3"}, 400, "invalid_request", "audio"),
    ("speak", "agent", {"text": "x", "audio": "javascript:alert(1)"}, 400, "invalid_request", "audio"),
    ("speak", "agent", "RAW:{not json", 400, "invalid_json", "body"),
    ("speak", "agent", "RAW:[1,2]", 400, "invalid_request", "body"),
    ("speak", "agent", "RAW:", 400, "invalid_request", "body"),
    ("speak", "agent", "RAW:" + json.dumps({"text": "x" * 17000}), 413, "payload_too_large", "body"),
    # a text that renders blank: Hangul fillers, the Braille blank, combining marks with no base
    ("speak", "agent", {"text": "\u3164"}, 400, "invalid_request", "text"),
    ("speak", "agent", {"text": "\u2800\u2800\u2800"}, 400, "invalid_request", "text"),
    ("speak", "agent", {"text": "\u0301\u0308 \u3164"}, 400, "invalid_request", "text"),
    ("reply", "player", {"text": "\uffa0\u115f"}, 400, "invalid_request", "text"),
    ("reply", "player", {"text": "\u3099\u200b"}, 400, "invalid_request", "text"),
    # audio paths match whole: a final line break is not part of an uploaded voice's path
    ("speak", "agent", {"text": "x", "audio": "/audio/0123abcd.mp3\n"}, 400, "invalid_request", "audio"),
    ("reply", "player", {"text": "あ" * 1001}, 400, "invalid_request", "text"),
    ("reply", "player", {"text": None}, 400, "invalid_request", "text"),
    ("reply", "player", {}, 400, "invalid_request", "text"),
    ("speak", None, {"text": "x"}, 401, "missing_key", "Authorization"),
    ("speak", "wrong", {"text": "x"}, 401, "wrong_key", "Authorization"),
    ("speak", "player", {"text": "x"}, 403, "agent_key_required", "Authorization"),
    ("fetch_replies", "player", None, 403, "agent_key_required", "Authorization"),
    ("fetch_replies", None, None, 401, "missing_key", "Authorization"),
    ("reply", "agent", {"text": "x"}, 403, "player_key_required", "Authorization"),
    ("reply", "wrong", {"text": "x"}, 401, "wrong_key", "Authorization"),
    ("speak", "agent", {"text": "x"}, 404, "stage_not_found", "stage_id"),  # unknown stage (see below)
]


@pytest.mark.parametrize("route,who,body,status,code,field", BAD)
def test_bad_input_is_rejected_clearly_and_changes_nothing(client, stage, aws_settings, route, who, body,
                                                           status, code, field):
    post(client, f"/stages/{stage.stage_id}/reply", stage.player_key, {"text": "既存の返事"})
    before = snapshot(aws_settings)
    key = {"agent": stage.agent_key, "player": stage.player_key, "wrong": "bka_not-a-real-key", None: None}[who]
    stage_id = "s_doesnotexist" if code == "stage_not_found" else stage.stage_id
    raw = body[4:] if isinstance(body, str) else None
    r = post(client, f"/stages/{stage_id}/{route}", key, None if raw is not None else body, raw=raw)
    assert r.status_code == status
    assert r.headers["Content-Type"].startswith("application/json")
    err = r.json_body["error"]
    assert err["code"] == code and err["field"] == field and err["message"]
    assert snapshot(aws_settings) == before


def test_get_with_bad_keys(client, stage):
    assert get(client, f"/stages/{stage.stage_id}").status_code == 401
    assert get(client, f"/stages/{stage.stage_id}", "bkp_nope").status_code == 401
    assert get(client, "/stages/s_nope", stage.player_key).status_code == 404
    assert get(client, f"/stages/{stage.stage_id}", stage.agent_key).status_code == 200


def test_non_json_content_type_is_rejected(client, stage):
    r = client.http.post(f"/stages/{stage.stage_id}/speak", body="text=x",
                         headers={**auth(stage.agent_key), "Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415 and r.json_body["error"]["field"] == "Content-Type"


def test_error_message_does_not_echo_the_key(client, stage):
    r = post(client, f"/stages/{stage.stage_id}/speak", stage.player_key, {"text": "x"})
    assert stage.player_key not in r.body.decode() if isinstance(r.body, bytes) else stage.player_key not in r.body


def test_no_cross_origin_access_is_granted(client, stage):
    """The page is served on the API's own origin, so no other origin is let in by CORS."""
    r = client.http.get(f"/stages/{stage.stage_id}",
                        headers={"Authorization": f"Bearer {stage.player_key}", "Origin": "https://elsewhere.example"})
    assert r.status_code == 200
    assert not any(h.lower().startswith("access-control-allow") for h in r.headers)


@pytest.mark.parametrize("spelling", [
    "Bearer {k}\x0b", "Bearer {k}\x0c", "Bearer {k}\x1c", "Bearer {k}\x1f", "Bearer {k}\x85", "Bearer {k}\xa0",
    "Bearer {k}\t", "Bearer\t{k}", "Bearer  {k}", "bearer {k}", "BEARER {k}", " Bearer {k}", "Bearer {k} ",
    "Bearer \x0b{k}"])
def test_a_key_written_any_other_way_than_exactly_bearer_key_is_refused(client, stage, aws_settings, spelling):
    """Strict keys: the same key with a vertical tab, a form feed, U+001C … U+00A0 after it, tabs, two spaces or
    the scheme in another case is no key at all: 401, and nothing changes."""
    before = snapshot(aws_settings)
    headers = {"Authorization": spelling.format(k=stage.agent_key), "Content-Type": "application/json"}
    r = client.http.post(f"/stages/{stage.stage_id}/speak", headers=headers, body='{"text": "別の書き方"}')
    assert r.status_code == 401 and r.json_body["error"]["code"] == "missing_key", spelling
    assert client.http.get(f"/stages/{stage.stage_id}", headers=headers).status_code == 401
    assert snapshot(aws_settings) == before
    exact = {"Authorization": f"Bearer {stage.agent_key}", "Content-Type": "application/json"}
    assert client.http.post(f"/stages/{stage.stage_id}/speak", headers=exact, body='{"text": "正しい書き方"}').status_code == 200


def _proxy_event(method, path, resource, stage_id, headers: list[tuple[str, str]], body: str) -> dict:
    """An API Gateway (REST, Lambda proxy) event as the cloud sends it: `headers` keeps the last copy of each
    header, `multiValueHeaders` every copy."""
    multi: dict[str, list[str]] = {}
    for name, value in headers:
        multi.setdefault(name, []).append(value)
    return {"resource": resource, "path": path, "httpMethod": method,
            "headers": {name: values[-1] for name, values in multi.items()}, "multiValueHeaders": multi,
            "queryStringParameters": None, "multiValueQueryStringParameters": None,
            "pathParameters": {"stage_id": stage_id}, "stageVariables": None,
            "requestContext": {"httpMethod": method, "resourcePath": resource, "path": path, "requestId": "r-1",
                               "identity": {"sourceIp": "203.0.113.1"}},
            "body": body, "isBase64Encoded": False}


@pytest.mark.parametrize("keys", [("agent", "agent"), ("player", "agent"), ("agent", "wrong")])
def test_two_authorization_headers_are_a_400_in_the_cloud(services, stage, aws_settings, keys):
    """API Gateway hands the function the last of two Authorization headers (and every copy in
    multiValueHeaders): the app refuses the request whichever keys they hold, and nothing is written."""
    from app import app
    before = snapshot(aws_settings)
    key = {"agent": stage.agent_key, "player": stage.player_key, "wrong": "bka_not-a-real-key"}
    headers = [("Authorization", f"Bearer {key[k]}") for k in keys] + [("Content-Type", "application/json")]
    path = f"/stages/{stage.stage_id}/speak"
    answer = app(_proxy_event("POST", path, "/stages/{stage_id}/speak", stage.stage_id, headers,
                              '{"text": "二つの鍵"}'), None)
    assert answer["statusCode"] == 400, answer
    error = json.loads(answer["body"])["error"]
    assert (error["code"], error["field"]) == ("invalid_request", "Authorization")
    assert snapshot(aws_settings) == before
    one = app(_proxy_event("POST", path, "/stages/{stage_id}/speak", stage.stage_id, headers[1:],
                           '{"text": "一つの鍵"}'), None)
    assert one["statusCode"] == (200 if keys[1] == "agent" else 401), one
