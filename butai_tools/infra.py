"""Builds infra/resources.json, the template merged into `chalice package`.

`chalice package --merge-template infra/resources.json` deep-merges this
template into the SAM template chalice emits: dictionaries merge key by key,
anything else (lists included) from this file replaces chalice's value.  So:

- ``APIHandler.Properties.Environment.Variables`` adds to chalice's variables;
- ``DefaultRole.Properties.Policies`` *replaces* chalice's role policy (chalice
  sets ``Role`` on the function, and SAM ignores a function's ``Policies`` when
  ``Role`` is set, so the permissions must live on the role);
- ``RestAPI.Properties`` gains ``MethodSettings`` (throttling) and a regional
  endpoint (CloudFront sits in front of it);
- ``APIHandler.Properties`` sets the runtime and architecture (lambda_runtime.py:
  chalice would write its own interpreter's version) and SnapStart on versions
  published under an alias (SAM ``AutoPublishAlias``);
- ``Parameters``, ``Conditions``, ``Rules`` and ``Outputs`` merge as sections.

The tables come from chalicelib.tables (the one definition); a test keeps the
checked-in file equal to what this module builds.  ``python -m butai_tools.infra``
writes the file, ``--check`` fails when it is stale.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from butai_tools import lambda_runtime
from butai_tools.page_policy import content_security_policy
from butai_tools.stage import images
from chalicelib import env as names
from chalicelib import tables
from chalicelib.stage.keys import AUTHORIZATION_PATTERN
from chalicelib.stage.voices import SENTENCE_PREFIX

ROOT = Path(__file__).resolve().parent.parent
RESOURCES = ROOT / "infra" / "resources.json"

# Logical ids chalice emits (chalice 1.34, `chalice package`).
FUNCTION = "APIHandler"
FUNCTION_ROLE = "DefaultRole"
REST_API = "RestAPI"
PERMISSION = "APIHandlerInvokePermission"
# API Gateway calls this alias of the API function: SnapStart snapshots published versions only, and SAM
# publishes a version and moves the alias to it on every deploy whose code or settings changed.
API_ALIAS = "live"
API_GATEWAY_STAGE = "api"          # .chalice/config.json api_gateway_stage
# Both functions run on this runtime; the package's wheels and bytecode are built for it.
LAMBDA_RUNTIME = lambda_runtime.RUNTIME
# The WebSocket API for pushes to the page (app.py's `on_ws_message`; chalice names it and its stage so).
WEBSOCKET_API = "WebsocketAPI"
WEBSOCKET_STAGE = "WebsocketAPIStage"
WEBSOCKET_FUNCTION = "WebsocketMessage"

CLASSIFIER_CONDITION = "ClassifierOn"
# The stage's own voice: its function exists only with an image (VoiceImageUri not empty).
VOICE_CONDITION = "VoiceEnabled"
# The endpoint's name is fixed from the stack name so that its log group (and
# the role allowed to write there) are known before the endpoint exists.
CLASSIFIER_ENDPOINT_NAME = "${AWS::StackName}-classifier"
CLASSIFIER_VARIANT = "AllTraffic"
NO_IMAGE = "none"     # ClassifierImageUri before an image is pushed
DEFAULT_MODEL_ID = "Qwen/Qwen3-4B-Instruct-2507"
DEFAULT_INSTANCE_TYPE = "ml.g5.xlarge"
GPU_AMI_VERSIONS = ["al2-ami-sagemaker-inference-gpu-3-1", "al2-ami-sagemaker-inference-gpu-2-1",
                    "al2-ami-sagemaker-inference-gpu-2"]

# CloudFront managed policies (ids are the same in every account).
CACHING_OPTIMIZED = "658327ea-f89d-4fab-a63d-7e88639e58f6"
CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
ALL_VIEWER_EXCEPT_HOST_HEADER = "b689b0a8-53d0-40ab-baf2-68738e2966ac"
# Paths CloudFront sends to API Gateway; everything else is the page and images in S3.
API_PATHS = ["/stages/*", "/openapi.json"]
# The page's push socket, on its own origin; CloudFront sends it to the WebSocket API's stage (which
# takes no path of its own after the stage: a CloudFront function rewrites it).
PUSH_PATH = "/push"
PUSH_ENDPOINT = f"https://${{{WEBSOCKET_API}}}.execute-api.${{AWS::Region}}.${{AWS::URLSuffix}}/{API_GATEWAY_STAGE}"
# The page's policy; media-src adds the audio origins the operator lists (AudioOrigins).
CONTENT_SECURITY_POLICY = content_security_policy(["${AudioOrigins}"])

# What the Lambda store calls.  TransactWriteItems is authorised per action
# (Put → PutItem, Update → UpdateItem, ConditionCheck → ConditionCheckItem);
# Scan is the operator CLI's (`butai stage list`), never the function's.
DYNAMODB_ACTIONS = ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
                    "dynamodb:ConditionCheckItem"]
# Bucket prefixes the function reads: character manifests (stage/catalog.py)
# and scenarios (director.py, content-addressed keys written by the CLI).
CHARACTER_PREFIX = "characters/"
SCENARIO_PREFIX = "scenarios/"
KEPT_PREFIX = "kept/"
# What CloudFront may read from the bucket: the page and the images, nothing
# else (scenarios stay private: they are the story).
PAGE_FILES = list(images.PAGE_FILES)
# Voices uploaded with `butai audio upload` (chalicelib/stage/audio.py), played by the page.
AUDIO_PREFIX = "audio/"
# Days an overwritten or deleted object of the assets bucket can still be restored.
NONCURRENT_DAYS = 90


def ref(name: str) -> dict:
    return {"Ref": name}


def getatt(resource: str, attribute: str) -> dict:
    return {"Fn::GetAtt": [resource, attribute]}


def sub(text: str) -> dict:
    return {"Fn::Sub": text}


def if_classifier(then: Any, otherwise: Any = None) -> dict:
    return {"Fn::If": [CLASSIFIER_CONDITION, then, ref("AWS::NoValue") if otherwise is None else otherwise]}


def account_unique_name(suffix: str) -> dict:
    """A name unique per account across regions and stacks (CloudFront names are
    global): butai-<first block of the stack id's GUID>-suffix, short enough for
    the 64-character limits whatever the stack name."""
    guid = {"Fn::Select": [2, {"Fn::Split": ["/", ref("AWS::StackId")]}]}
    return {"Fn::Join": ["-", ["butai", {"Fn::Select": [0, {"Fn::Split": ["-", guid]}]}, suffix]]}


def arn(service: str, resource: str, region: bool = True, account: bool = True) -> dict:
    region_part = "${AWS::Region}" if region else ""
    account_part = "${AWS::AccountId}" if account else ""
    return sub(f"arn:${{AWS::Partition}}:{service}:{region_part}:{account_part}:{resource}")


# ---------------------------------------------------------------- parameters

def parameters() -> dict:
    return {
        "StageName": {
            "Type": "String", "Default": "prod", "AllowedPattern": "^[a-z][a-z0-9-]{0,19}$",
            "Description": "Deployment stage (dev, prod, …): BUTAI_DEPLOYMENT_STAGE of the function"},
        "RetentionDays": {
            "Type": "Number", "Default": 30, "MinValue": 0, "MaxValue": 3650,
            "Description": "Days log entries and replies are kept (DynamoDB TTL on expires_at); 0 keeps them"},
        "LogRetentionDays": {
            "Type": "Number", "Default": 30, "AllowedValues": [1, 3, 5, 7, 14, 30, 60, 90, 180, 365],
            "Description": "Days CloudWatch keeps the function's and the endpoint's logs"},
        "AudioOrigins": {
            "Type": "String", "Default": "",
            "AllowedPattern": r"^(https://[A-Za-z0-9.-]+(:[0-9]{1,5})?( https://[A-Za-z0-9.-]+(:[0-9]{1,5})?)*)?$",
            "Description": "https origins (space-separated) a line's audio may come from besides the stage's own "
                           "(BUTAI_AUDIO_ORIGINS; the page's media-src); empty: own origin only"},
        "ApiThrottleRateLimit": {
            "Type": "Number", "Default": 100, "MinValue": 1,
            "Description": "API Gateway steady-state requests per second, per method"},
        "PerKeyRequestsPer5Min": {
            "Type": "Number", "Default": 3000, "MinValue": 0,
            "Description": "Requests one key may make in 5 minutes (WAF rate-based rule on the Authorization "
                           "header, us-east-1 stacks); 0 turns it off"},
        "PerAddressRequestsPer5Min": {
            "Type": "Number", "Default": 12000, "MinValue": 0,
            "Description": "Requests one client IP address may make in 5 minutes, with or without a key (WAF "
                           "rate-based rule at CloudFront); 0 turns it off"},
        # No reservation by default: AWS keeps 100 of the account's concurrency unreserved, so any reservation
        # needs a quota above 100 plus the sum (a new account may have 10 to 50: the create would fail).
        # infra/deploy.sh compares the sum with the account's quota before it creates anything.
        "FunctionReservedConcurrency": {
            "Type": "Number", "Default": 0, "MinValue": 0,
            "Description": "Concurrent executions reserved for (and the most allowed to) the API function; 0 "
                           "(default) leaves it unset: the function shares the account's unreserved pool. Any "
                           "reservation needs an account quota of at least 100 plus all of this stack's "
                           "(docs/deploy.md)"},
        "LongPollReservedConcurrency": {
            "Type": "Number", "Default": 0, "MinValue": 0,
            "Description": "The same for the long-poll function, which serves fetch_replies: each waiting agent "
                           "holds one execution for up to 20 s, so this caps how many agents wait at once. 0 "
                           "(default) leaves it unset"},
        "WebhookReservedConcurrency": {
            "Type": "Number", "Default": 0, "MinValue": 0,
            "Description": "The same for the webhook delivery function; stream batches beyond it wait and are "
                           "retried. 0 (default) leaves it unset (its event source runs at most 5 batches per "
                           "stream shard at once)"},
        "WebsocketReservedConcurrency": {
            "Type": "Number", "Default": 0, "MinValue": 0,
            "Description": "The same for the WebSocket message function (pages subscribing). 0 (default) leaves "
                           "it unset"},
        "PushFanOutReservedConcurrency": {
            "Type": "Number", "Default": 0, "MinValue": 0,
            "Description": "The same for the push fan-out function (the stage table's stream to the pages); "
                           "batches beyond it wait in the stream. 0 (default) leaves it unset (its event source "
                           "runs at most 10 batches per stream shard at once)"},
        "ApiAccessLogs": {
            "Type": "String", "Default": "true", "AllowedValues": ["true", "false"],
            "Description": "true: API Gateway writes an access log (CloudWatch Logs) and sets the account's API "
                           "Gateway logging role, which that needs"},
        "CloudFrontAccessLogs": {
            "Type": "String", "Default": "true", "AllowedValues": ["true", "false"],
            "Description": "true: CloudFront writes standard access logs to a bucket of this stack"},
        "AccessLogRetentionDays": {
            "Type": "Number", "Default": 90, "AllowedValues": [1, 3, 5, 7, 14, 30, 60, 90, 180, 365],
            "Description": "Days the API and CloudFront access logs are kept"},
        "EdgeWebAclArn": {
            "Type": "String", "Default": "",
            "Description": "Stacks outside us-east-1: the ARN of a CloudFront (us-east-1) web ACL to attach to "
                           "the distribution (docs/deploy.md); empty: none. Ignored in us-east-1, where the "
                           "stack makes its own"},
        "ApiThrottleBurstLimit": {
            "Type": "Number", "Default": 200, "MinValue": 1,
            "Description": "API Gateway burst (token bucket size), per method"},
        "ClassifierEnabled": {
            "Type": "String", "Default": "false", "AllowedValues": ["true", "false"],
            "Description": "true: a SageMaker GPU endpoint classifies player input; false: the embedded "
                           "lexical classifier only (no GPU cost)"},
        "ClassifierImageUri": {
            "Type": "String", "Default": NO_IMAGE,
            "Description": "The classifier image (infra/classifier) in this stack's ClassifierRepository, "
                           "REPOSITORY_URI:TAG as `infra/deploy.sh image` prints it; required when "
                           "ClassifierEnabled is true"},
        "ClassifierModelId": {
            "Type": "String", "Default": DEFAULT_MODEL_ID, "MinLength": 1,
            "Description": "Hugging Face model id (or a path inside the image) the container serves"},
        "ClassifierMaxModelLen": {
            "Type": "Number", "Default": 8192, "MinValue": 1024,
            "Description": "Context length the container serves (vLLM --max-model-len); also the "
                           "function's prompt budget (BUTAI_CONTEXT_LIMIT)"},
        "ClassifierInstanceType": {
            "Type": "String", "Default": DEFAULT_INSTANCE_TYPE, "AllowedPattern": r"^ml\.[a-z0-9-]+\.[a-z0-9]+$",
            "Description": "SageMaker instance type of the endpoint (one GPU is enough)"},
        "ClassifierAmiVersion": {
            "Type": "String", "Default": GPU_AMI_VERSIONS[0], "AllowedValues": GPU_AMI_VERSIONS,
            "Description": "Endpoint AMI (NVIDIA driver); the image's CUDA 12.x needs driver 535 or later"},
        "ClassifierUse": {
            "Type": "String", "Default": "when-unsure", "AllowedValues": ["when-unsure", "every-turn"],
            "Description": "when-unsure: the embedded lexical classifier reads every turn and the endpoint is "
                           "asked only in its unsure band (BUTAI_CLASSIFIER=lexical+sagemaker); every-turn: the "
                           "endpoint reads every turn (sagemaker)"},
        "ClassifierTimeoutSeconds": {
            "Type": "Number", "Default": 1.5, "MinValue": 0.2, "MaxValue": 20,
            "Description": "The most a turn waits for the endpoint before the lexical reading (or なし) answers "
                           "(BUTAI_CLASSIFIER_TIMEOUT); the function's execution is held meanwhile"},
        "ClassifierBreakerFailures": {
            "Type": "Number", "Default": 3, "MinValue": 0,
            "Description": "Endpoint failures in a row (timeouts, errors) after which each function instance "
                           "stops asking it for ClassifierBreakerSeconds (its circuit breaker); 0 turns it off"},
        "ClassifierBreakerSeconds": {
            "Type": "Number", "Default": 30, "MinValue": 1,
            "Description": "How long the circuit breaker stays open before one probe call asks the endpoint again"},
        "ClassifierMinInstances": {
            "Type": "Number", "Default": 1, "MinValue": 1,
            "Description": "Fewest endpoint instances (a real-time variant cannot go below 1; see docs/deploy.md "
                           "for scale to zero)"},
        "ClassifierMaxInstances": {
            "Type": "Number", "Default": 2, "MinValue": 1,
            "Description": "Most endpoint instances (at least ClassifierMinInstances; the account's instance quota "
                           "for endpoint usage must allow it)"},
        "ClassifierInvocationsPerInstance": {
            "Type": "Number", "Default": 300, "MinValue": 1,
            "Description": "Target tracking: classifications per instance per minute "
                           "(SageMakerVariantInvocationsPerInstance)"},
        "VoiceImageUri": {
            "Type": "String", "Default": "", "AllowedPattern": VOICE_IMAGE_PATTERN,
            "Description": "The stage's own voice (infra/voice/Dockerfile) pushed to this stack's VoiceRepository, "
                           "REPOSITORY_URI:TAG or REPOSITORY_URI@sha256:DIGEST; empty (default): no voice function, "
                           "and the API's functions do not mark lines for it (docs/deploy.md)"},
        "VoiceMemorySize": {
            "Type": "Number", "Default": VOICE_MEMORY_MB, "MinValue": 2048, "MaxValue": 10240,
            "Description": "MB of the voice function; Lambda gives CPU in proportion (10240: 6 vCPU, about the same "
                           "cost per line as less, and faster). A new account may be held to 3008 until AWS raises it"},
        "VoiceReservedConcurrency": {
            "Type": "Number", "Default": 0, "MinValue": 0,
            "Description": "The same as FunctionReservedConcurrency for the voice function (with VoiceImageUri); "
                           "batches beyond it wait in the stream. 0 (default) leaves it unset (its event source "
                           "runs at most 10 batches per stream shard at once)"},
        "AlarmEmail": {
            "Type": "String", "Default": "", "AllowedPattern": r"^([^@\s]+@[^@\s]+\.[^@\s]+)?$",
            "Description": "An address the alarms and the budget alert are mailed to (it must confirm the "
                           "subscription); empty: the stack's alarm topic has no subscriber"},
        "MonthlyBudget": {
            "Type": "Number", "Default": 0, "MinValue": 0,
            "Description": "US dollars a month: an AWS Budgets alert (to the alarm topic) at 80 % of it spent "
                           "and at 100 % forecast; 0 (default) makes no budget. It counts the whole account's "
                           "cost (docs/deploy.md)"},
    }


PER_KEY_CONDITION = "PerKeyLimitOn"
EDGE_ACL_CONDITION = "EdgeWebAclMade"           # us-east-1: the stack makes the CloudFront web ACL
EDGE_ACL_GIVEN = "EdgeWebAclGiven"              # elsewhere: one made in us-east-1 is attached by ARN
PER_KEY_REGIONAL = "PerKeyAtTheApi"
PER_ADDRESS_CONDITION = "PerAddressLimitOn"
RESERVED_CONCURRENCY = "ConcurrencyReserved"
LONG_POLL_RESERVED = "LongPollConcurrencyReserved"
WEBHOOK_RESERVED = "WebhookConcurrencyReserved"
WEBSOCKET_RESERVED = "WebsocketConcurrencyReserved"
PUSH_RESERVED = "PushFanOutConcurrencyReserved"
VOICE_RESERVED = "VoiceConcurrencyReserved"
CLASSIFIER_EVERY_TURN = "ClassifierEveryTurn"
API_LOGS = "ApiAccessLogsOn"
CLOUDFRONT_LOGS = "CloudFrontAccessLogsOn"
# The header CloudFront adds to every request it sends to API Gateway; the API's web ACL lets through only
# requests that carry it with the stack's secret, so the regional endpoint cannot be called directly.
ORIGIN_HEADER = "x-butai-origin"
ORIGIN_SECRET = "{{resolve:secretsmanager:${OriginSecret}:SecretString}}"


def not_zero(parameter: str) -> dict:
    return {"Fn::Not": [{"Fn::Equals": [ref(parameter), 0]}]}


def conditions() -> dict:
    in_us_east_1 = {"Fn::Equals": [ref("AWS::Region"), "us-east-1"]}
    return {CLASSIFIER_CONDITION: {"Fn::Equals": [ref("ClassifierEnabled"), "true"]},
            # A CloudFront web ACL can only be made in us-east-1.
            EDGE_ACL_CONDITION: in_us_east_1,
            EDGE_ACL_GIVEN: {"Fn::And": [{"Fn::Not": [in_us_east_1]},
                                         {"Fn::Not": [{"Fn::Equals": [ref("EdgeWebAclArn"), ""]}]}]},
            PER_KEY_CONDITION: not_zero("PerKeyRequestsPer5Min"),
            # Outside us-east-1 the per-key rule lives on the API's own web ACL (the Authorization header
            # reaches API Gateway unchanged); client addresses do not (API Gateway sees CloudFront's).
            PER_KEY_REGIONAL: {"Fn::And": [{"Fn::Not": [in_us_east_1]}, {"Condition": PER_KEY_CONDITION}]},
            PER_ADDRESS_CONDITION: not_zero("PerAddressRequestsPer5Min"),
            RESERVED_CONCURRENCY: not_zero("FunctionReservedConcurrency"),
            LONG_POLL_RESERVED: not_zero("LongPollReservedConcurrency"),
            WEBHOOK_RESERVED: not_zero("WebhookReservedConcurrency"),
            WEBSOCKET_RESERVED: not_zero("WebsocketReservedConcurrency"),
            PUSH_RESERVED: not_zero("PushFanOutReservedConcurrency"),
            VOICE_CONDITION: {"Fn::Not": [{"Fn::Equals": [ref("VoiceImageUri"), ""]}]},
            VOICE_RESERVED: not_zero("VoiceReservedConcurrency"),
            CLASSIFIER_EVERY_TURN: {"Fn::Equals": [ref("ClassifierUse"), "every-turn"]},
            API_LOGS: {"Fn::Equals": [ref("ApiAccessLogs"), "true"]},
            CLOUDFRONT_LOGS: {"Fn::Equals": [ref("CloudFrontAccessLogs"), "true"]}}


RATE_LIMITED_BODY = {"rate-limited": {
    "ContentType": "APPLICATION_JSON",
    "Content": json.dumps({"error": {"code": "rate_limited", "message": "too many requests; retry shortly"}})}}


def _rate_rule(name: str, priority: int, statement: dict) -> dict:
    return {"Name": name, "Priority": priority,
            "Action": {"Block": {"CustomResponse": {
                "ResponseCode": 429, "CustomResponseBodyKey": "rate-limited",
                "ResponseHeaders": [{"Name": "Retry-After", "Value": "60"}]}}},
            "VisibilityConfig": {"SampledRequestsEnabled": True, "CloudWatchMetricsEnabled": True,
                                 "MetricName": sub(f"${{AWS::StackName}}-{name}")},
            "Statement": {"RateBasedStatement": statement}}


def per_key_rule(priority: int) -> dict:
    """Each stage key gets its own limit (API Gateway usage plans count API Gateway API keys, which
    butai's bearer keys are not).  The app takes a key only as exactly `Bearer <key>`, and the key-format
    rule before this one blocks every other spelling, so the header is counted as it is: one key, one
    count, byte for byte."""
    return _rate_rule("per-key", priority, {
        "Limit": ref("PerKeyRequestsPer5Min"), "AggregateKeyType": "CUSTOM_KEYS",
        "CustomKeys": [{"Header": {"Name": "authorization",
                                   "TextTransformations": [{"Priority": 0, "Type": "NONE"}]}}]})


MALFORMED_KEY_BODY = {"malformed-key": {
    "ContentType": "APPLICATION_JSON",
    "Content": json.dumps({"error": {"code": "missing_key", "message": "send `Authorization: Bearer <key>`",
                                     "field": "Authorization"}})}}


def key_format_rule(priority: int) -> dict:
    """An `Authorization` header that is not exactly `Bearer <key>` is refused at the edge with the app's own
    401, by the app's own pattern (chalicelib/stage/keys.py): what the per-key rule then counts is only
    what the app takes as a key.  A request without the header is not this rule's business (the size
    check: WAF treats a missing header as not matching)."""
    header = {"SingleHeader": {"Name": "authorization"}}
    none = [{"Priority": 0, "Type": "NONE"}]
    return {"Name": "key-format", "Priority": priority,
            "Action": {"Block": {"CustomResponse": {"ResponseCode": 401,
                                                    "CustomResponseBodyKey": "malformed-key"}}},
            "VisibilityConfig": {"SampledRequestsEnabled": True, "CloudWatchMetricsEnabled": True,
                                 "MetricName": sub("${AWS::StackName}-key-format")},
            "Statement": {"AndStatement": {"Statements": [
                {"SizeConstraintStatement": {"FieldToMatch": header, "ComparisonOperator": "GE", "Size": 1,
                                             "TextTransformations": none}},
                {"NotStatement": {"Statement": {"RegexMatchStatement": {
                    "FieldToMatch": header, "RegexString": AUTHORIZATION_PATTERN,
                    "TextTransformations": none}}}},
            ]}}}


def per_address_rule(priority: int) -> dict:
    """Every request counts against its client address too, key or no key: requests without
    `Authorization` are not counted by the per-key rule, and random keys would each get a fresh count."""
    return _rate_rule("per-address", priority, {"Limit": ref("PerAddressRequestsPer5Min"),
                                                "AggregateKeyType": "IP"})


def when(condition: str, value: Any) -> dict:
    return {"Fn::If": [condition, value, ref("AWS::NoValue")]}


def per_key_limit() -> dict:
    """The CloudFront web ACL (us-east-1 stacks): per-key and per-address rate limits at the edge."""
    return {"PerKeyWebAcl": {
        "Type": "AWS::WAFv2::WebACL", "Condition": EDGE_ACL_CONDITION,
        "Properties": {
            "Scope": "CLOUDFRONT", "DefaultAction": {"Allow": {}},
            "VisibilityConfig": {"SampledRequestsEnabled": True, "CloudWatchMetricsEnabled": True,
                                 "MetricName": sub("${AWS::StackName}-web")},
            "CustomResponseBodies": {**RATE_LIMITED_BODY, **MALFORMED_KEY_BODY},
            # Every request counts against its address first; then a malformed key is refused before the
            # per-key rule could count it as a key of its own.
            "Rules": [when(PER_ADDRESS_CONDITION, per_address_rule(0)), when(PER_KEY_CONDITION, key_format_rule(1)),
                      when(PER_KEY_CONDITION, per_key_rule(2))],
        }}}


def origin_lock() -> dict:
    """Only CloudFront reaches the API: a secret made by the stack travels from CloudFront to API Gateway in
    a custom origin header, and the API stage's regional web ACL blocks every request without it (direct
    calls would skip the edge's rate limits and security headers).  API Gateway resource policies cannot
    look at headers, and CloudFront publishes no fixed addresses to allow, hence WAF; the secret never
    leaves AWS (a Secrets Manager value resolved by CloudFormation) and rotates with a stack update."""
    return {
        "OriginSecret": {
            "Type": "AWS::SecretsManager::Secret",
            "Properties": {
                "Description": sub("butai ${AWS::StackName}: the header value CloudFront sends to API Gateway"),
                "GenerateSecretString": {"PasswordLength": 48, "ExcludePunctuation": True}}},
        "ApiWebAcl": {
            "Type": "AWS::WAFv2::WebACL",
            "Properties": {
                "Scope": "REGIONAL",
                "DefaultAction": {"Block": {"CustomResponse": {"ResponseCode": 403,
                                                               "CustomResponseBodyKey": "not-through-cloudfront"}}},
                "VisibilityConfig": {"SampledRequestsEnabled": True, "CloudWatchMetricsEnabled": True,
                                     "MetricName": sub("${AWS::StackName}-api")},
                "CustomResponseBodies": {**RATE_LIMITED_BODY, **MALFORMED_KEY_BODY, "not-through-cloudfront": {
                    "ContentType": "APPLICATION_JSON",
                    "Content": json.dumps({"error": {"code": "forbidden",
                                                     "message": "call the API through its CloudFront URL"}})}},
                "Rules": [
                    when(PER_KEY_REGIONAL, key_format_rule(0)),
                    when(PER_KEY_REGIONAL, per_key_rule(1)),
                    {"Name": "through-cloudfront", "Priority": 2, "Action": {"Allow": {}},
                     "VisibilityConfig": {"SampledRequestsEnabled": False, "CloudWatchMetricsEnabled": True,
                                          "MetricName": sub("${AWS::StackName}-through-cloudfront")},
                     "Statement": {"ByteMatchStatement": {
                         "FieldToMatch": {"SingleHeader": {"Name": ORIGIN_HEADER}},
                         "PositionalConstraint": "EXACTLY", "SearchString": sub(ORIGIN_SECRET),
                         "TextTransformations": [{"Priority": 0, "Type": "NONE"}]}}},
                ]}},
        "ApiWebAclAssociation": {
            "Type": "AWS::WAFv2::WebACLAssociation",
            "Properties": {
                # `RestAPI.Stage`: SAM's reference to the stage it makes, so the stage exists first.
                "ResourceArn": {"Fn::Join": ["", [
                    sub(f"arn:${{AWS::Partition}}:apigateway:${{AWS::Region}}::/restapis/${{{REST_API}}}/stages/"),
                    ref(f"{REST_API}.Stage")]]},
                "WebACLArn": getatt("ApiWebAcl", "Arn")}},
    }


def rules() -> dict:
    return {"ClassifierNeedsImage": {
        "RuleCondition": {"Fn::Equals": [ref("ClassifierEnabled"), "true"]},
        "Assertions": [{
            "Assert": {"Fn::Not": [{"Fn::Equals": [ref("ClassifierImageUri"), NO_IMAGE]}]},
            "AssertDescription": "ClassifierEnabled=true needs ClassifierImageUri (run infra/deploy.sh image)"}],
    }}


# ---------------------------------------------------------------- function

def function_environment() -> dict:
    env: dict[str, Any] = {var: ref(resource_id) for resource_id, var in tables.CFN_TABLES.values()}
    env.update({
        names.DEPLOYMENT_STAGE: ref("StageName"),
        names.BUCKET: ref("AssetsBucket"),
        # BUTAI_ASSETS_URL stays unset: image URLs are relative ("/characters/…"),
        # which resolve against the CloudFront origin that serves both the page
        # and the API.  (An absolute URL would need the distribution's domain
        # here, and the distribution depends on the API: a cycle.)
        names.RETENTION_DAYS: ref("RetentionDays"),
        names.AUDIO_ORIGINS: ref("AudioOrigins"),
        # The endpoint only where the lexical classifier is unsure, by default: most turns never wait for it.
        names.CLASSIFIER: if_classifier({"Fn::If": [CLASSIFIER_EVERY_TURN, "sagemaker", "lexical+sagemaker"]},
                                        "lexical"),
        names.SAGEMAKER_ENDPOINT: if_classifier(getatt("ClassifierEndpoint", "EndpointName")),
        names.SAGEMAKER_MODEL: if_classifier(ref("ClassifierModelId")),
        names.CONTEXT_LIMIT: if_classifier(ref("ClassifierMaxModelLen")),
        names.CLASSIFIER_TIMEOUT: if_classifier(ref("ClassifierTimeoutSeconds")),
        names.CLASSIFIER_BREAKER_FAILURES: if_classifier(ref("ClassifierBreakerFailures")),
        names.CLASSIFIER_BREAKER_SECONDS: if_classifier(ref("ClassifierBreakerSeconds")),
        names.STACK: ref("AWS::StackName"),
        # Lines without audio of their own are marked pending and named to the voice function, which is there.
        names.VOICE: when(VOICE_CONDITION, "1"),
    })
    return env


def bucket_objects(pattern: str) -> dict:
    return {"Fn::Join": ["", [getatt("AssetsBucket", "Arn"), f"/{pattern}"]]}


def table_arns() -> list:
    return [getatt(resource_id, "Arn") for resource_id, _ in tables.CFN_TABLES.values()]


def function_policy() -> dict:
    """The function's whole permission set (on chalice's DefaultRole)."""
    pending_id = tables.CFN_TABLES["pending_replies"][0]
    statements = [
        {"Sid": "StageTables", "Effect": "Allow", "Action": DYNAMODB_ACTIONS, "Resource": table_arns()},
        {"Sid": "UnreadIndex", "Effect": "Allow", "Action": ["dynamodb:Query"],
         "Resource": [{"Fn::Join": ["", [getatt(pending_id, "Arn"), f"/index/{tables.UNREAD_INDEX}"]]}]},
        {"Sid": "CharactersAndScenarios", "Effect": "Allow", "Action": ["s3:GetObject"],
         "Resource": [bucket_objects(f"{CHARACTER_PREFIX}*"), bucket_objects(f"{SCENARIO_PREFIX}*")]},
        # What a scenario's build derives from its texts, kept beside it by the first instance that builds it
        # under this code (chalicelib/kept.py); scenarios themselves stay read-only.
        {"Sid": "KeptDerivations", "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"],
         "Resource": [bucket_objects(f"{KEPT_PREFIX}*")]},
        if_classifier({"Sid": "Classifier", "Effect": "Allow", "Action": ["sagemaker:InvokeEndpoint"],
                       "Resource": [ref("ClassifierEndpoint")]}),
    ]
    return {"PolicyName": "butai-function",
            "PolicyDocument": {"Version": "2012-10-17", "Statement": statements}}


def function_resources() -> dict:
    return {
        FUNCTION: {"Properties": {
            "Runtime": LAMBDA_RUNTIME, "Architectures": [lambda_runtime.ARCHITECTURE],
            "AutoPublishAlias": API_ALIAS,
            # A new instance resumes from a snapshot taken after the import (chalicelib/snapstart.py
            # says what is warmed before it and re-made after); docs/deploy.md, SnapStart.
            "SnapStart": {"ApplyOn": "PublishedVersions"},
            "Environment": {"Variables": function_environment()},
            "ReservedConcurrentExecutions": {"Fn::If": [RESERVED_CONCURRENCY, ref("FunctionReservedConcurrency"),
                                                        ref("AWS::NoValue")]}}},
        FUNCTION_ROLE: {"Properties": {"Policies": [function_policy()]}},
        # The log group exists before the first invocation, with a retention,
        # so the function needs no logs:CreateLogGroup and no logs:* on "*".
        "APIHandlerLogGroup": {
            "Type": "AWS::Logs::LogGroup", "DeletionPolicy": "Delete", "UpdateReplacePolicy": "Delete",
            "Properties": {"LogGroupName": sub(f"/aws/lambda/${{{FUNCTION}}}"),
                           "RetentionInDays": ref("LogRetentionDays")}},
        "APIHandlerLogsPolicy": {
            "Type": "AWS::IAM::Policy",
            "Properties": {
                "PolicyName": "butai-function-logs",
                "Roles": [ref(FUNCTION_ROLE)],
                "PolicyDocument": {"Version": "2012-10-17", "Statement": [{
                    "Sid": "FunctionLogs", "Effect": "Allow",
                    "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                    "Resource": [getatt("APIHandlerLogGroup", "Arn")]}]}}},
    }


# ---------------------------------------------------------------- long-poll function

LONG_POLL_FUNCTION = "LongPollFunction"
# The route whose requests may wait (fetch_replies with `wait`): served by a function of its own.
LONG_POLL_PATH = "/stages/{stage_id}/fetch_replies"
LONG_POLL_TIMEOUT_S = 30         # a wait is at most 20 s; API Gateway ends a request at 29 s
LONG_POLL_MEMORY_MB = 256        # it waits and claims: the app and its clients take about 60 MB
CHALICE_CONFIG = ROOT / ".chalice" / "config.json"


def _integration_uri(function: str) -> dict:
    """The integration of a function's alias (SnapStart snapshots published versions only), in the form the
    API function's integrations are given after packaging (`route_api_to_alias`)."""
    return {"Fn::Sub": ["arn:${AWS::Partition}:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/"
                        f"${{{_TARGET}}}/invocations", {_TARGET: ref(f"{function}.Alias")}]}


def long_poll_resources() -> dict:
    """fetch_replies, the one route that may wait, is served by its own function: the same package and
    handler as the API function (the Chalice app), its own concurrency.  Each waiting agent holds one instance
    for up to 20 s, so waiting agents take the long-poll function's instances, never the API function's: 20
    waiting agents leave the players' replies and the agents' speak untouched.  API Gateway sends this path's
    POST there (the rest of the swagger chalice writes is unchanged; the template merge replaces just this
    integration's uri)."""
    chalice_env = json.loads(CHALICE_CONFIG.read_text(encoding="utf-8")).get("environment_variables", {})
    log_group = f"{LONG_POLL_FUNCTION}LogGroup"
    return {
        LONG_POLL_FUNCTION: {
            "Type": "AWS::Serverless::Function",
            "Properties": {
                "CodeUri": "./deployment.zip", "Handler": "app.app",
                # As the API function: the same runtime and architecture, SnapStart on versions published
                # under the same alias name, which API Gateway calls.
                "Runtime": LAMBDA_RUNTIME, "Architectures": [lambda_runtime.ARCHITECTURE],
                "AutoPublishAlias": API_ALIAS, "SnapStart": {"ApplyOn": "PublishedVersions"},
                "MemorySize": LONG_POLL_MEMORY_MB, "Timeout": LONG_POLL_TIMEOUT_S,
                "Role": getatt(FUNCTION_ROLE, "Arn"),
                "Environment": {"Variables": {**chalice_env, **function_environment()}},
                "ReservedConcurrentExecutions": {"Fn::If": [LONG_POLL_RESERVED, ref("LongPollReservedConcurrency"),
                                                            ref("AWS::NoValue")]}}},
        f"{LONG_POLL_FUNCTION}InvokePermission": {
            "Type": "AWS::Lambda::Permission",
            "Properties": {
                "FunctionName": ref(f"{LONG_POLL_FUNCTION}.Alias"), "Action": "lambda:InvokeFunction",
                "Principal": "apigateway.amazonaws.com",
                "SourceArn": {"Fn::Sub": ["arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}"
                                          ":${RestAPIId}/*", {"RestAPIId": ref(REST_API)}]}}},
        log_group: {
            "Type": "AWS::Logs::LogGroup", "DeletionPolicy": "Delete", "UpdateReplacePolicy": "Delete",
            "Properties": {"LogGroupName": sub(f"/aws/lambda/${{{LONG_POLL_FUNCTION}}}"),
                           "RetentionInDays": ref("LogRetentionDays")}},
        f"{LONG_POLL_FUNCTION}LogsPolicy": {
            "Type": "AWS::IAM::Policy",
            "Properties": {
                "PolicyName": "butai-long-poll-logs",
                "Roles": [ref(FUNCTION_ROLE)],
                "PolicyDocument": {"Version": "2012-10-17", "Statement": [{
                    "Sid": "LongPollLogs", "Effect": "Allow",
                    "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                    "Resource": [getatt(log_group, "Arn")]}]}}},
    }


def long_poll_route() -> dict:
    """The merge into chalice's swagger: this path's POST goes to the long-poll function."""
    return {"DefinitionBody": {"paths": {LONG_POLL_PATH: {"post": {
        "x-amazon-apigateway-integration": {"uri": _integration_uri(LONG_POLL_FUNCTION)}}}}}}


# API Gateway's own rejections in butai's error shape, without echoing the request (its default message
# for an unknown route repeats the Authorization header).  They live in the API's definition (OpenAPI's
# x-amazon-apigateway-gateway-responses), not as resources of their own: every deployment of the API then
# carries them, where separate GatewayResponse resources would wait for the next deployment (cfn-lint W3660).
GATEWAY_RESPONSES = {
    "MISSING_AUTHENTICATION_TOKEN": (404, "not_found", "no such route"),
    "THROTTLED": (429, "rate_limited", "too many requests; retry shortly"),
    "DEFAULT_4XX": (None, "rejected", "the request was rejected"),
    "DEFAULT_5XX": (None, "unavailable", "the API is unavailable; retry shortly"),
}
# API Gateway's throttling refills its bucket every second: the client may ask again that soon.
THROTTLED_RETRY_AFTER_S = 1


def gateway_responses() -> dict:
    out = {}
    for kind, (status, code, message) in GATEWAY_RESPONSES.items():
        parameters = {"gatewayresponse.header.Cache-Control": "'no-store'"}
        if kind == "THROTTLED":
            parameters["gatewayresponse.header.Retry-After"] = f"'{THROTTLED_RETRY_AFTER_S}'"
        response: dict[str, Any] = {
            "responseParameters": parameters,
            "responseTemplates": {"application/json": json.dumps({"error": {"code": code, "message": message}})}}
        if status:
            response["statusCode"] = status
        out[kind] = response
    return out


# One JSON line per request: who (address, key-less: the Authorization header is never logged), what, the
# answer, and the ids to find the Lambda's own log lines.  `stack` names the stack (a Sub), so the metric
# filters that count refusals from these lines (monitoring.py) carry it as their dimension.
API_ACCESS_LOG_FORMAT = json.dumps({
    "stack": "${AWS::StackName}", "requestId": "$context.requestId", "extendedRequestId": "$context.extendedRequestId",
    "ip": "$context.identity.sourceIp", "userAgent": "$context.identity.userAgent",
    "time": "$context.requestTimeEpoch", "method": "$context.httpMethod", "path": "$context.path",
    "status": "$context.status", "responseLength": "$context.responseLength",
    "latencyMs": "$context.responseLatency", "integrationStatus": "$context.integration.status",
    "waf": "$context.waf.status", "error": "$context.error.responseType"}, separators=(",", ":"))


def api_resources() -> dict:
    definition = long_poll_route()["DefinitionBody"]
    # The API's name, and so its CloudWatch dimension (ApiName), is the stack's: two stacks in one account
    # (chalice's title is the app's name, the same for both) would share one set of metrics and alarms.
    definition["info"] = {"title": ref("AWS::StackName")}
    definition["x-amazon-apigateway-gateway-responses"] = gateway_responses()
    return {**origin_lock(), **api_access_log_resources(), REST_API: {"Properties": {
        "Name": ref("AWS::StackName"),
        "DefinitionBody": definition,
        # CloudFront is the edge; an edge-optimised API would put a second
        # CloudFront distribution behind the first.
        "EndpointConfiguration": "REGIONAL",
        "MethodSettings": [{
            "ResourcePath": "/*", "HttpMethod": "*",
            "ThrottlingRateLimit": ref("ApiThrottleRateLimit"),
            "ThrottlingBurstLimit": ref("ApiThrottleBurstLimit"),
        }],
        "AccessLogSetting": when(API_LOGS, {"DestinationArn": getatt("ApiAccessLogGroup", "Arn"),
                                            "Format": sub(API_ACCESS_LOG_FORMAT)}),
        # API Gateway refuses a stage with an access log until the account's logging role is set: the Ref in
        # the description makes the API (and so the stage SAM makes after it) wait for ApiGatewayAccount
        # when access logs are on (a DependsOn could not name a resource that may not exist).
        "Description": logging_role_after("butai ${AWS::StackName}: the stages' API"),
    }}}


def logging_role_after(text: str) -> dict:
    """`text`, naming the account's API Gateway logging setting when access logs are on: a reference that
    orders the resource after it."""
    return {"Fn::If": [API_LOGS, sub(f"{text} (access log with the logging role of ${{ApiGatewayAccount}})"),
                       sub(text)]}


def api_access_log_resources() -> dict:
    on = {"Condition": API_LOGS}
    return {
        "ApiAccessLogGroup": {
            **on, "Type": "AWS::Logs::LogGroup", "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain",
            "Properties": {"LogGroupName": sub("/butai/${AWS::StackName}/api-access"),
                           "RetentionInDays": ref("AccessLogRetentionDays")}},
        # API Gateway writes logs with one role per account and region (an account setting).
        "ApiGatewayLogsRole": {
            **on, "Type": "AWS::IAM::Role",
            "Properties": {
                "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": [{
                    "Effect": "Allow", "Principal": {"Service": "apigateway.amazonaws.com"},
                    "Action": "sts:AssumeRole",
                    "Condition": {"StringEquals": {"aws:SourceAccount": ref("AWS::AccountId")}}}]},
                "ManagedPolicyArns": [sub("arn:${AWS::Partition}:iam::aws:policy/service-role/"
                                          "AmazonAPIGatewayPushToCloudWatchLogs")]}},
        "ApiGatewayAccount": {
            **on, "Type": "AWS::ApiGateway::Account",
            "Properties": {"CloudWatchRoleArn": getatt("ApiGatewayLogsRole", "Arn")}},
    }


# ---------------------------------------------------------------- page, images, CloudFront

def web_resources() -> dict:
    distribution_arn = arn("cloudfront", "distribution/${Distribution}", region=False)
    return {
        "AssetsBucket": {
            "Type": "AWS::S3::Bucket", "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain",
            "Properties": {
                "PublicAccessBlockConfiguration": {
                    "BlockPublicAcls": True, "BlockPublicPolicy": True,
                    "IgnorePublicAcls": True, "RestrictPublicBuckets": True},
                "BucketEncryption": {"ServerSideEncryptionConfiguration": [{
                    "ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}, "BucketKeyEnabled": True}]},
                "OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]},
                # The page and the images are rebuilt from the repository, the voices (audio/, uploaded with
                # `butai audio upload`) are not: every object keeps its earlier versions, so an overwrite or
                # a delete can be undone for NONCURRENT_DAYS.
                "VersioningConfiguration": {"Status": "Enabled"},
                "LifecycleConfiguration": {"Rules": [{
                    "Id": "keep-earlier-versions-for-a-while", "Status": "Enabled",
                    "NoncurrentVersionExpiration": {"NoncurrentDays": NONCURRENT_DAYS},
                    "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7}}]},
            }},
        "AssetsBucketPolicy": {
            "Type": "AWS::S3::BucketPolicy",
            "Properties": {
                "Bucket": ref("AssetsBucket"),
                "PolicyDocument": {"Version": "2012-10-17", "Statement": [
                    {"Sid": "CloudFrontReadsThroughOriginAccessControl", "Effect": "Allow",
                     "Principal": {"Service": "cloudfront.amazonaws.com"},
                     "Action": "s3:GetObject",
                     "Resource": [bucket_objects(name) for name in PAGE_FILES]
                                 + [bucket_objects(f"{CHARACTER_PREFIX}*"), bucket_objects(f"{AUDIO_PREFIX}*")],
                     "Condition": {"StringEquals": {"AWS:SourceArn": distribution_arn}}},
                    {"Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
                     "Resource": [getatt("AssetsBucket", "Arn"), bucket_objects("*")],
                     "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
                ]}}},
        "AccessLogsBucket": {
            "Type": "AWS::S3::Bucket", "Condition": CLOUDFRONT_LOGS,
            "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain",
            "Properties": {
                "PublicAccessBlockConfiguration": {
                    "BlockPublicAcls": True, "BlockPublicPolicy": True,
                    "IgnorePublicAcls": True, "RestrictPublicBuckets": True},
                "BucketEncryption": {"ServerSideEncryptionConfiguration": [{
                    "ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]},
                # CloudFront's standard logs are written with an ACL (awslogsdelivery), so ACLs stay on here.
                "OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerPreferred"}]},
                "LifecycleConfiguration": {"Rules": [{
                    "Id": "expire-access-logs", "Status": "Enabled",
                    "ExpirationInDays": ref("AccessLogRetentionDays")}]},
            }},
        "AccessLogsBucketPolicy": {
            "Type": "AWS::S3::BucketPolicy", "Condition": CLOUDFRONT_LOGS,
            "Properties": {
                "Bucket": ref("AccessLogsBucket"),
                "PolicyDocument": {"Version": "2012-10-17", "Statement": [
                    {"Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
                     "Resource": [getatt("AccessLogsBucket", "Arn"),
                                  {"Fn::Join": ["", [getatt("AccessLogsBucket", "Arn"), "/*"]]}],
                     "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
                ]}}},
        "AssetsOriginAccessControl": {
            "Type": "AWS::CloudFront::OriginAccessControl",
            "Properties": {"OriginAccessControlConfig": {
                "Name": account_unique_name("assets"),
                "Description": sub("butai ${AWS::StackName} (${AWS::Region}): CloudFront reads the page and "
                                   "images from the private bucket"),
                "OriginAccessControlOriginType": "s3",
                "SigningBehavior": "always", "SigningProtocol": "sigv4"}}},
        "PageHeadersPolicy": {
            "Type": "AWS::CloudFront::ResponseHeadersPolicy",
            "Properties": {"ResponseHeadersPolicyConfig": {
                "Name": account_unique_name("page"),
                "Comment": sub("butai ${AWS::StackName} (${AWS::Region}): security headers for the page, "
                               "images and API answers"),
                "SecurityHeadersConfig": {
                    "ContentSecurityPolicy": {"ContentSecurityPolicy": sub(CONTENT_SECURITY_POLICY),
                                              "Override": True},
                    "ContentTypeOptions": {"Override": True},
                    "ReferrerPolicy": {"ReferrerPolicy": "no-referrer", "Override": True},
                    "FrameOptions": {"FrameOption": "DENY", "Override": True},
                    "StrictTransportSecurity": {"AccessControlMaxAgeSec": 31536000, "IncludeSubdomains": True,
                                                "Override": True},
                }}}},
        "Distribution": {
            "Type": "AWS::CloudFront::Distribution",
            "Properties": {"DistributionConfig": {
                "Enabled": True,
                "Comment": sub("butai ${StageName} (${AWS::StackName})"),
                "WebACLId": {"Fn::If": [EDGE_ACL_CONDITION, getatt("PerKeyWebAcl", "Arn"),
                                        {"Fn::If": [EDGE_ACL_GIVEN, ref("EdgeWebAclArn"), ref("AWS::NoValue")]}]},
                "Logging": when(CLOUDFRONT_LOGS, {"Bucket": getatt("AccessLogsBucket", "RegionalDomainName"),
                                                  "Prefix": "cloudfront/", "IncludeCookies": False}),
                "HttpVersion": "http2and3",
                "IPV6Enabled": True,
                # PriceClass_200 includes the Japanese edge locations.
                "PriceClass": "PriceClass_200",
                "DefaultRootObject": "index.html",
                "ViewerCertificate": {"CloudFrontDefaultCertificate": True},
                "Origins": [
                    {"Id": "assets", "DomainName": getatt("AssetsBucket", "RegionalDomainName"),
                     "S3OriginConfig": {"OriginAccessIdentity": ""},
                     "OriginAccessControlId": getatt("AssetsOriginAccessControl", "Id")},
                    {"Id": "api", "DomainName": sub(f"${{{REST_API}}}.execute-api.${{AWS::Region}}.${{AWS::URLSuffix}}"),
                     "OriginPath": f"/{API_GATEWAY_STAGE}",
                     "OriginCustomHeaders": [{"HeaderName": ORIGIN_HEADER, "HeaderValue": sub(ORIGIN_SECRET)}],
                     "CustomOriginConfig": {"OriginProtocolPolicy": "https-only", "HTTPSPort": 443,
                                            "OriginSSLProtocols": ["TLSv1.2"]}},
                    {"Id": "push",
                     "DomainName": sub(f"${{{WEBSOCKET_API}}}.execute-api.${{AWS::Region}}.${{AWS::URLSuffix}}"),
                     "CustomOriginConfig": {"OriginProtocolPolicy": "https-only", "HTTPSPort": 443,
                                            "OriginSSLProtocols": ["TLSv1.2"]}},
                ],
                "DefaultCacheBehavior": {
                    "TargetOriginId": "assets",
                    "ViewerProtocolPolicy": "redirect-to-https",
                    "AllowedMethods": ["GET", "HEAD"], "CachedMethods": ["GET", "HEAD"],
                    "Compress": True,
                    "CachePolicyId": CACHING_OPTIMIZED,
                    "ResponseHeadersPolicyId": ref("PageHeadersPolicy")},
                "CacheBehaviors": [{
                    "PathPattern": path,
                    "TargetOriginId": "api",
                    "ViewerProtocolPolicy": "https-only",
                    "AllowedMethods": ["GET", "HEAD", "OPTIONS", "PUT", "PATCH", "POST", "DELETE"],
                    "CachedMethods": ["GET", "HEAD"],
                    "Compress": True,
                    # Never cached; every viewer header but Host (so Authorization
                    # and If-None-Match) reaches API Gateway.
                    "CachePolicyId": CACHING_DISABLED,
                    "OriginRequestPolicyId": ALL_VIEWER_EXCEPT_HOST_HEADER,
                    "ResponseHeadersPolicyId": ref("PageHeadersPolicy"),
                } for path in API_PATHS] + [push_behaviour()],
            }}},
        **push_path_function(),
    }


def push_behaviour() -> dict:
    """/push → the WebSocket API: never cached, every viewer header but Host (the Sec-WebSocket-* headers
    of the upgrade) forwarded, the path rewritten to the API's stage."""
    return {
        "PathPattern": PUSH_PATH, "TargetOriginId": "push", "ViewerProtocolPolicy": "https-only",
        "AllowedMethods": ["GET", "HEAD"], "CachedMethods": ["GET", "HEAD"], "Compress": False,
        "CachePolicyId": CACHING_DISABLED, "OriginRequestPolicyId": ALL_VIEWER_EXCEPT_HOST_HEADER,
        "FunctionAssociations": [{"EventType": "viewer-request",
                                  "FunctionARN": getatt("PushPathFunction", "FunctionMetadata.FunctionARN")}],
    }


def push_path_function() -> dict:
    return {"PushPathFunction": {
        "Type": "AWS::CloudFront::Function",
        "Properties": {
            "Name": account_unique_name("push-path"), "AutoPublish": True,
            "FunctionConfig": {"Comment": "butai: /push is the WebSocket API's stage", "Runtime": "cloudfront-js-2.0"},
            "FunctionCode": "function handler(event) { var request = event.request; "
                            f"request.uri = '/{API_GATEWAY_STAGE}'; return request; }}"}}}


# ---------------------------------------------------------------- classifier endpoint

def image_repository(**properties: Any) -> dict:
    """An ECR repository for a container image this stack runs: tags immutable, scanned on push, the five newest
    images kept, emptied with the stack; `properties` adds to these (a repository policy)."""
    return {"Type": "AWS::ECR::Repository", "Properties": {
        "ImageTagMutability": "IMMUTABLE",
        "ImageScanningConfiguration": {"ScanOnPush": True},
        "EncryptionConfiguration": {"EncryptionType": "AES256"},
        "EmptyOnDelete": True,
        "LifecyclePolicy": {"LifecyclePolicyText": json.dumps({"rules": [{
            "rulePriority": 1, "description": "keep the 5 newest images",
            "selection": {"tagStatus": "any", "countType": "imageCountMoreThan", "countNumber": 5},
            "action": {"type": "expire"}}]}, separators=(",", ":"))},
        **properties}}


def classifier_resources() -> dict:
    endpoint_log_group = f"/aws/sagemaker/Endpoints/{CLASSIFIER_ENDPOINT_NAME}"
    on = {"Condition": CLASSIFIER_CONDITION}
    return {
        # Unconditional: the image is pushed before the endpoint is switched on.
        "ClassifierRepository": image_repository(),
        "ClassifierLogGroup": {
            **on, "Type": "AWS::Logs::LogGroup", "DeletionPolicy": "Delete", "UpdateReplacePolicy": "Delete",
            "Properties": {"LogGroupName": sub(endpoint_log_group), "RetentionInDays": ref("LogRetentionDays")}},
        "ClassifierRole": {
            **on, "Type": "AWS::IAM::Role",
            "Properties": {
                "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": [{
                    "Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"},
                    "Action": "sts:AssumeRole",
                    "Condition": {"StringEquals": {"aws:SourceAccount": ref("AWS::AccountId")}}}]},
                "Policies": [{"PolicyName": "butai-classifier", "PolicyDocument": {
                    "Version": "2012-10-17", "Statement": [
                        {"Sid": "PullImage", "Effect": "Allow",
                         "Action": ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage",
                                    "ecr:GetDownloadUrlForLayer"],
                         "Resource": [getatt("ClassifierRepository", "Arn")]},
                        # GetAuthorizationToken has no resource type: AWS requires "*".
                        {"Sid": "RegistryLogin", "Effect": "Allow", "Action": ["ecr:GetAuthorizationToken"],
                         "Resource": "*"},
                        {"Sid": "EndpointLogs", "Effect": "Allow",
                         "Action": ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:DescribeLogStreams",
                                    "logs:PutLogEvents"],
                         "Resource": [arn("logs", f"log-group:{endpoint_log_group}"),
                                      arn("logs", f"log-group:{endpoint_log_group}:*")]},
                    ]}}],
            }},
        "ClassifierModel": {
            **on, "Type": "AWS::SageMaker::Model",
            "Properties": {
                "ExecutionRoleArn": getatt("ClassifierRole", "Arn"),
                # The container downloads the model from the Hugging Face Hub at
                # start (or serves one baked into the image), so it needs egress.
                "EnableNetworkIsolation": False,
                "PrimaryContainer": {
                    "Image": ref("ClassifierImageUri"),
                    "Environment": {
                        "MODEL_ID": ref("ClassifierModelId"),
                        "MAX_MODEL_LEN": ref("ClassifierMaxModelLen"),
                    }},
            }},
        "ClassifierEndpointConfig": {
            **on, "Type": "AWS::SageMaker::EndpointConfig",
            "Properties": {"ProductionVariants": [{
                "VariantName": CLASSIFIER_VARIANT,
                "ModelName": getatt("ClassifierModel", "ModelName"),
                "InstanceType": ref("ClassifierInstanceType"),
                "InitialInstanceCount": ref("ClassifierMinInstances"),
                "InitialVariantWeight": 1,
                "InferenceAmiVersion": ref("ClassifierAmiVersion"),
                # Model download + load + CUDA graph capture happen before /ping answers.
                "ContainerStartupHealthCheckTimeoutInSeconds": 1200,
            }]}},
        "ClassifierEndpoint": {
            **on, "Type": "AWS::SageMaker::Endpoint",
            "DependsOn": ["ClassifierLogGroup"],
            "Properties": {
                "EndpointName": sub(CLASSIFIER_ENDPOINT_NAME),
                "EndpointConfigName": getatt("ClassifierEndpointConfig", "EndpointConfigName")}},
        "ClassifierScalableTarget": {
            **on, "Type": "AWS::ApplicationAutoScaling::ScalableTarget",
            "Properties": {
                "ServiceNamespace": "sagemaker",
                "ScalableDimension": "sagemaker:variant:DesiredInstanceCount",
                "ResourceId": sub(f"endpoint/${{ClassifierEndpoint.EndpointName}}/variant/{CLASSIFIER_VARIANT}"),
                "MinCapacity": ref("ClassifierMinInstances"),
                "MaxCapacity": ref("ClassifierMaxInstances")}},
        "ClassifierScalingPolicy": {
            **on, "Type": "AWS::ApplicationAutoScaling::ScalingPolicy",
            "Properties": {
                "PolicyName": sub("${AWS::StackName}-classifier-invocations"),
                "PolicyType": "TargetTrackingScaling",
                "ScalingTargetId": ref("ClassifierScalableTarget"),
                "TargetTrackingScalingPolicyConfiguration": {
                    "PredefinedMetricSpecification": {
                        "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"},
                    "TargetValue": ref("ClassifierInvocationsPerInstance"),
                    # A new instance takes minutes to serve; scale in slowly.
                    "ScaleOutCooldown": 120,
                    "ScaleInCooldown": 900}}},
    }


# ---------------------------------------------------------------- webhook delivery

WEBHOOK_FUNCTION = "WebhookDeliveryFunction"
WEBHOOK_ROLE = "WebhookDeliveryRole"
WEBHOOK_QUEUE = "WebhookDeadLetterQueue"
WEBHOOK_HANDLER = "chalicelib.webhooks.stream.handler"
WEBHOOK_TIMEOUT_S = 120        # LAMBDA_SCHEDULE (40 s of retries) plus the last attempt, with room
WEBHOOK_RETRIES = 2            # the event source mapping's retries of a record still undelivered
WEBHOOK_PARALLEL_BATCHES = 5


def webhook_resources() -> dict:
    """DynamoDB Streams on pending_replies → a delivery function with its own least-privilege
    role → the stage's webhook; a record still undelivered after the retries goes to an SQS
    dead-letter queue.  The function never runs inside the player's `reply` request."""
    current, _ = tables.CFN_TABLES["current"]
    log_table, _ = tables.CFN_TABLES["log"]
    pending, _ = tables.CFN_TABLES["pending_replies"]
    env = {var: ref(resource_id) for resource_id, var in (tables.CFN_TABLES["current"], tables.CFN_TABLES["log"])}
    env.update({names.DEPLOYMENT_STAGE: ref("StageName"), names.RETENTION_DAYS: ref("RetentionDays"),
                names.STACK: ref("AWS::StackName")})
    log_group = "WebhookDeliveryLogGroup"
    return {
        WEBHOOK_QUEUE: {
            "Type": "AWS::SQS::Queue",
            "Properties": {"MessageRetentionPeriod": 1209600, "SqsManagedSseEnabled": True}},
        log_group: {
            "Type": "AWS::Logs::LogGroup", "DeletionPolicy": "Delete", "UpdateReplacePolicy": "Delete",
            "Properties": {"LogGroupName": sub(f"/aws/lambda/${{{WEBHOOK_FUNCTION}}}"),
                           "RetentionInDays": ref("LogRetentionDays")}},
        WEBHOOK_ROLE: {
            "Type": "AWS::IAM::Role",
            "Properties": {
                "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": [{
                    "Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
                    "Action": "sts:AssumeRole"}]},
                "Policies": [{"PolicyName": "butai-webhook-delivery", "PolicyDocument": {
                    "Version": "2012-10-17", "Statement": [
                        # The stage item holds the webhook's URL and secret.
                        {"Sid": "ReadWebhook", "Effect": "Allow", "Action": ["dynamodb:GetItem"],
                         "Resource": [getatt(current, "Arn")]},
                        # Delivery records (d#<reply id>) in the log table.
                        {"Sid": "RecordDeliveries", "Effect": "Allow", "Action": ["dynamodb:PutItem"],
                         "Resource": [getatt(log_table, "Arn")]},
                        {"Sid": "ReadReplyStream", "Effect": "Allow",
                         "Action": ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
                         "Resource": [getatt(pending, "StreamArn")]},
                        # ListStreams has no resource type: AWS requires "*".
                        {"Sid": "ListStreams", "Effect": "Allow", "Action": ["dynamodb:ListStreams"],
                         "Resource": "*"},
                        {"Sid": "DeadLetters", "Effect": "Allow", "Action": ["sqs:SendMessage"],
                         "Resource": [getatt(WEBHOOK_QUEUE, "Arn")]},
                    ]}}],
            }},
        # Apart from the role: the log group's name needs the function's, and the function needs the role.
        "WebhookDeliveryLogsPolicy": {
            "Type": "AWS::IAM::Policy",
            "Properties": {
                "PolicyName": "butai-webhook-delivery-logs",
                "Roles": [ref(WEBHOOK_ROLE)],
                "PolicyDocument": {"Version": "2012-10-17", "Statement": [{
                    "Sid": "FunctionLogs", "Effect": "Allow",
                    "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                    "Resource": [getatt(log_group, "Arn")]}]}}},
        WEBHOOK_FUNCTION: {
            "Type": "AWS::Serverless::Function",
            "Properties": {
                "CodeUri": "./deployment.zip", "Handler": WEBHOOK_HANDLER, "Runtime": LAMBDA_RUNTIME,
                "Architectures": [lambda_runtime.ARCHITECTURE],
                "MemorySize": 256, "Timeout": WEBHOOK_TIMEOUT_S, "Role": getatt(WEBHOOK_ROLE, "Arn"),
                "Environment": {"Variables": env},
                # A cap, so that deliveries (fanned out per shard) never take the account's concurrency.
                "ReservedConcurrentExecutions": {"Fn::If": [WEBHOOK_RESERVED, ref("WebhookReservedConcurrency"),
                                                            ref("AWS::NoValue")]}}},
        "WebhookDeliveryEventSource": {
            "Type": "AWS::Lambda::EventSourceMapping",
            "Properties": {
                "EventSourceArn": getatt(pending, "StreamArn"),
                "FunctionName": ref(WEBHOOK_FUNCTION),
                "StartingPosition": "LATEST",
                "BatchSize": 10,
                "MaximumBatchingWindowInSeconds": 0,
                # Up to 5 batches per shard at once (records of one stage stay in order), as many as the
                # function's default concurrency cap.
                "ParallelizationFactor": WEBHOOK_PARALLEL_BATCHES,
                "FilterCriteria": {"Filters": [{"Pattern": json.dumps({"eventName": ["INSERT"]})}]},
                "FunctionResponseTypes": ["ReportBatchItemFailures"],
                "BisectBatchOnFunctionError": True,
                "MaximumRetryAttempts": WEBHOOK_RETRIES,
                "MaximumRecordAgeInSeconds": 3600,
                "DestinationConfig": {"OnFailure": {"Destination": getatt(WEBHOOK_QUEUE, "Arn")}},
            }},
    }


# ---------------------------------------------------------------- push to the page

PUSH_MESSAGE_ROLE = "PushMessageRole"
PUSH_FUNCTION = "PushFanOutFunction"
PUSH_ROLE = "PushFanOutRole"
PUSH_HANDLER = "chalicelib.push.stream.handler"
PUSH_TIMEOUT_S = 60
PUSH_RETRIES = 2                 # the event source mapping's retries of a stage's change that failed
PUSH_MAX_RECORD_AGE_S = 300      # an older change is stale: a page reconnecting catches up with a GET


PUSH_ACCESS_LOG_GROUP = "PushAccessLogGroup"
# One JSON line per socket event: the connection, what happened (CONNECT, MESSAGE, DISCONNECT), the route,
# the status; never a message's body (a subscription carries the stage key).
PUSH_ACCESS_LOG_FORMAT = json.dumps({
    "stack": "${AWS::StackName}", "requestId": "$context.requestId", "connectionId": "$context.connectionId",
    "eventType": "$context.eventType", "routeKey": "$context.routeKey", "ip": "$context.identity.sourceIp",
    "time": "$context.requestTimeEpoch", "status": "$context.status",
    "integrationStatus": "$context.integrationStatus", "error": "$context.error.messageString"},
    separators=(",", ":"))


def manage_connections() -> dict:
    """Post to a page's socket and close it, on this stack's WebSocket API only."""
    return {"Sid": "PushToPages", "Effect": "Allow", "Action": ["execute-api:ManageConnections"],
            "Resource": [arn("execute-api", f"${{{WEBSOCKET_API}}}/{API_GATEWAY_STAGE}/{method}/@connections/*")
                         for method in ("POST", "DELETE")]}


def lambda_role(name: str, statements: list[dict]) -> dict:
    return {"Type": "AWS::IAM::Role", "Properties": {
        "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]},
        "Policies": [{"PolicyName": name, "PolicyDocument": {"Version": "2012-10-17", "Statement": statements}}]}}


def function_logs(function: str, role: str, policy_name: str) -> dict:
    """A function's log group with a retention, and the right to write there only."""
    group = f"{function}LogGroup"
    return {
        group: {"Type": "AWS::Logs::LogGroup", "DeletionPolicy": "Delete", "UpdateReplacePolicy": "Delete",
                "Properties": {"LogGroupName": sub(f"/aws/lambda/${{{function}}}"),
                               "RetentionInDays": ref("LogRetentionDays")}},
        f"{function}LogsPolicy": {"Type": "AWS::IAM::Policy", "Properties": {
            "PolicyName": policy_name, "Roles": [ref(role)],
            "PolicyDocument": {"Version": "2012-10-17", "Statement": [{
                "Sid": "FunctionLogs", "Effect": "Allow", "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                "Resource": [getatt(group, "Arn")]}]}}},
    }


def push_environment() -> dict:
    env = {var: ref(resource_id) for resource_id, var in (tables.CFN_TABLES["current"], tables.CFN_TABLES["log"])}
    env.update({names.DEPLOYMENT_STAGE: ref("StageName"), names.BUCKET: ref("AssetsBucket"),
                names.PUSH_ENDPOINT: sub(PUSH_ENDPOINT), names.STACK: ref("AWS::StackName")})
    return env


def push_resources() -> dict:
    """Pages subscribe over the WebSocket API (chalice's message function, here with its own role), and
    DynamoDB Streams on `current` → a fan-out function → every subscribed page of the changed stage.
    Neither runs inside a player's or an agent's request."""
    current, _ = tables.CFN_TABLES["current"]
    log_table, _ = tables.CFN_TABLES["log"]
    return {
        # The subscription: read the stage (the key check), write the subscription, answer on the socket.
        WEBSOCKET_FUNCTION: {"Properties": {
            # chalice writes its own interpreter's version: the package's runtime, as for the API function.
            "Runtime": LAMBDA_RUNTIME, "Architectures": [lambda_runtime.ARCHITECTURE],
            "MemorySize": 256, "Role": getatt(PUSH_MESSAGE_ROLE, "Arn"),
            "Environment": {"Variables": push_environment()},
            "ReservedConcurrentExecutions": {"Fn::If": [WEBSOCKET_RESERVED, ref("WebsocketReservedConcurrency"),
                                                        ref("AWS::NoValue")]}}},
        PUSH_MESSAGE_ROLE: lambda_role("butai-push-subscribe", [
            {"Sid": "ReadStage", "Effect": "Allow", "Action": ["dynamodb:GetItem"],
             "Resource": [getatt(current, "Arn")]},
            {"Sid": "Subscribe", "Effect": "Allow", "Action": ["dynamodb:PutItem"],
             "Resource": [getatt(log_table, "Arn")]},
            manage_connections()]),
        **function_logs(WEBSOCKET_FUNCTION, PUSH_MESSAGE_ROLE, "butai-push-subscribe-logs"),
        # API Gateway's throttling of the socket's messages, with the REST API's limits.
        WEBSOCKET_STAGE: {"Properties": {
            "DefaultRouteSettings": {"ThrottlingRateLimit": ref("ApiThrottleRateLimit"),
                                     "ThrottlingBurstLimit": ref("ApiThrottleBurstLimit")},
            # The sockets' own access log (connects, messages, their status), as the REST API's.
            "AccessLogSettings": when(API_LOGS, {"DestinationArn": getatt(PUSH_ACCESS_LOG_GROUP, "Arn"),
                                                 "Format": sub(PUSH_ACCESS_LOG_FORMAT)}),
            "Description": logging_role_after("butai ${AWS::StackName}: the pages' push sockets")}},
        PUSH_ACCESS_LOG_GROUP: {
            "Condition": API_LOGS, "Type": "AWS::Logs::LogGroup", "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
            "Properties": {"LogGroupName": sub("/butai/${AWS::StackName}/push-access"),
                           "RetentionInDays": ref("AccessLogRetentionDays")}},
        PUSH_ROLE: lambda_role("butai-push-fan-out", [
            # The subscriptions and the log tail of a view; a gone socket's subscription is deleted.
            {"Sid": "SubscriptionsAndLog", "Effect": "Allow", "Action": ["dynamodb:Query", "dynamodb:DeleteItem"],
             "Resource": [getatt(log_table, "Arn")]},
            # Character names and voices in a view.
            {"Sid": "Characters", "Effect": "Allow", "Action": ["s3:GetObject"],
             "Resource": [bucket_objects(f"{CHARACTER_PREFIX}*")]},
            {"Sid": "ReadStageStream", "Effect": "Allow",
             "Action": ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
             "Resource": [getatt(current, "StreamArn")]},
            # ListStreams has no resource type: AWS requires "*".
            {"Sid": "ListStreams", "Effect": "Allow", "Action": ["dynamodb:ListStreams"], "Resource": "*"},
            manage_connections()]),
        **function_logs(PUSH_FUNCTION, PUSH_ROLE, "butai-push-fan-out-logs"),
        PUSH_FUNCTION: {
            "Type": "AWS::Serverless::Function",
            "Properties": {
                "CodeUri": "./deployment.zip", "Handler": PUSH_HANDLER, "Runtime": LAMBDA_RUNTIME,
                "Architectures": [lambda_runtime.ARCHITECTURE], "MemorySize": 256, "Timeout": PUSH_TIMEOUT_S,
                "Role": getatt(PUSH_ROLE, "Arn"), "Environment": {"Variables": push_environment()},
                "ReservedConcurrentExecutions": {"Fn::If": [PUSH_RESERVED, ref("PushFanOutReservedConcurrency"),
                                                            ref("AWS::NoValue")]}}},
        "PushFanOutEventSource": {
            "Type": "AWS::Lambda::EventSourceMapping",
            "Properties": {
                "EventSourceArn": getatt(current, "StreamArn"),
                "FunctionName": ref(PUSH_FUNCTION),
                "StartingPosition": "LATEST",
                # One fan-out per stage per batch: a busy stage's changes in one batch cost one view.
                "BatchSize": 100,
                "MaximumBatchingWindowInSeconds": 0,
                # Up to 10 batches per shard at once (one stage's changes stay in order).
                "ParallelizationFactor": 10,
                # A new stage (INSERT) has no pages yet; a REMOVE shows nothing.
                "FilterCriteria": {"Filters": [{"Pattern": json.dumps({"eventName": ["MODIFY"]})}]},
                "FunctionResponseTypes": ["ReportBatchItemFailures"],
                "BisectBatchOnFunctionError": True,
                "MaximumRetryAttempts": PUSH_RETRIES,
                "MaximumRecordAgeInSeconds": PUSH_MAX_RECORD_AGE_S,
            }},
    }


# ---------------------------------------------------------------- the stage's own voice

VOICE_FUNCTION = "VoiceFunction"
VOICE_ROLE = "VoiceRole"
VOICE_QUEUE = "VoiceDeadLetterQueue"
VOICE_REPOSITORY = "VoiceRepository"
VOICE_EVENT_SOURCE = "VoiceEventSource"
# The image's CMD (infra/voice/Dockerfile), named here too so the template says what runs.
VOICE_HANDLER = "butai_tools.voice.cloud.handler"
VOICE_MEMORY_MB = 10240          # the default of VoiceMemorySize: 6 vCPU (the rendering is CPU-bound)
VOICE_TIMEOUT_S = 120            # a batch of 10 lines at ~1-2.5 s each, and a cold start, with room
VOICE_BATCH = 10
VOICE_RETRIES = 3                # the event source mapping's retries of a record that failed
VOICE_PARALLEL_BATCHES = 10      # per stream shard; one stage's records stay in order (one partition key)
# The page reads a pending line with the browser's voice after 12 s (static/voice.js): a record this old is
# given up (to the dead-letter queue), so that a function that fell behind catches up with lines being said.
VOICE_MAX_RECORD_AGE_S = 300
# What the stream filter passes: writes whose new image names lines to voice (chalicelib/stage/voices.py).
VOICE_FILTER = {"dynamodb": {"NewImage": {"voice_wanted": {"S": [{"exists": True}]}}}}
# An image of a private ECR repository (Lambda takes no other), by tag or digest; or "" for no voice.
VOICE_IMAGE_PATTERN = (r"^([0-9]{12}\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/[a-z0-9._/-]+"
                       r"(:[A-Za-z0-9._-]{1,128}|@sha256:[0-9a-f]{64}))?$")
# What the worker writes to the bucket: the line's MP3 (put_audio, audio/) and the sentences it keeps
# (BucketSentences), nothing else; it never reads audio back, nor the scenarios' indexes of voices/lines/.
VOICE_SENTENCES_PREFIX = SENTENCE_PREFIX


def voice_environment() -> dict:
    """What Settings.from_env(models=False) needs for the worker: the two tables it writes, the bucket.
    BUTAI_ASSETS_URL stays unset as on the API's functions: the audio URL stored on a line is relative
    (/audio/…), served by the distribution that serves the page (and an absolute one would differ from the
    URLs the API writes)."""
    env = {var: ref(resource_id) for resource_id, var in (tables.CFN_TABLES["current"], tables.CFN_TABLES["log"])}
    env.update({names.BUCKET: ref("AssetsBucket"), names.DEPLOYMENT_STAGE: ref("StageName"),
                names.STACK: ref("AWS::StackName")})
    return env


def voice_resources() -> dict:
    """The `current` table's stream → the voice function (a container image: the model and its front end
    never reach the API's zip) → each line's MP3 in the bucket and on the stage, whose own stream record the
    push fan-out (the stream's other reader) sends to the pages.  Everything but the repository exists only
    with VoiceImageUri (the image is pushed before the voice is switched on, as for the classifier)."""
    current, _ = tables.CFN_TABLES["current"]
    log_table, _ = tables.CFN_TABLES["log"]
    on = {"Condition": VOICE_CONDITION}
    logs = function_logs(VOICE_FUNCTION, VOICE_ROLE, "butai-voice-logs")
    return {
        # Lambda pulls a function's image with its own service principal, for this account's functions only
        # (the function's ARN is not known before the function, which needs the image).
        VOICE_REPOSITORY: image_repository(RepositoryPolicyText={"Version": "2012-10-17", "Statement": [{
            "Sid": "LambdaPullsThisAccountsFunctions", "Effect": "Allow",
            "Principal": {"Service": "lambda.amazonaws.com"},
            "Action": ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"],
            "Condition": {"StringLike": {"aws:sourceArn": arn("lambda", "function:*")}}}]}),
        VOICE_QUEUE: {
            **on, "Type": "AWS::SQS::Queue",
            "Properties": {"MessageRetentionPeriod": 1209600, "SqsManagedSseEnabled": True}},
        VOICE_ROLE: {**on, **lambda_role("butai-voice", [
            # The stage item (its current line, `voiced`) and the log entry, in one transaction (authorised
            # per action: Update → UpdateItem); the turn's debug record in the log table (GetItem, UpdateItem).
            {"Sid": "StoreVoices", "Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:UpdateItem"],
             "Resource": [getatt(current, "Arn"), getatt(log_table, "Arn")]},
            {"Sid": "PutAudio", "Effect": "Allow", "Action": ["s3:PutObject"],
             "Resource": [bucket_objects(f"{AUDIO_PREFIX}*")]},
            {"Sid": "KeepSentences", "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"],
             "Resource": [bucket_objects(f"{VOICE_SENTENCES_PREFIX}*")]},
            {"Sid": "ReadStageStream", "Effect": "Allow",
             "Action": ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
             "Resource": [getatt(current, "StreamArn")]},
            # ListStreams has no resource type: AWS requires "*".
            {"Sid": "ListStreams", "Effect": "Allow", "Action": ["dynamodb:ListStreams"], "Resource": "*"},
            {"Sid": "DeadLetters", "Effect": "Allow", "Action": ["sqs:SendMessage"],
             "Resource": [getatt(VOICE_QUEUE, "Arn")]},
        ])},
        **{logical: {**on, **resource} for logical, resource in logs.items()},
        # A plain Lambda function, not SAM's: an image has no CodeUri, Runtime or Handler to package.
        VOICE_FUNCTION: {
            **on, "Type": "AWS::Lambda::Function",
            "Properties": {
                "PackageType": "Image", "Code": {"ImageUri": ref("VoiceImageUri")},
                "ImageConfig": {"Command": [VOICE_HANDLER]},
                # The image is built for it: docker build --platform linux/amd64 (docs/deploy.md).
                "Architectures": [lambda_runtime.ARCHITECTURE],
                "MemorySize": ref("VoiceMemorySize"), "Timeout": VOICE_TIMEOUT_S,
                "Role": getatt(VOICE_ROLE, "Arn"), "Environment": {"Variables": voice_environment()},
                "ReservedConcurrentExecutions": {"Fn::If": [VOICE_RESERVED, ref("VoiceReservedConcurrency"),
                                                            ref("AWS::NoValue")]}}},
        VOICE_EVENT_SOURCE: {
            **on, "Type": "AWS::Lambda::EventSourceMapping",
            "Properties": {
                "EventSourceArn": getatt(current, "StreamArn"),
                "FunctionName": ref(VOICE_FUNCTION),
                "StartingPosition": "LATEST",
                "BatchSize": VOICE_BATCH,
                "MaximumBatchingWindowInSeconds": 0,
                "ParallelizationFactor": VOICE_PARALLEL_BATCHES,
                # Only writes that name lines to voice; the function renders the ones the old image did not name.
                "FilterCriteria": {"Filters": [{"Pattern": json.dumps(VOICE_FILTER)}]},
                "FunctionResponseTypes": ["ReportBatchItemFailures"],
                "BisectBatchOnFunctionError": True,
                "MaximumRetryAttempts": VOICE_RETRIES,
                "MaximumRecordAgeInSeconds": VOICE_MAX_RECORD_AGE_S,
                "DestinationConfig": {"OnFailure": {"Destination": getatt(VOICE_QUEUE, "Arn")}},
            }},
    }


# ---------------------------------------------------------------- outputs

def outputs() -> dict:
    out = {
        "PageURL": {"Description": "The stage page (BUTAI_PAGE_URL); also the API origin for agents",
                    "Value": sub("https://${Distribution.DomainName}/")},
        "DistributionId": {"Value": ref("Distribution")},
        "AssetsBucketName": {"Description": names.BUCKET, "Value": ref("AssetsBucket")},
        "ClassifierRepositoryUri": {"Value": getatt("ClassifierRepository", "RepositoryUri")},
        "WebhookDeadLetterQueueUrl": {"Description": "Webhook deliveries that failed every retry",
                                      "Value": ref(WEBHOOK_QUEUE)},
        "ClassifierEndpointName": {"Condition": CLASSIFIER_CONDITION,
                                   "Value": getatt("ClassifierEndpoint", "EndpointName")},
        "VoiceRepositoryUri": {"Description": "Where the voice's image is pushed (VoiceImageUri)",
                               "Value": getatt(VOICE_REPOSITORY, "RepositoryUri")},
        "VoiceDeadLetterQueueUrl": {"Condition": VOICE_CONDITION,
                                    "Description": "Stream records the voice function gave up on (their lines "
                                                   "stay without audio)",
                                    "Value": ref(VOICE_QUEUE)},
    }
    for resource_id, var in tables.CFN_TABLES.values():
        out[f"{resource_id}Name"] = {"Description": var, "Value": ref(resource_id)}
    return out


# ---------------------------------------------------------------- API Gateway → the alias

_FUNCTION_ARN = f"${{{FUNCTION}.Arn}}"
_TARGET = "Target"


def route_api_to_alias(template: dict) -> int:
    """Points each of the packaged template's API Gateway integrations, and API Gateway's permission to
    invoke, at the API function's alias; returns the integrations changed.

    Chalice writes the unqualified function into every route of its OpenAPI body, which a merged
    template cannot reach route by route, so `infra/package.sh` runs this on chalice's output.  Called
    unqualified, the function would run `$LATEST`, which SnapStart never snapshots.  SAM resolves
    ``{"Ref": "APIHandler.Alias"}`` to the alias AutoPublishAlias makes (cfn-lint reads that form; it
    does not know ``${APIHandler.Alias}`` inside a Sub string)."""
    resources = template["Resources"]
    alias = ref(f"{FUNCTION}.Alias")
    changed = 0

    def point(node):
        nonlocal changed
        if isinstance(node, dict):
            text = node.get("Fn::Sub")
            if len(node) == 1 and isinstance(text, str) and _FUNCTION_ARN in text:
                changed += 1
                return {"Fn::Sub": [text.replace(_FUNCTION_ARN, f"${{{_TARGET}}}"), {_TARGET: alias}]}
            return {k: point(v) for k, v in node.items()}
        if isinstance(node, list):
            return [point(v) for v in node]
        return node

    api = resources[REST_API]["Properties"]
    api["DefinitionBody"] = point(api["DefinitionBody"])
    if not changed or _FUNCTION_ARN in json.dumps(api):
        raise ValueError(f"{REST_API}'s integrations are not all of chalice's form (Fn::Sub of {_FUNCTION_ARN})")
    resources[PERMISSION]["Properties"]["FunctionName"] = alias
    return changed


# What `aws cloudformation package` writes for the code (an S3 URI); SAM's transform wants one.
UPLOADED_CODE = "s3://artifacts/deployment.zip"


def sam_transform(template: dict) -> dict:
    """The template as CloudFormation will have it after the SAM transform (aws-sam-translator, the same
    library CloudFormation runs): what the stack really creates, for cfn-lint to read.  Needs no account:
    the code URI is a stand-in and no managed policy is looked up (the template names none)."""
    import copy
    import os

    from samtranslator.translator.transform import transform
    template = copy.deepcopy(template)
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::Serverless::Function":
            resource["Properties"]["CodeUri"] = UPLOADED_CODE

    class NoManagedPolicies:
        def load(self):
            return {}

    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")       # the partition, for ARNs SAM writes
    return transform(template, {}, NoManagedPolicies())


# Stack outputs → the variables the operator CLI (`butai … --aws`) reads.
OUTPUT_ENV = {"PageURL": names.PAGE_URL, "AssetsBucketName": names.BUCKET,
              **{f"{resource_id}Name": var for resource_id, var in tables.CFN_TABLES.values()}}


def build() -> dict:
    # Imported here: monitoring reads this module's names.
    from butai_tools import monitoring
    resources = tables.cloudformation_tables()
    resources.update(function_resources())
    resources.update(api_resources())
    resources.update(web_resources())
    resources.update(per_key_limit())
    resources.update(classifier_resources())
    resources.update(webhook_resources())
    resources.update(long_poll_resources())
    resources.update(push_resources())
    resources.update(voice_resources())
    resources.update(monitoring.resources())
    return {"Parameters": parameters(), "Conditions": {**conditions(), **monitoring.conditions()}, "Rules": rules(),
            "Resources": resources, "Outputs": {**outputs(), **monitoring.outputs()}}


def render() -> str:
    return json.dumps(build(), ensure_ascii=False, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        if not RESOURCES.exists() or RESOURCES.read_text(encoding="utf-8") != render():
            sys.stderr.write(f"{RESOURCES} is stale: run `python -m butai_tools.infra`\n")
            return 1
        return 0
    if len(args) == 2 and args[0] == "--route-to-alias":
        path = Path(args[1])
        template = json.loads(path.read_text(encoding="utf-8"))
        changed = route_api_to_alias(template)
        path.write_text(json.dumps(template, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        sys.stdout.write(f"{changed} API Gateway integrations and the invoke permission now call "
                         f"{FUNCTION}'s alias `{API_ALIAS}`\n")
        return 0
    if len(args) == 3 and args[0] == "--transform":
        source, target = Path(args[1]), Path(args[2])
        transformed = sam_transform(json.loads(source.read_text(encoding="utf-8")))
        target.write_text(json.dumps(transformed, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        sys.stdout.write(f"SAM transform: {len(transformed['Resources'])} resources in {target}\n")
        return 0
    if args == ["--output-env"]:
        sys.stdout.write(json.dumps(OUTPUT_ENV) + "\n")
        return 0
    if args:
        sys.stderr.write("usage: python -m butai_tools.infra [--check | --output-env | --route-to-alias SAM_JSON"
                         " | --transform SAM_JSON OUT_JSON]\n")
        return 2
    RESOURCES.parent.mkdir(parents=True, exist_ok=True)
    RESOURCES.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {RESOURCES}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
