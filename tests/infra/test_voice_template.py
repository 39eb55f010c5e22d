"""The stage's own voice in the merge template (docs/deploy.md, "The stage's own voice"), checked without AWS:
with VoiceImageUri empty (the default) the stack has no voice function and nothing that names one; with an
image, a container-image function on the `current` table's stream, with the filter, the variables the worker
reads, a role that allows what the worker calls and nothing else, and BUTAI_VOICE on the API's functions.
What `chalice package` and cfn-lint make of it is checked in test_package.py."""
import fnmatch
import json
import re

import numpy as np
import pytest

from butai_tools import infra, lambda_runtime, monitoring
from butai_tools.voice import cloud
from chalicelib import env as names
from chalicelib import tables
from chalicelib.config import Settings
from tests.infra.test_template import statements

CONDITION = infra.VOICE_CONDITION
# Everything of the voice that exists only with its image (the repository is there before, to push to).
VOICE_RESOURCES = {infra.VOICE_FUNCTION, infra.VOICE_ROLE, infra.VOICE_QUEUE, infra.VOICE_EVENT_SOURCE,
                   f"{infra.VOICE_FUNCTION}LogGroup", f"{infra.VOICE_FUNCTION}LogsPolicy",
                   f"{infra.VOICE_FUNCTION}ErrorsAlarm", f"{infra.VOICE_FUNCTION}ThrottlesAlarm",
                   f"{infra.VOICE_FUNCTION}IteratorAgeAlarm", "VoiceDeadLettersAlarm"}
API_FUNCTIONS = (infra.FUNCTION, infra.LONG_POLL_FUNCTION)


@pytest.fixture(scope="module")
def template():
    return infra.build()


@pytest.fixture(scope="module")
def resources(template):
    return template["Resources"]


def resolve(node, on: bool):
    """The template's value with VoiceEnabled decided: Fn::If on it picks a branch; AWS::NoValue drops."""
    if isinstance(node, dict):
        if "Fn::If" in node and node["Fn::If"][0] == CONDITION:
            return resolve(node["Fn::If"][1 if on else 2], on)
        out = {}
        for key, value in node.items():
            value = resolve(value, on)
            if value != {"Ref": "AWS::NoValue"}:
                out[key] = value
        return out
    if isinstance(node, list):
        return [v for v in (resolve(v, on) for v in node) if v != {"Ref": "AWS::NoValue"}]
    return node


def stack(template, on: bool) -> dict:
    """What the stack holds with the voice on or off: resources and outputs of that condition only."""
    kept = {}
    for section in ("Resources", "Outputs"):
        kept[section] = {k: resolve(v, on) for k, v in template[section].items()
                         if on or v.get("Condition") != CONDITION}
    return kept


def names_referenced(node) -> set[str]:
    """Every logical id a Ref, GetAtt or Sub names."""
    found: set[str] = set()
    if isinstance(node, dict):
        if "Ref" in node:
            found.add(node["Ref"].split(".")[0])
        if "Fn::GetAtt" in node:
            found.add(node["Fn::GetAtt"][0])
        if "Fn::Sub" in node:
            text = node["Fn::Sub"] if isinstance(node["Fn::Sub"], str) else node["Fn::Sub"][0]
            local = set(node["Fn::Sub"][1]) if isinstance(node["Fn::Sub"], list) else set()
            found |= {n.split(".")[0] for n in re.findall(r"\$\{([^}!]+)\}", text)} - local
        for value in node.values():
            found |= names_referenced(value)
    elif isinstance(node, list):
        for value in node:
            found |= names_referenced(value)
    return found


# ---------------------------------------------------------------- off by default

def test_without_an_image_the_stack_has_no_voice_and_nothing_names_one(template, resources):
    parameter = template["Parameters"]["VoiceImageUri"]
    assert parameter["Default"] == "" and re.fullmatch(parameter["AllowedPattern"], "")
    assert template["Conditions"][CONDITION] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "VoiceImageUri"}, ""]}]}
    assert {k for k, r in resources.items() if r.get("Condition") == CONDITION} == VOICE_RESOURCES
    assert {k for k in resources if "Voice" in k} == VOICE_RESOURCES | {infra.VOICE_REPOSITORY}

    off = stack(template, on=False)
    assert not [k for k in off["Resources"] if k in VOICE_RESOURCES]
    # Nothing left names a resource the condition took away (the dashboard, the API's variables, outputs).
    gone = VOICE_RESOURCES
    for section in ("Resources", "Outputs"):
        for logical, value in off[section].items():
            assert not names_referenced(value) & gone, (section, logical)
    for function in API_FUNCTIONS:
        assert names.VOICE not in off["Resources"][function]["Properties"]["Environment"]["Variables"]
    assert "VoiceDeadLetterQueueUrl" not in off["Outputs"]


def test_with_an_image_every_voice_resource_is_there_and_names_only_what_exists(template):
    on = stack(template, on=True)
    assert VOICE_RESOURCES <= set(on["Resources"])
    known = set(on["Resources"]) | set(template["Parameters"]) | {
        f"{infra.FUNCTION}", f"{infra.REST_API}", infra.WEBSOCKET_API, infra.FUNCTION_ROLE, infra.WEBSOCKET_STAGE}
    for logical in VOICE_RESOURCES:
        missing = {n for n in names_referenced(on["Resources"][logical]) if not n.startswith("AWS::")} - known
        assert not missing, (logical, missing)
    for function in API_FUNCTIONS:
        assert on["Resources"][function]["Properties"]["Environment"]["Variables"][names.VOICE] == "1"


def test_the_api_functions_mark_lines_for_the_voice_only_when_it_is_there(resources):
    for function in API_FUNCTIONS:
        variable = resources[function]["Properties"]["Environment"]["Variables"][names.VOICE]
        assert variable == {"Fn::If": [CONDITION, "1", {"Ref": "AWS::NoValue"}]}
        assert Settings.from_env({names.VOICE: "1"}, models=False).voice is True
    # The stream functions never speak: no variable to read.
    for function in (infra.WEBHOOK_FUNCTION, infra.PUSH_FUNCTION, infra.WEBSOCKET_FUNCTION):
        assert names.VOICE not in resources[function]["Properties"]["Environment"]["Variables"]


def test_the_image_parameter_takes_an_ecr_image_only():
    pattern = infra.parameters()["VoiceImageUri"]["AllowedPattern"]
    repo = "123456789012.dkr.ecr.ap-northeast-1.amazonaws.com/butai-prod-voicerepository-abcdef1234"
    for good in (f"{repo}:v1", f"{repo}:2026-05-01.3", f"{repo}@sha256:{'0' * 64}", ""):
        assert re.fullmatch(pattern, good), good
    for bad in (repo, "public.ecr.aws/lambda/python:3.12", "butai-voice:latest", f"{repo}:v1 "):
        assert not re.fullmatch(pattern, bad), bad


# ---------------------------------------------------------------- the function and its stream

def test_the_function_is_an_image_running_the_cloud_handler(template, resources):
    function = resources[infra.VOICE_FUNCTION]
    assert function["Type"] == "AWS::Lambda::Function"      # not SAM's: an image has no CodeUri to package
    props = function["Properties"]
    assert props["PackageType"] == "Image" and props["Code"] == {"ImageUri": {"Ref": "VoiceImageUri"}}
    assert "Runtime" not in props and "Handler" not in props
    assert props["ImageConfig"] == {"Command": [infra.VOICE_HANDLER]}
    module, name = infra.VOICE_HANDLER.rsplit(".", 1)
    assert f"{cloud.__name__}.{cloud.handler.__name__}" == infra.VOICE_HANDLER and module == cloud.__name__
    dockerfile = (infra.ROOT / "infra" / "voice" / "Dockerfile").read_text(encoding="utf-8")
    assert f'CMD ["{infra.VOICE_HANDLER}"]' in dockerfile
    assert props["Architectures"] == [lambda_runtime.ARCHITECTURE] == ["x86_64"]
    memory = template["Parameters"]["VoiceMemorySize"]
    assert props["MemorySize"] == {"Ref": "VoiceMemorySize"} and memory["Default"] == 10240
    assert memory["MaxValue"] == 10240 and props["Timeout"] == 120
    assert props["Role"] == {"Fn::GetAtt": [infra.VOICE_ROLE, "Arn"]}
    # Reserved concurrency as for every other function: a parameter, unset by default.
    assert props["ReservedConcurrentExecutions"] == {"Fn::If": [infra.VOICE_RESERVED, {"Ref": "VoiceReservedConcurrency"},
                                                                {"Ref": "AWS::NoValue"}]}
    assert template["Conditions"][infra.VOICE_RESERVED] == infra.not_zero("VoiceReservedConcurrency")
    assert template["Parameters"]["VoiceReservedConcurrency"]["Default"] == 0


def test_the_function_gets_the_variables_the_worker_reads(resources):
    variables = resources[infra.VOICE_FUNCTION]["Properties"]["Environment"]["Variables"]
    current, current_var = tables.CFN_TABLES["current"]
    log_table, log_var = tables.CFN_TABLES["log"]
    assert variables == {current_var: {"Ref": current}, log_var: {"Ref": log_table},
                         names.BUCKET: {"Ref": "AssetsBucket"}, names.DEPLOYMENT_STAGE: {"Ref": "StageName"},
                         names.STACK: {"Ref": "AWS::StackName"}}
    # The stored audio URL is relative (/audio/…), as the API's functions write theirs.
    assert names.ASSETS_URL not in variables
    assert names.ASSETS_URL not in resources[infra.FUNCTION]["Properties"]["Environment"]["Variables"]
    settings = Settings.from_env({current_var: "t-current", log_var: "t-log", names.BUCKET: "b"}, models=False)
    assert (settings.table_current, settings.table_log, settings.bucket, settings.assets_base_url) == \
        ("t-current", "t-log", "b", "")


def test_the_stream_feeds_only_writes_that_name_lines_and_failures_go_to_a_queue(resources):
    mapping = resources[infra.VOICE_EVENT_SOURCE]
    assert mapping["Type"] == "AWS::Lambda::EventSourceMapping"
    props = mapping["Properties"]
    assert props["EventSourceArn"] == {"Fn::GetAtt": ["CurrentTable", "StreamArn"]}
    assert props["FunctionName"] == {"Ref": infra.VOICE_FUNCTION}
    assert props["StartingPosition"] == "LATEST" and props["BatchSize"] == 10
    assert props["MaximumRetryAttempts"] == 3 and props["BisectBatchOnFunctionError"] is True
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["DestinationConfig"] == {"OnFailure": {"Destination": {"Fn::GetAtt": [infra.VOICE_QUEUE, "Arn"]}}}
    assert props["MaximumRecordAgeInSeconds"] >= 60
    (only,) = props["FilterCriteria"]["Filters"]
    assert json.loads(only["Pattern"]) == {"dynamodb": {"NewImage": {"voice_wanted": {"S": [{"exists": True}]}}}}
    queue = resources[infra.VOICE_QUEUE]["Properties"]
    assert queue["SqsManagedSseEnabled"] is True and queue["MessageRetentionPeriod"] == 1209600
    # The stream has two readers, the most DynamoDB Streams serves a shard without throttling them.
    readers = [k for k, r in resources.items() if r.get("Type") == "AWS::Lambda::EventSourceMapping"
               and r["Properties"]["EventSourceArn"] == {"Fn::GetAtt": ["CurrentTable", "StreamArn"]}]
    assert sorted(readers) == ["PushFanOutEventSource", infra.VOICE_EVENT_SOURCE]


def test_the_filter_passes_what_the_function_reads():
    # The attribute the filter names is the one the stage writes and the handler reads from the new image.
    job = {"stage": "s", "entry": "e1", "character": "hiyori", "text": "はい。", "voice": "jf_alpha",
           "speed": 1.0, "created_at": "2026-01-01T00:00:00.000Z"}
    record = {"eventName": "MODIFY", "dynamodb": {"SequenceNumber": "1", "NewImage": {
        "voice_wanted": {"S": json.dumps([job])}}}}
    assert [j.entry for _, j in cloud.jobs_of([record])] == ["e1"]
    assert cloud.jobs_of([{"eventName": "MODIFY", "dynamodb": {"NewImage": {}}}]) == []
    source = (infra.ROOT / "chalicelib" / "stage" / "dynamo.py").read_text(encoding="utf-8")
    assert '"voice_wanted"' in source


# ---------------------------------------------------------------- least privilege

def role_statements(resources):
    (policy,) = resources[infra.VOICE_ROLE]["Properties"]["Policies"]
    return {s["Sid"]: s for s in statements(policy["PolicyDocument"])}


def bucket(pattern):
    return {"Fn::Join": ["", [{"Fn::GetAtt": ["AssetsBucket", "Arn"]}, f"/{pattern}"]]}


def test_the_role_allows_the_voice_s_writes_and_nothing_else(resources):
    role = resources[infra.VOICE_ROLE]["Properties"]
    assert role["AssumeRolePolicyDocument"]["Statement"] == [{
        "Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]
    arn = {"Fn::GetAtt": ["CurrentTable", "Arn"]}, {"Fn::GetAtt": ["LogTable", "Arn"]}
    assert role_statements(resources) == {
        "StoreVoices": {"Sid": "StoreVoices", "Effect": "Allow", "Action": ["dynamodb:GetItem", "dynamodb:UpdateItem"],
                        "Resource": list(arn)},
        "PutAudio": {"Sid": "PutAudio", "Effect": "Allow", "Action": ["s3:PutObject"], "Resource": [bucket("audio/*")]},
        "KeepSentences": {"Sid": "KeepSentences", "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"],
                          "Resource": [bucket("voices/sentences/*")]},
        "ReadStageStream": {"Sid": "ReadStageStream", "Effect": "Allow",
                            "Action": ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
                            "Resource": [{"Fn::GetAtt": ["CurrentTable", "StreamArn"]}]},
        "ListStreams": {"Sid": "ListStreams", "Effect": "Allow", "Action": ["dynamodb:ListStreams"], "Resource": "*"},
        "DeadLetters": {"Sid": "DeadLetters", "Effect": "Allow", "Action": ["sqs:SendMessage"],
                        "Resource": [{"Fn::GetAtt": [infra.VOICE_QUEUE, "Arn"]}]},
    }
    logs = resources[f"{infra.VOICE_FUNCTION}LogsPolicy"]["Properties"]
    assert logs["Roles"] == [{"Ref": infra.VOICE_ROLE}]
    (statement,) = statements(logs["PolicyDocument"])
    assert statement["Action"] == ["logs:CreateLogStream", "logs:PutLogEvents"]
    assert statement["Resource"] == [{"Fn::GetAtt": [f"{infra.VOICE_FUNCTION}LogGroup", "Arn"]}]
    group = resources[f"{infra.VOICE_FUNCTION}LogGroup"]["Properties"]
    assert group == {"LogGroupName": {"Fn::Sub": "/aws/lambda/${VoiceFunction}"},
                     "RetentionInDays": {"Ref": "LogRetentionDays"}}


def test_the_repository_lets_lambda_pull_for_this_account_only(template, resources):
    repository = resources[infra.VOICE_REPOSITORY]
    assert "Condition" not in repository          # the image is pushed before the voice is switched on
    props = repository["Properties"]
    assert props["ImageTagMutability"] == "IMMUTABLE" and props["EmptyOnDelete"] is True
    (statement,) = props["RepositoryPolicyText"]["Statement"]
    assert statement["Principal"] == {"Service": "lambda.amazonaws.com"}
    assert statement["Action"] == ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"]
    assert statement["Condition"] == {"StringLike": {"aws:sourceArn": {
        "Fn::Sub": "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:*"}}}
    assert template["Outputs"]["VoiceRepositoryUri"]["Value"] == {"Fn::GetAtt": [infra.VOICE_REPOSITORY,
                                                                                 "RepositoryUri"]}


class SilentEngine:
    """Stands in for Kokoro: a quarter second of silence per sentence (the policy is what is tested)."""

    def load(self):
        pass

    def sentence(self, text, spec):
        return np.zeros(6000, np.float32)


def granted(resources, settings, action: str, resource: str) -> bool:
    """Whether the voice role allows `action` on `resource` (a table name, or a bucket object key)."""
    table_ids = {settings.table_current: "CurrentTable", settings.table_log: "LogTable"}
    for statement in role_statements(resources).values():
        if action not in statement["Action"]:
            continue
        for allowed in statement["Resource"]:
            if action.startswith("dynamodb:") and allowed == {"Fn::GetAtt": [table_ids.get(resource), "Arn"]}:
                return True
            if action.startswith("s3:") and "Fn::Join" in allowed and \
                    fnmatch.fnmatchcase(resource, allowed["Fn::Join"][1][1].lstrip("/")):
                return True
    return False


def test_what_the_worker_calls_is_what_the_role_allows(resources, services, aws_settings, monkeypatch):
    # The cloud handler's own path (cloud.handle → VoiceWorker → StageService.voiced, BucketSentences) against
    # moto, a silent engine and no encoder; every AWS call it makes must be one the role allows.
    from butai_tools.voice import render
    from butai_tools.voice.render import BucketSentences, Renderer
    from butai_tools.voice.worker import VoiceWorker
    from chalicelib import aws
    from chalicelib.stage.models import SpeakRequest
    from tests.functional.test_push_cloud import stream_records
    monkeypatch.setattr(render, "to_flac", lambda pcm: b"flac" + pcm.tobytes()[:8])
    monkeypatch.setattr(render, "from_audio", lambda data: np.zeros(6000, np.float32))
    monkeypatch.setattr(render, "to_mp3", lambda pcm: b"ID3" + bytes(len(pcm) % 251))

    aws.client("dynamodb", aws_settings).update_table(   # the stream the template gives the table
        TableName=aws_settings.table_current,
        StreamSpecification={"StreamEnabled": True, "StreamViewType": tables.TABLES["current"]["stream_view"]})
    stages = services.stage
    stages.voice_on = True            # BUTAI_VOICE=1 on the API's functions: the line is named, not rendered
    created = stages.create_stage("voice-policy")
    mark = stream_records(aws_settings)[-1]["dynamodb"]["SequenceNumber"]
    line = stages.speak(created.stage_id, created.agent_key, SpeakRequest(text="はじめまして。よろしく。"))
    records = stream_records(aws_settings, after=mark)

    calls: list[tuple[str, str]] = []

    def record(model, params, **_):
        operation = model.name
        if operation == "TransactWriteItems":
            kinds = {"Update": "UpdateItem", "Put": "PutItem", "Delete": "DeleteItem",
                     "ConditionCheck": "ConditionCheckItem"}
            for item in params["TransactItems"]:
                (kind, body), = item.items()
                calls.append((f"dynamodb:{kinds[kind]}", body["TableName"]))
        elif "TableName" in params:
            calls.append((f"dynamodb:{operation}", params["TableName"]))
        else:
            action = {"HeadObject": "GetObject"}.get(operation, operation)
            calls.append((f"s3:{action}", params.get("Key", "")))

    s3 = aws.client("s3", aws_settings)
    for client in (stages.store._db, s3):
        client.meta.events.register("before-parameter-build.*.*", record)
    try:
        worker = VoiceWorker(stages, s3, aws_settings.bucket, Renderer(SilentEngine(), BucketSentences(s3, aws_settings.bucket)))
        assert cloud.handle({"Records": records}, worker) == {"batchItemFailures": []}
        assert cloud.handle({"Records": records}, worker) == {"batchItemFailures": []}    # Lambda's retry
    finally:
        for client in (stages.store._db, s3):
            client.meta.events.unregister("before-parameter-build.*.*", record)

    [entry] = [e for e in stages.get_stage(created.stage_id, created.player_key).log if e.id == line.id]
    assert entry.audio and entry.audio.startswith("/audio/")
    actions = {action for action, _ in calls}
    assert {"dynamodb:GetItem", "dynamodb:UpdateItem", "s3:GetObject", "s3:PutObject"} <= actions
    assert not [c for c in calls if not granted(resources, aws_settings, *c)], calls


# ---------------------------------------------------------------- alarms and dashboard

def test_the_voice_has_its_alarms_and_dashboard_lines_only_with_its_image(resources):
    for logical in VOICE_RESOURCES:
        if logical.endswith("Alarm"):
            alarm = resources[logical]
            assert alarm["Condition"] == CONDITION
            assert alarm["Properties"]["AlarmActions"] == [{"Ref": monitoring.ALARM_TOPIC}]
    dead = resources["VoiceDeadLettersAlarm"]["Properties"]
    assert dead["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": [infra.VOICE_QUEUE, "QueueName"]}}]
    age = resources[f"{infra.VOICE_FUNCTION}IteratorAgeAlarm"]["Properties"]
    assert age["Threshold"] < infra.VOICE_MAX_RECORD_AGE_S * 1000

    condition, with_voice, without = resources[monitoring.DASHBOARD]["Properties"]["DashboardBody"]["Fn::If"]
    assert condition == CONDITION
    for body_and_names, voiced in ((with_voice, True), (without, False)):
        body, variables = body_and_names["Fn::Sub"]
        assert (infra.VOICE_FUNCTION in variables) is voiced
        filled = re.sub(r"\$\{([^}]+)\}", lambda m: m.group(1).replace("::", "-"), body)
        widgets = json.loads(filled)["widgets"]
        errors = [m for w in widgets if w["properties"]["title"] == "Lambda errors" for m in w["properties"]["metrics"]]
        assert (infra.VOICE_FUNCTION in [line[3] for line in errors]) is voiced
        assert ("VoiceDeadLetterQueueName" in body) is voiced
