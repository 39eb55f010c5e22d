"""Push to the page in the merge template: the WebSocket API's message function, the fan-out on the
`current` table's stream, and CloudFront's /push, checked without AWS (what `chalice package` makes of
them is checked in test_package.py)."""
import importlib
import json
from pathlib import Path

import pytest

from butai_tools import infra
from chalicelib import env, tables
from tests.infra.test_template import statements

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def resources():
    return infra.build()["Resources"]


def role_statements(resources, role):
    policies = resources[role]["Properties"]["Policies"]
    assert len(policies) == 1
    return {s["Sid"]: s for s in statements(policies[0]["PolicyDocument"])}


def connections_arn(method):
    return {"Fn::Sub": f"arn:${{AWS::Partition}}:execute-api:${{AWS::Region}}:${{AWS::AccountId}}:"
                       f"${{WebsocketAPI}}/api/{method}/@connections/*"}


def test_the_stage_table_streams_new_and_old_images(resources):
    props = resources["CurrentTable"]["Properties"]
    assert props["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert tables.TABLES["current"]["stream_view"] == "NEW_AND_OLD_IMAGES"


def test_the_app_has_only_a_message_handler():
    from app import app
    assert set(app.websocket_handlers) == {"$default"}
    assert "WEBSOCKETS" in app.experimental_feature_flags


def test_the_subscription_function_may_only_read_the_stage_write_a_subscription_and_answer(resources):
    function = resources[infra.WEBSOCKET_FUNCTION]["Properties"]
    assert function["Role"] == {"Fn::GetAtt": [infra.PUSH_MESSAGE_ROLE, "Arn"]}
    assert function["MemorySize"] == 256
    assert role_statements(resources, infra.PUSH_MESSAGE_ROLE) == {
        "ReadStage": {"Sid": "ReadStage", "Effect": "Allow", "Action": ["dynamodb:GetItem"],
                      "Resource": [{"Fn::GetAtt": ["CurrentTable", "Arn"]}]},
        "Subscribe": {"Sid": "Subscribe", "Effect": "Allow", "Action": ["dynamodb:PutItem"],
                      "Resource": [{"Fn::GetAtt": ["LogTable", "Arn"]}]},
        "PushToPages": {"Sid": "PushToPages", "Effect": "Allow", "Action": ["execute-api:ManageConnections"],
                        "Resource": [connections_arn("POST"), connections_arn("DELETE")]}}
    logs = resources[f"{infra.WEBSOCKET_FUNCTION}LogsPolicy"]["Properties"]
    assert logs["Roles"] == [{"Ref": infra.PUSH_MESSAGE_ROLE}]
    assert resources[f"{infra.WEBSOCKET_FUNCTION}LogGroup"]["Properties"]["LogGroupName"] == {
        "Fn::Sub": "/aws/lambda/${WebsocketMessage}"}


def test_the_fan_out_reads_the_stream_and_may_only_query_delete_read_characters_and_post(resources):
    function = resources[infra.PUSH_FUNCTION]["Properties"]
    module, name = infra.PUSH_HANDLER.rsplit(".", 1)
    assert callable(getattr(importlib.import_module(module), name))
    assert function["Role"] == {"Fn::GetAtt": [infra.PUSH_ROLE, "Arn"]}
    assert function["CodeUri"] == "./deployment.zip" and function["Runtime"] == infra.LAMBDA_RUNTIME
    got = role_statements(resources, infra.PUSH_ROLE)
    assert got["SubscriptionsAndLog"]["Action"] == ["dynamodb:Query", "dynamodb:DeleteItem"]
    assert got["SubscriptionsAndLog"]["Resource"] == [{"Fn::GetAtt": ["LogTable", "Arn"]}]
    assert got["Characters"]["Action"] == ["s3:GetObject"]
    assert got["Characters"]["Resource"] == [{"Fn::Join": ["", [{"Fn::GetAtt": ["AssetsBucket", "Arn"]},
                                                                 "/characters/*"]]}]
    assert got["ReadStageStream"]["Resource"] == [{"Fn::GetAtt": ["CurrentTable", "StreamArn"]}]
    assert got["PushToPages"]["Resource"] == [connections_arn("POST"), connections_arn("DELETE")]
    assert set(got) == {"SubscriptionsAndLog", "Characters", "ReadStageStream", "ListStreams", "PushToPages"}

    mapping = resources["PushFanOutEventSource"]["Properties"]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": ["CurrentTable", "StreamArn"]}
    assert mapping["FunctionName"] == {"Ref": infra.PUSH_FUNCTION}
    assert json.loads(mapping["FilterCriteria"]["Filters"][0]["Pattern"]) == {"eventName": ["MODIFY"]}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["StartingPosition"] == "LATEST"


def test_both_functions_know_the_management_endpoint_and_read_every_variable_set(resources):
    chalice_config = json.loads((ROOT / ".chalice" / "config.json").read_text(encoding="utf-8"))
    stage = chalice_config["stages"]["prod"]["api_gateway_stage"]
    for function in (infra.WEBSOCKET_FUNCTION, infra.PUSH_FUNCTION):
        variables = resources[function]["Properties"]["Environment"]["Variables"]
        assert variables[env.PUSH_ENDPOINT] == {
            "Fn::Sub": f"https://${{WebsocketAPI}}.execute-api.${{AWS::Region}}.${{AWS::URLSuffix}}/{stage}"}
        assert set(variables) <= env.names(), set(variables) - env.names()


def test_cloudfront_sends_push_to_the_websocket_api_on_the_pages_origin(resources):
    config = resources["Distribution"]["Properties"]["DistributionConfig"]
    origin = {o["Id"]: o for o in config["Origins"]}["push"]
    assert origin["DomainName"] == {"Fn::Sub": "${WebsocketAPI}.execute-api.${AWS::Region}.${AWS::URLSuffix}"}
    assert origin["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"
    behaviour = {b["PathPattern"]: b for b in config["CacheBehaviors"]}["/push"]
    assert behaviour["TargetOriginId"] == "push"
    assert behaviour["CachePolicyId"] == infra.CACHING_DISABLED
    # Every viewer header but Host: the upgrade's Sec-WebSocket-Key/Version/Extensions reach API Gateway.
    assert behaviour["OriginRequestPolicyId"] == infra.ALL_VIEWER_EXCEPT_HOST_HEADER
    assert behaviour["ViewerProtocolPolicy"] == "https-only"
    # A WebSocket API takes no path after its stage: the function rewrites /push to the stage.
    [association] = behaviour["FunctionAssociations"]
    assert association["EventType"] == "viewer-request"
    code = resources["PushPathFunction"]["Properties"]["FunctionCode"]
    chalice_config = json.loads((ROOT / ".chalice" / "config.json").read_text(encoding="utf-8"))
    assert f"request.uri = '/{chalice_config['stages']['prod']['api_gateway_stage']}'" in code
    assert resources["PushPathFunction"]["Properties"]["FunctionConfig"]["Runtime"] == "cloudfront-js-2.0"


def test_the_page_policy_lets_the_page_open_its_own_socket():
    from butai_tools.page_policy import content_security_policy
    # 'self' covers ws:/wss: of the page's own host (CSP level 3); nothing else is allowed to connect.
    assert "connect-src 'self';" in content_security_policy()


def test_socket_messages_are_throttled_like_the_api(resources):
    settings = resources[infra.WEBSOCKET_STAGE]["Properties"]["DefaultRouteSettings"]
    assert settings == {"ThrottlingRateLimit": {"Ref": "ApiThrottleRateLimit"},
                        "ThrottlingBurstLimit": {"Ref": "ApiThrottleBurstLimit"}}
