"""`GET /openapi.json`: a valid OpenAPI 3.1 document covering every route, status and shape."""
import json

import pytest
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate

from app import app
from chalicelib import openapi
from chalicelib.stage.models import BODY_MAX_BYTES, ErrorBody
from tests.conftest import auth


@pytest.fixture
def doc(client):
    response = client.http.get("/openapi.json")  # no key
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    return json.loads(response.body)


def conforms(doc, ref, instance):
    """Validates an instance against a schema of the document (its $refs resolve inside the document)."""
    Draft202012Validator({"$ref": ref, "components": doc["components"]}).validate(instance)


def test_it_is_a_valid_openapi_3_1_document(doc):
    assert doc["openapi"] == "3.1.0"
    validate(doc)


def test_every_route_of_the_app_is_described(doc):
    assert app.routes, "the app has routes"
    for path, methods in app.routes.items():
        assert path in doc["paths"], path
        for method in methods:
            op = doc["paths"][path].get(method.lower())
            assert op is not None, f"{method} {path}"
            assert (method, path) in openapi.OPERATIONS, f"{method} {path} has no description in OPERATIONS"
            for name in methods[method].view_args:
                assert any(p["name"] == name and p["in"] == "path" for p in op["parameters"])
    assert sum(len(m) for m in doc["paths"].values()) == sum(len(m) for m in app.routes.values())
    assert doc["paths"]["/openapi.json"]["get"]["security"] == []


def test_every_error_status_has_the_error_shape(doc):
    statuses = {int(s) for ops in doc["paths"].values() for op in ops.values() for s in op["responses"]}
    assert openapi.error_statuses() <= statuses
    assert {400, 401, 403, 404, 409, 413, 415, 500} <= statuses
    shape = ErrorBody.model_json_schema(ref_template=openapi.REF, mode="serialization")
    nested = shape.pop("$defs")
    assert doc["components"]["schemas"]["ErrorBody"] == shape
    assert doc["components"]["schemas"]["ErrorDetail"] == nested["ErrorDetail"]
    assert doc["components"]["schemas"]["ErrorDetail"]["required"] == ["code", "message"]
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            for status, response in op["responses"].items():
                if int(status) >= 400:
                    assert response["content"]["application/json"]["schema"] == \
                        {"$ref": "#/components/schemas/ErrorBody"}, f"{method} {path} {status}"


def test_schemas_come_from_the_route_models(doc):
    speak = doc["paths"]["/stages/{stage_id}/speak"]["post"]
    body = speak["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/SpeakRequest"}
    request = doc["components"]["schemas"]["SpeakRequest"]
    assert request["required"] == ["text"] and request["additionalProperties"] is False
    assert request["properties"]["text"]["maxLength"] == 2000
    assert "#/components/schemas/" in json.dumps(doc["components"]["schemas"]["StageView"])
    refs = [part.split('"')[0] for part in json.dumps(doc).split('"$ref": "#/components/schemas/')[1:]]
    assert set(refs) <= set(doc["components"]["schemas"])


def post(client, path, key=None, body=None, raw=None, content_type="application/json"):
    headers = {"Content-Type": content_type}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = raw if raw is not None else (json.dumps(body) if body is not None else "")
    return client.http.post(path, headers=headers, body=data)


def test_real_answers_match_the_document(client, stage, doc):
    """Each answer the app gives — success or error — has a documented status and the documented shape."""
    sid = stage.stage_id
    speak, reply, fetch = (f"/stages/{sid}/speak", f"/stages/{sid}/reply", f"/stages/{sid}/fetch_replies")
    answers = [
        ("/stages/{stage_id}/speak", "post", post(client, speak, stage.agent_key, {"text": "hi", "request_id": "a"})),
        ("/stages/{stage_id}/speak", "post", post(client, speak, stage.agent_key, {"text": "ho", "request_id": "a"})),
        ("/stages/{stage_id}/speak", "post", post(client, speak, None, {"text": "hi"})),
        ("/stages/{stage_id}/speak", "post", post(client, speak, stage.player_key, {"text": "hi"})),
        ("/stages/{stage_id}/speak", "post", post(client, "/stages/s_0000000000000000/speak", stage.agent_key,
                                                  {"text": "hi"})),
        ("/stages/{stage_id}/speak", "post", post(client, speak, stage.agent_key, raw="{not json")),
        ("/stages/{stage_id}/speak", "post", post(client, speak, stage.agent_key, raw="text=hi",
                                                  content_type="text/plain")),
        ("/stages/{stage_id}/speak", "post", post(client, speak, stage.agent_key,
                                                  {"text": "x" * (BODY_MAX_BYTES + 1)})),
        ("/stages/{stage_id}/reply", "post", post(client, reply, stage.player_key, {"text": "yo"})),
        ("/stages/{stage_id}/reply", "post", post(client, reply, stage.agent_key, {"text": "yo"})),
        ("/stages/{stage_id}/fetch_replies", "post", post(client, fetch, stage.agent_key)),
        ("/stages/{stage_id}/fetch_replies", "post", post(client, fetch, "bka_wrong")),
        ("/stages/{stage_id}", "get", client.http.get(f"/stages/{sid}", headers=auth(stage.player_key))),
    ]
    seen = set()
    for path, method, response in answers:
        op = doc["paths"][path][method]
        status = str(response.status_code)
        assert status in op["responses"], f"{method} {path} answered {status}, which is not documented"
        schema = op["responses"][status]["content"]["application/json"]["schema"]
        body = json.loads(response.body)
        if "$ref" in schema:
            conforms(doc, schema["$ref"], body)
        else:
            Draft202012Validator({**schema, "components": doc["components"]}).validate(body)
        seen.add(response.status_code)
    assert seen == {200, 202, 400, 401, 403, 404, 409, 413, 415}
    etag = client.http.get(f"/stages/{sid}", headers=auth(stage.player_key)).headers["ETag"]
    not_modified = client.http.get(f"/stages/{sid}", headers={**auth(stage.player_key), "If-None-Match": etag})
    assert str(not_modified.status_code) in doc["paths"]["/stages/{stage_id}"]["get"]["responses"]
