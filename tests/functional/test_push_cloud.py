"""Push in the cloud's shape, against moto: a page subscribes through app.py's WebSocket handler (the event
API Gateway sends), a change of the stage goes through the `current` table's real stream records to the
fan-out handler, and the messages reach API Gateway's connection-management API (moto's)."""
import json

import pytest
from botocore.config import Config
from moto.apigatewaymanagementapi.models import apigatewaymanagementapi_backends
from moto.core import DEFAULT_ACCOUNT_ID

from chalicelib import aws, tables
from chalicelib.push import lambda_handlers, stream
from chalicelib.stage.models import ReplyRequest, SpeakRequest

API_ID = "abc123defg"
ENDPOINT = f"https://{API_ID}.execute-api.us-east-1.amazonaws.com/api"


@pytest.fixture
def cloud(services, aws_settings, monkeypatch):
    """The `current` table with its stream, and the functions' environment as the template sets it."""
    db = aws.client("dynamodb", aws_settings)
    db.update_table(TableName=aws_settings.table_current,
                    StreamSpecification={"StreamEnabled": True,
                                         "StreamViewType": tables.TABLES["current"]["stream_view"]})
    monkeypatch.setenv("BUTAI_PUSH_ENDPOINT", ENDPOINT)
    monkeypatch.setenv("AWS_DEFAULT_REGION", aws_settings.region)
    monkeypatch.setattr(lambda_handlers, "_service", None)
    calls = []
    service = lambda_handlers.service()
    service.sender._client.meta.events.register(
        "before-parameter-build.apigatewaymanagementapi",
        lambda params, model, **_: calls.append((model.name, params.get("ConnectionId"), params.get("Data"))))
    yield service, calls
    monkeypatch.setattr(lambda_handlers, "_service", None)


def sent(connection_id):
    """Every message posted to a connection, in order (moto keeps their bytes end to end)."""
    backend = apigatewaymanagementapi_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    data = backend.connections[connection_id].data.decode()
    decoder, out, at = json.JSONDecoder(), [], 0
    while at < len(data):
        message, at = decoder.raw_decode(data, at)
        out.append(message)
    return out


def ws_message(connection_id, body):
    """A WebSocket $default route's event, as API Gateway hands it to the message function."""
    from app import push
    event = {"requestContext": {"routeKey": "$default", "eventType": "MESSAGE", "connectionId": connection_id,
                                "domainName": f"{API_ID}.execute-api.us-east-1.amazonaws.com", "stage": "api",
                                "apiId": API_ID, "requestId": "req-" + connection_id},
             "body": body if isinstance(body, str) else json.dumps(body), "isBase64Encoded": False}
    return push(event, None)


def stream_records(settings, after=None):
    # moto answers the streams API on its classic host, not on botocore's account-based one.
    streams = aws.session(settings).client("dynamodbstreams", config=Config(account_id_endpoint_mode="disabled"))
    arn = aws.client("dynamodb", settings).describe_table(TableName=settings.table_current)["Table"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")
    records = streams.get_records(ShardIterator=iterator["ShardIterator"])["Records"]
    if after is not None:
        records = [r for r in records if int(r["dynamodb"]["SequenceNumber"]) > int(after)]
    return records


def subscriptions(settings, stage_id):
    db = aws.client("dynamodb", settings)
    return db.query(TableName=settings.table_log, KeyConditionExpression="stage_id = :s AND begins_with(sk, :p)",
                    ExpressionAttributeValues={":s": {"S": stage_id}, ":p": {"S": tables.LOG_CONNECTION_PREFIX}},
                    ConsistentRead=True)["Items"]


def test_a_subscribed_page_gets_every_change_through_the_stream(services, aws_settings, cloud):
    push, _ = cloud
    created = services.stage.create_stage("cloud")
    assert ws_message("conn-a", {"action": "subscribe", "stage": created.stage_id, "key": created.player_key}) \
        == {"statusCode": 200}
    [subscribed] = sent("conn-a")
    assert subscribed["type"] == "subscribed" and subscribed["stage"] == created.stage_id
    [item] = subscriptions(aws_settings, created.stage_id)
    assert item["key_attr"]["S"] == "player_key_hash" and int(item["expires_at"]["N"]) > 0
    # A keep-alive ping is answered with nothing and writes nothing.
    assert ws_message("conn-a", {"action": "ping"}) == {"statusCode": 200}
    assert len(sent("conn-a")) == 1 and len(subscriptions(aws_settings, created.stage_id)) == 1

    mark = stream_records(aws_settings)[-1]["dynamodb"]["SequenceNumber"]
    line = services.stage.speak(created.stage_id, created.agent_key, SpeakRequest(text="届きましたか？"))
    services.stage.reply(created.stage_id, created.player_key, ReplyRequest(text="届いたよ"))
    records = stream_records(aws_settings, after=mark)
    assert [r["eventName"] for r in records] == ["MODIFY", "MODIFY"]
    assert stream.handle({"Records": records}, push) == {"batchItemFailures": []}

    # One fan-out for the stage's two changes in the batch: the view as it is after both.
    messages = sent("conn-a")[1:]
    assert [m["type"] for m in messages] == ["view"]
    view = messages[0]["view"]
    assert view["current"]["text"] == "届きましたか？" and view["version"] != line.version
    assert [e["text"] for e in view["log"]] == ["届きましたか？", "届いたよ"] and "after" not in messages[0]

    # The next batch carries only what follows the version before it (the player's reply).
    mark = records[-1]["dynamodb"]["SequenceNumber"]
    answers = [services.stage.speak(created.stage_id, created.agent_key, SpeakRequest(text=t)) for t in ("は", "い")]
    assert stream.handle({"Records": stream_records(aws_settings, after=mark)}, push) == {"batchItemFailures": []}
    latest = sent("conn-a")[-1]
    assert latest["after"] == view["log"][-1]["id"]
    assert [e["id"] for e in latest["view"]["log"]] == [a.id for a in answers]


def test_a_change_that_shows_nothing_new_is_not_sent_and_a_rotated_key_closes_the_page(
        services, aws_settings, cloud):
    push, calls = cloud
    created = services.stage.create_stage("rotate")
    ws_message("conn-b", {"action": "subscribe", "stage": created.stage_id, "key": created.player_key})
    ws_message("conn-c", {"action": "subscribe", "stage": created.stage_id, "key": created.agent_key})
    mark = stream_records(aws_settings)[-1]["dynamodb"]["SequenceNumber"]
    services.stage.rotate_keys(created.stage_id, "player")
    records = stream_records(aws_settings, after=mark)
    assert stream.handle({"Records": records}, push) == {"batchItemFailures": []}
    # The player key's page is closed and forgotten; the agent key's stays, and nothing was sent.
    closed = [cid for op, cid, _ in calls if op == "DeleteConnection"]
    assert closed == ["conn-b"]
    assert [i["sk"]["S"] for i in subscriptions(aws_settings, created.stage_id)] == ["c#conn-c"]
    assert [m["type"] for m in sent("conn-c")] == ["subscribed"]


def test_the_key_is_checked_first_and_a_refused_socket_is_closed(services, aws_settings, cloud):
    _, calls = cloud
    created = services.stage.create_stage("refuse")
    ok = {"action": "subscribe", "stage": created.stage_id, "key": created.player_key}
    cases = [
        ("c1", "not json", "invalid_json"),
        ("c2", {"action": "subscribe", "stage": created.stage_id}, "missing_key"),
        ("c3", {**ok, "key": "bkp_wrong"}, "wrong_key"),
        ("c4", {**ok, "key": "bkp_wrong", "extra": 1}, "wrong_key"),      # the key before the body
        ("c5", {**ok, "extra": 1}, "invalid_request"),
        ("c6", {**ok, "stage": "s_0000000000000000"}, "stage_not_found"),
    ]
    for connection_id, body, _ in cases:
        ws_message(connection_id, body)
    errors = {cid: json.loads(data)["error"]["code"] for op, cid, data in calls if op == "PostToConnection"}
    assert errors == {cid: code for cid, _, code in cases}
    assert [cid for op, cid, _ in calls if op == "DeleteConnection"] == [c[0] for c in cases]
    assert subscriptions(aws_settings, created.stage_id) == []
