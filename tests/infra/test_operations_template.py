"""What an operator needs from the template on day one (no AWS): a create that no account quota refuses
(no reserved concurrency unless asked), alarms on every part that can fail, a dashboard, an optional
budget, metrics that keep two stacks apart, tables that refuse a delete, API error responses inside the
API's definition, and both APIs' access logs."""
import json
import re

import pytest

from butai_tools import infra, monitoring
from chalicelib import env as names
from chalicelib import observability, tables

FUNCTIONS = [infra.FUNCTION, infra.LONG_POLL_FUNCTION, infra.WEBHOOK_FUNCTION, infra.WEBSOCKET_FUNCTION,
             infra.PUSH_FUNCTION]
RESERVED = {infra.FUNCTION: "FunctionReservedConcurrency", infra.LONG_POLL_FUNCTION: "LongPollReservedConcurrency",
            infra.WEBHOOK_FUNCTION: "WebhookReservedConcurrency",
            infra.WEBSOCKET_FUNCTION: "WebsocketReservedConcurrency",
            infra.PUSH_FUNCTION: "PushFanOutReservedConcurrency",
            infra.VOICE_FUNCTION: "VoiceReservedConcurrency"}
# The voice function and its alarms exist only with VoiceImageUri (test_voice_template.py).
VOICE = infra.VOICE_FUNCTION
VOICE_ALARMS = 4          # errors, throttles, iterator age, dead letters


@pytest.fixture(scope="module")
def template():
    return infra.build()


@pytest.fixture(scope="module")
def resources(template):
    return template["Resources"]


def alarm_on(resources, namespace, metric):
    return {k: r for k, r in resources.items() if r.get("Type") == "AWS::CloudWatch::Alarm"
            and (r["Properties"].get("Namespace"), r["Properties"].get("MetricName")) == (namespace, metric)}


def dimensions(alarm):
    return {d["Name"]: d["Value"] for d in alarm["Properties"]["Dimensions"]}


# ---------------------------------------------------------------- concurrency

def test_no_function_reserves_concurrency_unless_a_parameter_asks(template, resources):
    # AWS keeps 100 of an account's concurrency unreserved: any default reservation would fail the first
    # create on an account whose quota is below 100 plus the sum (new accounts: often 10 to 50).
    assert set(RESERVED.values()) == {p for p in template["Parameters"] if p.endswith("ReservedConcurrency")}
    for function, parameter in RESERVED.items():
        assert template["Parameters"][parameter]["Default"] == 0 and template["Parameters"][parameter]["MinValue"] == 0
        reserved = resources[function]["Properties"]["ReservedConcurrentExecutions"]["Fn::If"]
        assert reserved[1:] == [{"Ref": parameter}, {"Ref": "AWS::NoValue"}]
        assert template["Conditions"][reserved[0]] == infra.not_zero(parameter)


# ---------------------------------------------------------------- metrics of this stack only

def test_every_function_names_its_stack_for_the_metrics_dimension(resources):
    for function in [*FUNCTIONS, VOICE]:
        variables = resources[function]["Properties"]["Environment"]["Variables"]
        assert variables[names.STACK] == {"Ref": "AWS::StackName"}, function
    assert "stack" in observability.default_dimensions()


def test_the_api_is_named_after_the_stack(resources):
    # API Gateway's metrics are dimensioned by the API's name: chalice's is the app's, the same in every stack.
    props = resources[infra.REST_API]["Properties"]
    assert props["Name"] == {"Ref": "AWS::StackName"}
    assert props["DefinitionBody"]["info"]["title"] == {"Ref": "AWS::StackName"}


# ---------------------------------------------------------------- alarms

def test_every_alarm_tells_the_stacks_topic_and_says_what_to_look_at(resources):
    found = {k: r for k, r in resources.items() if r.get("Type") == "AWS::CloudWatch::Alarm"}
    assert len(found) == 7 + 2 * len(FUNCTIONS) + 2 + VOICE_ALARMS
    for logical, alarm in found.items():
        props = alarm["Properties"]
        assert props["AlarmActions"] == [{"Ref": monitoring.ALARM_TOPIC}] == props["OKActions"], logical
        assert props["AlarmName"]["Fn::Sub"].startswith("${AWS::StackName}-"), logical
        assert len(props["AlarmDescription"]) > 40 and props["TreatMissingData"] == "notBreaching"
    topic_policy = resources["AlarmTopicPolicy"]["Properties"]["PolicyDocument"]["Statement"][0]
    assert set(topic_policy["Principal"]["Service"]) == {"cloudwatch.amazonaws.com", "budgets.amazonaws.com"}
    assert topic_policy["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}
    subscription = resources["AlarmEmailSubscription"]
    assert subscription["Condition"] == monitoring.ALARM_EMAIL_CONDITION
    assert subscription["Properties"]["Endpoint"] == {"Ref": "AlarmEmail"}


def test_lambda_errors_and_throttles_of_every_function(resources):
    for metric in ("Errors", "Throttles"):
        alarms = alarm_on(resources, "AWS/Lambda", metric)
        assert sorted(dimensions(a)["FunctionName"]["Ref"] for a in alarms.values()) == sorted([*FUNCTIONS, VOICE]), \
            metric
        assert all(a["Properties"]["Threshold"] == 1 for a in alarms.values())


def test_stream_iterator_age_of_both_stream_functions(resources):
    alarms = alarm_on(resources, "AWS/Lambda", "IteratorAge")
    assert {dimensions(a)["FunctionName"]["Ref"] for a in alarms.values()} == {infra.WEBHOOK_FUNCTION,
                                                                             infra.PUSH_FUNCTION, VOICE}
    for alarm in alarms.values():
        assert alarm["Properties"]["Statistic"] == "Maximum"
        # the fan-out gives a change up after PUSH_MAX_RECORD_AGE_S: the alarm rings well before
        assert alarm["Properties"]["Threshold"] < infra.PUSH_MAX_RECORD_AGE_S * 1000


def test_api_server_errors_and_refusals(template, resources):
    (five,) = alarm_on(resources, "AWS/ApiGateway", "5XXError").values()
    assert dimensions(five) == {"ApiName": {"Ref": "AWS::StackName"}, "Stage": infra.API_GATEWAY_STAGE}
    (refused,) = alarm_on(resources, "butai", monitoring.API_429_METRIC).values()
    assert refused["Condition"] == infra.API_LOGS and dimensions(refused) == {"stack": {"Ref": "AWS::StackName"}}
    # counted from the access log, whose lines name the stack the metric is dimensioned by
    metric_filter = resources[monitoring.API_429_FILTER]
    assert metric_filter["Condition"] == infra.API_LOGS
    props = metric_filter["Properties"]
    assert props["LogGroupName"] == {"Ref": "ApiAccessLogGroup"} and props["FilterPattern"] == '{ $.status = "429" }'
    (transformation,) = props["MetricTransformations"]
    assert transformation["MetricName"] == monitoring.API_429_METRIC
    assert transformation["Dimensions"] == [{"Key": "stack", "Value": "$.stack"}]
    line = json.loads(infra.API_ACCESS_LOG_FORMAT)
    assert line["stack"] == "${AWS::StackName}" and line["status"] == "$context.status"


def test_dead_letters_websocket_errors_and_the_endpoint(template, resources):
    (dead,) = [a for a in alarm_on(resources, "AWS/SQS", "ApproximateNumberOfMessagesVisible").values()
               if "Condition" not in a]         # the voice's own is conditional (test_voice_template.py)
    assert dimensions(dead) == {"QueueName": {"Fn::GetAtt": [infra.WEBHOOK_QUEUE, "QueueName"]}}
    assert dead["Properties"]["Threshold"] == 1
    socket = resources["PushSocketErrorsAlarm"]["Properties"]["Metrics"]
    assert {m["MetricStat"]["Metric"]["MetricName"] for m in socket if "MetricStat" in m} == {"IntegrationError",
                                                                                             "ExecutionError"}
    for query in socket:
        if "MetricStat" in query:
            dims = {d["Name"]: d["Value"] for d in query["MetricStat"]["Metric"]["Dimensions"]}
            assert dims == {"ApiId": {"Ref": infra.WEBSOCKET_API}, "Stage": infra.API_GATEWAY_STAGE}
    (errors,) = alarm_on(resources, "AWS/SageMaker", "Invocation5XXErrors").values()
    endpoint = {"EndpointName": {"Fn::Sub": infra.CLASSIFIER_ENDPOINT_NAME}, "VariantName": infra.CLASSIFIER_VARIANT}
    assert dimensions(errors) == endpoint
    latency = resources["ClassifierLatencyAlarm"]["Properties"]
    # ModelLatency is in microseconds; the alarm compares seconds with the function's own timeout
    assert latency["Threshold"] == {"Ref": "ClassifierTimeoutSeconds"}
    assert [m["Expression"] for m in latency["Metrics"] if "Expression" in m] == ["latency / 1000000"]
    circuit = resources["ClassifierCircuitAlarm"]
    assert dimensions(circuit) == {"service": "butai", "stack": {"Ref": "AWS::StackName"}, "state": "open"}
    assert circuit["Properties"]["MetricName"] == "ModelCircuit"
    for logical in ("ClassifierErrorsAlarm", "ClassifierLatencyAlarm", "ClassifierCircuitAlarm"):
        assert resources[logical]["Condition"] == infra.CLASSIFIER_CONDITION


def test_alarms_on_butais_own_metrics_use_the_dimensions_it_writes(resources):
    written = set(observability.default_dimensions())
    for alarm in alarm_on(resources, "butai", "ModelCircuit").values():
        assert written <= set(dimensions(alarm))
    source = (infra.ROOT / "chalicelib" / "observability.py").read_text(encoding="utf-8")
    assert 'metric("ModelCircuit", state=new)' in source


# ---------------------------------------------------------------- dashboard and budget

def test_the_dashboard_is_valid_json_once_substituted_and_shows_every_part(resources):
    # Without the voice (the default): the body of the Fn::If's second branch.
    condition, _, without_voice = resources[monitoring.DASHBOARD]["Properties"]["DashboardBody"]["Fn::If"]
    assert condition == infra.VOICE_CONDITION
    body, variables = without_voice["Fn::Sub"]
    assert set(variables) == set(FUNCTIONS) | {"DeadLetterQueueName"}
    names_used = set(re.findall(r"\$\{([^}]+)\}", body))
    assert names_used - set(variables) <= {"AWS::StackName", "AWS::Region", infra.WEBSOCKET_API}
    filled = re.sub(r"\$\{([^}]+)\}", lambda m: m.group(1).replace("::", "-"), body)
    widgets = json.loads(filled)["widgets"]
    titles = " | ".join(w["properties"]["title"] for w in widgets)
    for part in ("API", "Lambda errors", "Lambda throttles", "iterator age", "Classifier endpoint", "Push sockets",
                 "dead letters", "Turns"):
        assert part in titles, part
    lambda_lines = [m for w in widgets if w["properties"]["title"] == "Lambda errors" for m in w["properties"]["metrics"]]
    assert sorted(line[3] for line in lambda_lines) == sorted(FUNCTIONS)


def test_the_budget_is_optional_and_alerts_the_topic(template, resources):
    assert template["Parameters"]["MonthlyBudget"]["Default"] == 0
    assert template["Conditions"][monitoring.BUDGET_CONDITION] == infra.not_zero("MonthlyBudget")
    budget = resources["MonthlyBudgetAlert"]
    assert budget["Condition"] == monitoring.BUDGET_CONDITION and budget["DependsOn"] == ["AlarmTopicPolicy"]
    props = budget["Properties"]
    assert props["Budget"]["BudgetLimit"] == {"Amount": {"Ref": "MonthlyBudget"}, "Unit": "USD"}
    kinds = [(n["Notification"]["NotificationType"], n["Notification"]["Threshold"])
             for n in props["NotificationsWithSubscribers"]]
    assert kinds == [("ACTUAL", 80), ("FORECASTED", 100)]
    assert all(n["Subscribers"] == [{"SubscriptionType": "SNS", "Address": {"Ref": monitoring.ALARM_TOPIC}}]
               for n in props["NotificationsWithSubscribers"])


# ---------------------------------------------------------------- data, errors, logs

def test_tables_refuse_a_delete(resources):
    for resource_id, _ in tables.CFN_TABLES.values():
        assert resources[resource_id]["Properties"]["DeletionProtectionEnabled"] is True


def test_gateway_responses_live_in_the_apis_definition(resources):
    assert not [k for k, r in resources.items() if r.get("Type") == "AWS::ApiGateway::GatewayResponse"]
    responses = resources[infra.REST_API]["Properties"]["DefinitionBody"]["x-amazon-apigateway-gateway-responses"]
    assert set(responses) == set(infra.GATEWAY_RESPONSES)


def test_both_apis_write_access_logs_once_the_accounts_logging_role_is_set(resources):
    stage = resources[infra.WEBSOCKET_STAGE]["Properties"]
    condition, settings, _ = stage["AccessLogSettings"]["Fn::If"]
    assert condition == infra.API_LOGS
    assert settings["DestinationArn"] == {"Fn::GetAtt": [infra.PUSH_ACCESS_LOG_GROUP, "Arn"]}
    line = json.loads(settings["Format"]["Fn::Sub"])
    assert line["connectionId"] == "$context.connectionId" and line["eventType"] == "$context.eventType"
    assert not [v for v in line.values() if "body" in v.lower()]           # a subscription carries the stage key
    group = resources[infra.PUSH_ACCESS_LOG_GROUP]
    assert group["Condition"] == infra.API_LOGS and group["DeletionPolicy"] == "Retain"
    # API Gateway refuses a stage with an access log before the account's logging role is set: both stages
    # reference ApiGatewayAccount when logs are on (the REST stage through its API, which SAM makes it after).
    for props in (stage, resources[infra.REST_API]["Properties"]):
        on, off = props["Description"]["Fn::If"][1:]
        assert props["Description"]["Fn::If"][0] == infra.API_LOGS
        assert "${ApiGatewayAccount}" in on["Fn::Sub"] and "${ApiGatewayAccount}" not in off["Fn::Sub"]


def test_outputs_name_the_alarm_topic_and_the_dashboard(template):
    assert template["Outputs"]["AlarmTopicArn"]["Value"] == {"Ref": monitoring.ALARM_TOPIC}
    assert "dashboards:name=${AWS::StackName}" in template["Outputs"]["DashboardUrl"]["Value"]["Fn::Sub"]
