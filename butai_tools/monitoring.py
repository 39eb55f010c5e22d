"""A stack's alarms, its CloudWatch dashboard and its optional budget alert (part of infra/resources.json).

Every alarm publishes to the stack's SNS topic (``AlarmTopic``; ``AlarmEmail`` subscribes an address to it),
and says in its description what to look at first.  What is watched, and why:

- the REST API: server errors (5xx) and refusals (429: API Gateway's throttling and the API's web ACL,
  counted from the access log, whose lines carry the stack);
- every Lambda function: errors and throttles (a throttled API function refuses players);
- the two stream functions: how far behind their stream they are (iterator age);
- the webhook dead-letter queue: any delivery that failed every retry;
- the voice function (with ``VoiceImageUri``): its errors, throttles, iterator age and dead letters;
- the classifier endpoint (with ``ClassifierEnabled``): its 5xx, its model latency against the function's
  timeout, and the function side's circuit breaker opening (butai's own ``ModelCircuit`` metric);
- the WebSocket API: integration and execution errors (the pages' push).

butai's own metrics (chalicelib/observability.py) are read with their ``service`` and ``stack`` dimensions,
so two stacks in one account keep apart; so are AWS's, by the API's and the functions' names, which are the
stack's.
"""
from __future__ import annotations

import json
from typing import Any

from butai_tools import infra
from butai_tools.infra import getatt, ref, sub
from chalicelib import observability

ALARM_TOPIC = "AlarmTopic"
ALARM_EMAIL_CONDITION = "AlarmEmailGiven"
BUDGET_CONDITION = "BudgetOn"
DASHBOARD = "Dashboard"
API_429_METRIC = "Api429"
API_429_FILTER = "ApiRefusedFilter"
BUTAI_NAMESPACE = observability.NAMESPACE        # butai's own metrics, and the `service` they carry
SERVICE = observability.SERVICE
PERIOD_S = 300

# The functions of the stack, by logical id: what each serves (the alarm descriptions say it).
FUNCTIONS = {
    infra.FUNCTION: "the API (every route but fetch_replies)",
    infra.LONG_POLL_FUNCTION: "fetch_replies (agents' long-polls)",
    infra.WEBHOOK_FUNCTION: "webhook delivery (pending_replies stream)",
    infra.WEBSOCKET_FUNCTION: "the pages' push subscriptions (WebSocket messages)",
    infra.PUSH_FUNCTION: "the push fan-out (current table stream)",
}
# How far behind its stream a function may fall before the alarm: a pushed view older than a minute is
# worth less than the page's own catch-up; a webhook two minutes late is an agent kept waiting.
ITERATOR_AGE_MS = {infra.PUSH_FUNCTION: 60_000, infra.WEBHOOK_FUNCTION: 120_000}
# The voice function exists only with its image (infra.VOICE_CONDITION): its alarms and dashboard lines too.
VOICE_SERVES = "the stage's own voice (current table stream)"
# A voice a minute late is long after the page read the line itself (12 s): the function is falling behind.
VOICE_ITERATOR_AGE_MS = 60_000
# Per 5 minutes.  A 5xx is a request that failed; a handful in five minutes is a fault, one is noise.
API_5XX = 5
# Refusals: a few clients over their limits is the limits working; this many in five minutes is a crowd
# (or the limits are set too low for the traffic: docs/scaling.md).
API_429 = 50
ENDPOINT_5XX = 5
WEBSOCKET_ERRORS = 5


def conditions() -> dict:
    return {ALARM_EMAIL_CONDITION: {"Fn::Not": [{"Fn::Equals": [ref("AlarmEmail"), ""]}]},
            BUDGET_CONDITION: infra.not_zero("MonthlyBudget")}


def alarm_name(name: str) -> dict:
    return sub(f"${{AWS::StackName}}-{name}")


def metric_alarm(name: str, description: str, namespace: str, metric: str, dimensions: dict[str, Any], stat: str,
                 threshold: Any, *, periods: int = 1, condition: str | None = None) -> dict:
    """An alarm on one metric, over 5-minute periods: at or above `threshold` in `periods` of them."""
    props: dict[str, Any] = {
        "AlarmName": alarm_name(name), "AlarmDescription": description,
        "Namespace": namespace, "MetricName": metric,
        "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
        "Period": PERIOD_S, "EvaluationPeriods": periods, "DatapointsToAlarm": periods,
        "Threshold": threshold, "ComparisonOperator": "GreaterThanOrEqualToThreshold",
        "TreatMissingData": "notBreaching", "AlarmActions": [ref(ALARM_TOPIC)], "OKActions": [ref(ALARM_TOPIC)]}
    if stat.startswith("p"):
        props["ExtendedStatistic"] = stat
    else:
        props["Statistic"] = stat
    resource: dict[str, Any] = {"Type": "AWS::CloudWatch::Alarm", "Properties": props}
    if condition:
        resource["Condition"] = condition
    return resource


def math_alarm(name: str, description: str, expression: str, metrics: dict[str, dict], threshold: Any, *,
               period: int = PERIOD_S, periods: int = 1, datapoints: int = 1, condition: str | None = None) -> dict:
    """An alarm on `expression` over `metrics` (id → {namespace, metric, dimensions, stat})."""
    queries: list[dict[str, Any]] = [{
        "Id": key, "ReturnData": False,
        "MetricStat": {"Metric": {"Namespace": m["namespace"], "MetricName": m["metric"],
                                  "Dimensions": [{"Name": k, "Value": v} for k, v in m["dimensions"].items()]},
                       "Period": period, "Stat": m["stat"]}} for key, m in metrics.items()]
    queries.append({"Id": "value", "Expression": expression, "Label": name, "ReturnData": True})
    resource: dict[str, Any] = {"Type": "AWS::CloudWatch::Alarm", "Properties": {
        "AlarmName": alarm_name(name), "AlarmDescription": description, "Metrics": queries,
        "EvaluationPeriods": periods, "DatapointsToAlarm": datapoints, "Threshold": threshold,
        "ComparisonOperator": "GreaterThanOrEqualToThreshold", "TreatMissingData": "notBreaching",
        "AlarmActions": [ref(ALARM_TOPIC)], "OKActions": [ref(ALARM_TOPIC)]}}
    if condition:
        resource["Condition"] = condition
    return resource


def api_dimensions() -> dict:
    return {"ApiName": ref("AWS::StackName"), "Stage": infra.API_GATEWAY_STAGE}


def endpoint_dimensions() -> dict:
    return {"EndpointName": sub(infra.CLASSIFIER_ENDPOINT_NAME), "VariantName": infra.CLASSIFIER_VARIANT}


def butai_dimensions(**more: str) -> dict:
    return {"service": SERVICE, "stack": ref("AWS::StackName"), **more}


def alarms() -> dict:
    out: dict[str, Any] = {
        "ApiServerErrorsAlarm": metric_alarm(
            "api-5xx", f"The REST API answered {API_5XX} or more 5xx in 5 minutes: see the API function's errors and "
                       "its log group, and the access log (/butai/STACK/api-access).",
            "AWS/ApiGateway", "5XXError", api_dimensions(), "Sum", API_5XX),
        "ApiRefusedAlarm": metric_alarm(
            "api-429", f"{API_429} or more requests refused with 429 in 5 minutes (API Gateway throttling, the API's "
                       "per-key rule): a client over its limits, or limits too low for the traffic "
                       "(ApiThrottleRateLimit, PerKeyRequestsPer5Min; docs/scaling.md).",
            BUTAI_NAMESPACE, API_429_METRIC, {"stack": ref("AWS::StackName")}, "Sum", API_429,
            condition=infra.API_LOGS),
        "WebhookDeadLettersAlarm": metric_alarm(
            "webhook-dead-letters", "A webhook delivery failed every retry and is in the dead-letter queue "
                                    "(WebhookDeadLetterQueueUrl): the agent's receiver is down or refusing.",
            "AWS/SQS", "ApproximateNumberOfMessagesVisible",
            {"QueueName": getatt(infra.WEBHOOK_QUEUE, "QueueName")}, "Maximum", 1),
        "PushSocketErrorsAlarm": math_alarm(
            "push-socket-errors", f"The WebSocket API had {WEBSOCKET_ERRORS} or more integration or execution errors "
                                  "in 5 minutes: see the WebSocket message function's errors and the push access "
                                  "log (/butai/STACK/push-access). Pages fall back to polling meanwhile.",
            "integration + execution",
            {"integration": {"namespace": "AWS/ApiGateway", "metric": "IntegrationError", "stat": "Sum",
                             "dimensions": {"ApiId": ref(infra.WEBSOCKET_API), "Stage": infra.API_GATEWAY_STAGE}},
             "execution": {"namespace": "AWS/ApiGateway", "metric": "ExecutionError", "stat": "Sum",
                           "dimensions": {"ApiId": ref(infra.WEBSOCKET_API), "Stage": infra.API_GATEWAY_STAGE}}},
            WEBSOCKET_ERRORS),
        "ClassifierErrorsAlarm": metric_alarm(
            "classifier-5xx", f"The classifier endpoint answered {ENDPOINT_5XX} or more 5xx in 5 minutes: see its log "
                              "group (/aws/sagemaker/Endpoints/STACK-classifier). Turns keep the lexical reading.",
            "AWS/SageMaker", "Invocation5XXErrors", endpoint_dimensions(), "Sum", ENDPOINT_5XX,
            condition=infra.CLASSIFIER_CONDITION),
        "ClassifierLatencyAlarm": math_alarm(
            "classifier-latency", "The classifier endpoint's p90 model latency reached the function's timeout "
                                  "(ClassifierTimeoutSeconds) in 3 of 5 minutes: turns are falling back to the "
                                  "lexical reading. Too few instances (ClassifierMaxInstances) or a cold one.",
            "latency / 1000000", {"latency": {"namespace": "AWS/SageMaker", "metric": "ModelLatency", "stat": "p90",
                                              "dimensions": endpoint_dimensions()}},
            ref("ClassifierTimeoutSeconds"), period=60, periods=5, datapoints=3, condition=infra.CLASSIFIER_CONDITION),
        "ClassifierCircuitAlarm": metric_alarm(
            "classifier-circuit-open", "A function instance stopped asking the classifier endpoint (its circuit "
                                       "breaker opened after failures in a row): turns read lexically until a "
                                       "probe succeeds. See the endpoint's alarms and logs.",
            BUTAI_NAMESPACE, "ModelCircuit", butai_dimensions(state="open"), "Sum", 1,
            condition=infra.CLASSIFIER_CONDITION),
    }
    voice = {infra.VOICE_FUNCTION: VOICE_SERVES}
    for function, serves in {**FUNCTIONS, **voice}.items():
        name = {"FunctionName": ref(function)}
        condition = infra.VOICE_CONDITION if function in voice else None
        out[f"{function}ErrorsAlarm"] = metric_alarm(
            f"{function}-errors", f"{function} ({serves}) failed an invocation (an unhandled error or a timeout): "
                                  "see its log group.", "AWS/Lambda", "Errors", name, "Sum", 1, condition=condition)
        out[f"{function}ThrottlesAlarm"] = metric_alarm(
            f"{function}-throttles", f"{function} ({serves}) was throttled: the account's Lambda concurrency (or "
                                     "the function's reserved concurrency) is used up; infra/deploy.sh prints the "
                                     "quota, docs/scaling.md what the traffic needs.",
            "AWS/Lambda", "Throttles", name, "Sum", 1, condition=condition)
    for function, age in {**ITERATOR_AGE_MS, infra.VOICE_FUNCTION: VOICE_ITERATOR_AGE_MS}.items():
        serves = voice.get(function) or FUNCTIONS[function]
        out[f"{function}IteratorAgeAlarm"] = metric_alarm(
            f"{function}-iterator-age", f"{function} ({serves}) is {age // 1000} s or more behind its "
                                        "stream: it fails and retries, or is throttled.",
            "AWS/Lambda", "IteratorAge", {"FunctionName": ref(function)}, "Maximum", age,
            condition=infra.VOICE_CONDITION if function in voice else None)
    out["VoiceDeadLettersAlarm"] = metric_alarm(
        "voice-dead-letters", "The voice function gave up on stream records (every retry failed, or they were "
                              f"older than {infra.VOICE_MAX_RECORD_AGE_S} s): their lines stay without audio and "
                              "pages read them with the browser's voice. The queue (VoiceDeadLetterQueueUrl) says "
                              "which shard and records; see the function's log group and iterator age.",
        "AWS/SQS", "ApproximateNumberOfMessagesVisible", {"QueueName": getatt(infra.VOICE_QUEUE, "QueueName")},
        "Maximum", 1, condition=infra.VOICE_CONDITION)
    return out


def refused_filter() -> dict:
    """Counts the access log's 429 lines as butai's Api429 metric, with the line's stack as its dimension."""
    return {API_429_FILTER: {
        "Type": "AWS::Logs::MetricFilter", "Condition": infra.API_LOGS,
        "Properties": {
            "LogGroupName": ref("ApiAccessLogGroup"), "FilterPattern": '{ $.status = "429" }',
            "MetricTransformations": [{"MetricNamespace": BUTAI_NAMESPACE, "MetricName": API_429_METRIC,
                                       "MetricValue": "1", "Unit": "Count",
                                       "Dimensions": [{"Key": "stack", "Value": "$.stack"}]}]}}}


def topic() -> dict:
    return {
        # Not encrypted with a key: CloudWatch alarms and AWS Budgets cannot publish to a topic encrypted with
        # the AWS-managed SNS key, and the messages carry alarm names and figures, no stage data.
        ALARM_TOPIC: {"Type": "AWS::SNS::Topic",
                      "Properties": {"DisplayName": sub("butai ${AWS::StackName} alarms")}},
        "AlarmTopicPolicy": {"Type": "AWS::SNS::TopicPolicy", "Properties": {
            "Topics": [ref(ALARM_TOPIC)],
            "PolicyDocument": {"Version": "2012-10-17", "Statement": [{
                "Sid": "AlarmsAndBudgetsOfThisAccount", "Effect": "Allow",
                "Principal": {"Service": ["cloudwatch.amazonaws.com", "budgets.amazonaws.com"]},
                "Action": "sns:Publish", "Resource": ref(ALARM_TOPIC),
                "Condition": {"StringEquals": {"aws:SourceAccount": ref("AWS::AccountId")}}}]}}},
        "AlarmEmailSubscription": {"Type": "AWS::SNS::Subscription", "Condition": ALARM_EMAIL_CONDITION,
                                   "Properties": {"TopicArn": ref(ALARM_TOPIC), "Protocol": "email",
                                                  "Endpoint": ref("AlarmEmail")}},
    }


def budget() -> dict:
    """An AWS Budgets cost budget (the whole account's cost: a stack's own would need its cost allocation tag
    activated in Billing first), alerting the alarm topic at 80 % spent and at 100 % forecast."""
    def notify(kind: str, percent: int) -> dict:
        return {"Notification": {"NotificationType": kind, "ComparisonOperator": "GREATER_THAN",
                                 "Threshold": percent, "ThresholdType": "PERCENTAGE"},
                "Subscribers": [{"SubscriptionType": "SNS", "Address": ref(ALARM_TOPIC)}]}
    return {"MonthlyBudgetAlert": {
        "Type": "AWS::Budgets::Budget", "Condition": BUDGET_CONDITION, "DependsOn": ["AlarmTopicPolicy"],
        "Properties": {
            "Budget": {"BudgetName": sub("${AWS::StackName}-monthly"), "BudgetType": "COST", "TimeUnit": "MONTHLY",
                       "BudgetLimit": {"Amount": ref("MonthlyBudget"), "Unit": "USD"}},
            "NotificationsWithSubscribers": [notify("ACTUAL", 80), notify("FORECASTED", 100)]}}}


# ---------------------------------------------------------------- the dashboard

def _graph(title: str, metrics: list, *, x: int, y: int, stat: str = "Sum", width: int = 12,
           height: int = 6) -> dict:
    return {"type": "metric", "x": x, "y": y, "width": width, "height": height,
            "properties": {"title": title, "region": "${AWS::Region}", "view": "timeSeries", "stacked": False,
                           "period": PERIOD_S, "stat": stat, "metrics": metrics}}


def _search(metric: str, dimensions: str, stat: str, label: str) -> list:
    """Every series of one of butai's metrics in this stack, whatever its other dimensions' values."""
    query = (f"SEARCH('{{{BUTAI_NAMESPACE},{dimensions}}} MetricName=\"{metric}\" stack=\"${{AWS::StackName}}\"', "
             f"'{stat}', {PERIOD_S})")
    return [[{"expression": query, "label": label, "id": label}]]


def dashboard_body(voice: bool = False) -> dict:
    """The widgets; ${…} are filled in by Fn::Sub (the function names, the queues, the WebSocket API).
    ``voice``: the voice function's lines too (the body used when it exists)."""
    api = ["ApiName", "${AWS::StackName}", "Stage", infra.API_GATEWAY_STAGE]
    socket = ["ApiId", f"${{{infra.WEBSOCKET_API}}}", "Stage", infra.API_GATEWAY_STAGE]
    endpoint = ["EndpointName", infra.CLASSIFIER_ENDPOINT_NAME, "VariantName", infra.CLASSIFIER_VARIANT]

    functions = [*FUNCTIONS, *([infra.VOICE_FUNCTION] if voice else [])]
    streams = [*ITERATOR_AGE_MS, *([infra.VOICE_FUNCTION] if voice else [])]
    dead_letters = [["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", "${DeadLetterQueueName}"]]
    if voice:
        dead_letters.append(["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName",
                             "${VoiceDeadLetterQueueName}"])

    def per_function(metric: str, stat: str | None = None) -> list:
        return [["AWS/Lambda", metric, "FunctionName", f"${{{f}}}", *([{"stat": stat}] if stat else [])]
                for f in functions]

    widgets = [
        _graph("API requests and errors", [["AWS/ApiGateway", "Count", *api], [".", "4XXError", *api],
                                           [".", "5XXError", *api],
                                           [BUTAI_NAMESPACE, API_429_METRIC, "stack", "${AWS::StackName}"]], x=0, y=0),
        _graph("API latency (ms)", [["AWS/ApiGateway", "Latency", *api, {"stat": "p50"}],
                                    ["...", {"stat": "p90"}], ["...", {"stat": "p99"}]], x=12, y=0, stat="p90"),
        _graph("Lambda invocations", per_function("Invocations"), x=0, y=6),
        _graph("Lambda errors", per_function("Errors"), x=12, y=6),
        _graph("Lambda throttles", per_function("Throttles"), x=0, y=12),
        _graph("Lambda concurrent executions", per_function("ConcurrentExecutions", "Maximum"), x=12, y=12,
               stat="Maximum"),
        _graph("Lambda duration p90 (ms)", per_function("Duration", "p90"), x=0, y=18, stat="p90"),
        _graph("Stream iterator age (ms)", [["AWS/Lambda", "IteratorAge", "FunctionName", f"${{{f}}}"]
                                            for f in streams], x=12, y=18, stat="Maximum"),
        _graph("Turns: latency (ms)", [[BUTAI_NAMESPACE, "TurnLatency", "service", SERVICE,
                                        "stack", "${AWS::StackName}", {"stat": "p50"}], ["...", {"stat": "p90"}]],
               x=0, y=24, stat="p90"),
        _graph("Classifier calls by outcome; circuit changes",
               _search("ClassifierCalls", "service,stack,backend,outcome", "Sum", "calls")
               + _search("ModelCircuit", "service,stack,state", "Sum", "circuit"), x=12, y=24),
        _graph("Classifier endpoint", [["AWS/SageMaker", "Invocations", *endpoint],
                                       [".", "Invocation5XXErrors", *endpoint],
                                       [".", "Invocation4XXErrors", *endpoint]], x=0, y=30),
        _graph("Classifier model latency (µs)", [["AWS/SageMaker", "ModelLatency", *endpoint, {"stat": "p50"}],
                                                 ["...", {"stat": "p90"}]], x=12, y=30, stat="p90"),
        _graph("Push sockets", [["AWS/ApiGateway", "ConnectCount", *socket], [".", "MessageCount", *socket],
                                [".", "IntegrationError", *socket], [".", "ExecutionError", *socket],
                                [".", "ClientError", *socket]], x=0, y=36),
        _graph("Webhook and voice dead letters" if voice else "Webhook dead letters", dead_letters, x=12, y=36,
               stat="Maximum"),
    ]
    return {"widgets": widgets}


def dashboard() -> dict:
    """One dashboard; its body names the voice function and queue only where they exist (a Sub may not
    reference a resource its condition left out)."""
    variables: dict[str, Any] = {f: ref(f) for f in FUNCTIONS}
    variables["DeadLetterQueueName"] = getatt(infra.WEBHOOK_QUEUE, "QueueName")
    with_voice = {**variables, infra.VOICE_FUNCTION: ref(infra.VOICE_FUNCTION),
                  "VoiceDeadLetterQueueName": getatt(infra.VOICE_QUEUE, "QueueName")}

    def body(voice: bool, names: dict) -> dict:
        return {"Fn::Sub": [json.dumps(dashboard_body(voice), ensure_ascii=False, separators=(",", ":")), names]}
    return {DASHBOARD: {"Type": "AWS::CloudWatch::Dashboard", "Properties": {
        "DashboardName": ref("AWS::StackName"),
        "DashboardBody": {"Fn::If": [infra.VOICE_CONDITION, body(True, with_voice), body(False, variables)]}}}}


def resources() -> dict:
    return {**topic(), **alarms(), **refused_filter(), **budget(), **dashboard()}


def outputs() -> dict:
    return {"AlarmTopicArn": {"Description": "Every alarm and the budget alert publish here", "Value": ref(ALARM_TOPIC)},
            "DashboardUrl": {"Value": sub("https://${AWS::Region}.console.aws.amazon.com/cloudwatch/home?region="
                                          "${AWS::Region}#dashboards:name=${AWS::StackName}")}}
