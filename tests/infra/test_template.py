"""The merge template (infra/resources.json), checked without AWS or the network.

What `chalice package` does with it is checked in test_package.py; here: the
checked-in file is what butai_tools.infra builds, and the resources and
permissions that matter are the ones intended.
"""
import json
import re
from pathlib import Path

import pytest

from butai_tools import infra
from chalicelib import tables

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def template():
    return infra.build()


@pytest.fixture(scope="module")
def resources(template):
    return template["Resources"]


def unwrap_if(value):
    """The `then` branch of an Fn::If on the classifier condition (None for AWS::NoValue)."""
    if isinstance(value, dict) and "Fn::If" in value:
        assert value["Fn::If"][0] == infra.CLASSIFIER_CONDITION
        then = value["Fn::If"][1]
        return None if then == {"Ref": "AWS::NoValue"} else then
    return value


def statements(policy_document):
    return [s for s in (unwrap_if(s) for s in policy_document["Statement"]) if s is not None]


def all_policy_statements(resources):
    """Every IAM statement in the template: role policies, standalone policies, the bucket policy."""
    found = []
    for logical, resource in resources.items():
        props = resource.get("Properties", {})
        for policy in props.get("Policies", []):
            found += [(logical, s) for s in statements(policy["PolicyDocument"])]
        if "PolicyDocument" in props:
            found += [(logical, s) for s in statements(props["PolicyDocument"])]
    return found


def as_list(value):
    return value if isinstance(value, list) else [value]


def function_statements(resources):
    role_policies = resources[infra.FUNCTION_ROLE]["Properties"]["Policies"]
    assert len(role_policies) == 1
    return {s["Sid"]: s for s in statements(role_policies[0]["PolicyDocument"])}


# ---------------------------------------------------------------- sync (was tests/unit/test_infra.py)

def test_checked_in_template_matches_the_table_definitions():
    assert infra.RESOURCES.read_text(encoding="utf-8") == infra.render(), \
        "infra/resources.json is stale: run `python -m butai_tools.infra`"


def test_check_command_tells_stale_from_current(tmp_path, monkeypatch):
    assert infra.main(["--check"]) == 0
    stale = tmp_path / "resources.json"
    stale.write_text("{}\n", encoding="utf-8")
    monkeypatch.setattr(infra, "RESOURCES", stale)
    assert infra.main(["--check"]) == 1


def test_template_tables_use_the_one_definition(resources):
    for logical, spec in tables.TABLES.items():
        resource_id, env_var = tables.CFN_TABLES[logical]
        props = resources[resource_id]["Properties"]
        assert props["KeySchema"] == spec["KeySchema"]
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
        assert resources["APIHandler"]["Properties"]["Environment"]["Variables"][env_var] == {"Ref": resource_id}
    assert resources["PendingRepliesTable"]["Properties"]["GlobalSecondaryIndexes"][0]["IndexName"] == \
        tables.UNREAD_INDEX


def test_function_policy_allows_only_the_calls_the_store_makes(resources):
    # SAM ignores a function's Policies when Role is set (chalice sets it): the
    # permissions live on chalice's DefaultRole, which this template replaces.
    assert "Policies" not in resources["APIHandler"]["Properties"]
    statement = function_statements(resources)["StageTables"]
    assert "dynamodb:Scan" not in statement["Action"] and "dynamodb:DeleteItem" not in statement["Action"]
    assert all("*" != r for r in statement["Resource"])


# ---------------------------------------------------------------- tables

def test_tables_are_on_demand_with_recovery_and_retained(resources):
    for resource_id, _ in tables.CFN_TABLES.values():
        table = resources[resource_id]
        assert table["Type"] == "AWS::DynamoDB::Table"
        assert table["Properties"]["BillingMode"] == "PAY_PER_REQUEST"
        assert "ProvisionedThroughput" not in table["Properties"]
        assert table["Properties"]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == "Retain"


def test_log_and_replies_expire_by_ttl_and_the_function_knows_the_retention(resources):
    ttl = {resource_id: resources[resource_id]["Properties"].get("TimeToLiveSpecification")
           for resource_id, _ in tables.CFN_TABLES.values()}
    assert ttl == {"CurrentTable": None,
                   "LogTable": {"AttributeName": "expires_at", "Enabled": True},
                   "PendingRepliesTable": {"AttributeName": "expires_at", "Enabled": True}}
    env = resources["APIHandler"]["Properties"]["Environment"]["Variables"]
    assert env["BUTAI_RETENTION_DAYS"] == {"Ref": "RetentionDays"}
    retention = infra.parameters()["RetentionDays"]
    assert retention["Type"] == "Number" and retention["MinValue"] == 0


# ---------------------------------------------------------------- the function's permissions

def join_arn(resource_id, suffix):
    return {"Fn::Join": ["", [{"Fn::GetAtt": [resource_id, "Arn"]}, suffix]]}


def test_function_permissions_are_exactly_the_needed_ones(resources):
    got = function_statements(resources)
    table_arns = [{"Fn::GetAtt": [rid, "Arn"]} for rid, _ in tables.CFN_TABLES.values()]
    assert got == {
        "StageTables": {
            "Sid": "StageTables", "Effect": "Allow",
            "Action": ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
                       "dynamodb:ConditionCheckItem"],
            "Resource": table_arns},
        "UnreadIndex": {
            "Sid": "UnreadIndex", "Effect": "Allow", "Action": ["dynamodb:Query"],
            "Resource": [join_arn("PendingRepliesTable", "/index/unread")]},
        "CharactersAndScenarios": {
            "Sid": "CharactersAndScenarios", "Effect": "Allow", "Action": ["s3:GetObject"],
            "Resource": [join_arn("AssetsBucket", "/characters/*"), join_arn("AssetsBucket", "/scenarios/*")]},
        "KeptDerivations": {
            "Sid": "KeptDerivations", "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"],
            "Resource": [join_arn("AssetsBucket", "/kept/*")]},
        "Classifier": {
            "Sid": "Classifier", "Effect": "Allow", "Action": ["sagemaker:InvokeEndpoint"],
            "Resource": [{"Ref": "ClassifierEndpoint"}]},
    }
    # The classifier permission exists only with the endpoint.
    raw = resources[infra.FUNCTION_ROLE]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]
    assert raw[-1]["Fn::If"][2] == {"Ref": "AWS::NoValue"}


def test_function_logs_go_to_its_own_log_group_only(resources):
    group = resources["APIHandlerLogGroup"]
    assert group["Properties"]["LogGroupName"] == {"Fn::Sub": "/aws/lambda/${APIHandler}"}
    assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    policy = resources["APIHandlerLogsPolicy"]["Properties"]
    assert policy["Roles"] == [{"Ref": "DefaultRole"}]
    (statement,) = statements(policy["PolicyDocument"])
    assert statement["Action"] == ["logs:CreateLogStream", "logs:PutLogEvents"]
    assert statement["Resource"] == [{"Fn::GetAtt": ["APIHandlerLogGroup", "Arn"]}]


def test_prefixes_match_what_the_code_reads():
    from chalicelib.director import KEPT_PREFIX, SCENARIO_PREFIX
    from chalicelib.stage import face_images as expressions
    assert expressions.manifest_key("hiyori").startswith(infra.CHARACTER_PREFIX)
    assert expressions.image_key("hiyori", "smile.svg").startswith(infra.CHARACTER_PREFIX)
    assert SCENARIO_PREFIX == infra.SCENARIO_PREFIX
    assert KEPT_PREFIX == infra.KEPT_PREFIX


def test_no_star_resource_or_action_except_where_aws_requires_it(resources):
    allowed_star = {("ClassifierRole", ("ecr:GetAuthorizationToken",)),
                    ("WebhookDeliveryRole", ("dynamodb:ListStreams",)),
                    ("PushFanOutRole", ("dynamodb:ListStreams",)),
                    ("VoiceRole", ("dynamodb:ListStreams",))}
    for logical, statement in all_policy_statements(resources):
        actions = tuple(as_list(statement["Action"]))
        if statement["Effect"] == "Allow":
            assert not any(a == "*" or a.endswith(":*") for a in actions), (logical, statement)
            if "*" in as_list(statement["Resource"]):
                assert (logical, actions) in allowed_star, (logical, statement)
        else:
            # The only Deny: plain HTTP to the bucket.
            assert statement["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_every_variable_the_template_sets_is_one_the_code_reads(resources):
    env = resources["APIHandler"]["Properties"]["Environment"]["Variables"]
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "chalicelib").rglob("*.py")
                       if p.name != "infra.py")
    chalice_config = json.loads((ROOT / ".chalice" / "config.json").read_text(encoding="utf-8"))
    chalice_vars = {v for stage in chalice_config["stages"].values() for v in stage.get("environment_variables", {})}
    unread = [var for var in env if f'"{var}"' not in source and var not in chalice_vars]
    assert not unread, f"the template sets variables nothing reads: {unread}"
    assert env["BUTAI_BUCKET"] == {"Ref": "AssetsBucket"}
    assert "BUTAI_ASSETS_URL" not in env     # relative image URLs: same origin as the page


# ---------------------------------------------------------------- bucket and CloudFront

def test_bucket_is_private_encrypted_and_read_only_by_this_distribution(resources):
    props = resources["AssetsBucket"]["Properties"]
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True}
    assert props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"] == \
        {"SSEAlgorithm": "AES256"}
    assert props["OwnershipControls"] == {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    assert "WebsiteConfiguration" not in props and "AccessControl" not in props

    policy = resources["AssetsBucketPolicy"]["Properties"]
    assert policy["Bucket"] == {"Ref": "AssetsBucket"}
    allows = [s for s in policy["PolicyDocument"]["Statement"] if s["Effect"] == "Allow"]
    assert len(allows) == 1
    (allow,) = allows
    assert allow["Principal"] == {"Service": "cloudfront.amazonaws.com"}
    assert allow["Action"] == "s3:GetObject"
    assert allow["Condition"] == {"StringEquals": {"AWS:SourceArn": {
        "Fn::Sub": "arn:${AWS::Partition}:cloudfront::${AWS::AccountId}:distribution/${Distribution}"}}}
    # The page and the images; scenarios (the story) are not served.
    assert allow["Resource"] == [join_arn("AssetsBucket", f"/{name}") for name in infra.PAGE_FILES] + \
        [join_arn("AssetsBucket", "/characters/*"), join_arn("AssetsBucket", "/audio/*")]


def test_every_page_file_is_served():
    top_level = sorted(p.name for p in (ROOT / "static").iterdir() if p.is_file())
    assert sorted(infra.PAGE_FILES) == top_level


def test_origin_access_control_signs_every_request(resources):
    config = resources["AssetsOriginAccessControl"]["Properties"]["OriginAccessControlConfig"]
    assert (config["OriginAccessControlOriginType"], config["SigningBehavior"], config["SigningProtocol"]) == \
        ("s3", "always", "sigv4")
    origins = {o["Id"]: o for o in resources["Distribution"]["Properties"]["DistributionConfig"]["Origins"]}
    assert origins["assets"]["OriginAccessControlId"] == {"Fn::GetAtt": ["AssetsOriginAccessControl", "Id"]}
    assert origins["assets"]["S3OriginConfig"] == {"OriginAccessIdentity": ""}   # OAC, not the legacy OAI
    assert origins["assets"]["DomainName"] == {"Fn::GetAtt": ["AssetsBucket", "RegionalDomainName"]}


def test_distribution_serves_page_from_s3_and_api_paths_from_api_gateway(resources):
    config = resources["Distribution"]["Properties"]["DistributionConfig"]
    origins = {o["Id"]: o for o in config["Origins"]}
    chalice_config = json.loads((ROOT / ".chalice" / "config.json").read_text(encoding="utf-8"))
    api_stage = chalice_config["stages"]["prod"]["api_gateway_stage"]
    assert origins["api"]["OriginPath"] == f"/{api_stage}"
    assert origins["api"]["DomainName"] == {
        "Fn::Sub": "${RestAPI}.execute-api.${AWS::Region}.${AWS::URLSuffix}"}
    assert origins["api"]["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"
    assert config["DefaultRootObject"] == "index.html"

    default = config["DefaultCacheBehavior"]
    assert default["TargetOriginId"] == "assets"
    assert default["CachePolicyId"] == "658327ea-f89d-4fab-a63d-7e88639e58f6"      # CachingOptimized
    assert default["ViewerProtocolPolicy"] == "redirect-to-https"
    assert default["ResponseHeadersPolicyId"] == {"Ref": "PageHeadersPolicy"}

    behaviours = {b["PathPattern"]: b for b in config["CacheBehaviors"]}
    assert set(behaviours) == {"/stages/*", "/openapi.json", "/push"}
    for behaviour in (b for b in behaviours.values() if b["PathPattern"] != "/push"):
        assert behaviour["TargetOriginId"] == "api"
        assert behaviour["CachePolicyId"] == "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"          # CachingDisabled
        # AllViewerExceptHostHeader: Authorization and If-None-Match reach the API.
        assert behaviour["OriginRequestPolicyId"] == "b689b0a8-53d0-40ab-baf2-68738e2966ac"
        assert {"GET", "HEAD", "POST", "OPTIONS"} <= set(behaviour["AllowedMethods"])
        assert behaviour["ViewerProtocolPolicy"] == "https-only"


def test_app_routes_are_all_behind_an_api_behaviour():
    from app import app
    patterns = [p.rstrip("*") for p in infra.API_PATHS]
    for route in app.routes:
        assert any(route == p or (p.endswith("/") and route.startswith(p)) for p in patterns), route


def test_page_gets_strict_security_headers(resources):
    headers = resources["PageHeadersPolicy"]["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
    # media-src names the operator's audio origins (AudioOrigins, empty by default: the own origin only).
    assert headers["ContentSecurityPolicy"] == {"Override": True, "ContentSecurityPolicy": {"Fn::Sub": (
        "default-src 'self'; img-src 'self' data:; connect-src 'self'; style-src 'self'; script-src 'self'; "
        "media-src 'self' ${AudioOrigins}; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
        "form-action 'self'")}}
    assert headers["ReferrerPolicy"] == {"ReferrerPolicy": "no-referrer", "Override": True}
    assert headers["ContentTypeOptions"] == {"Override": True}


def test_page_needs_nothing_the_policy_forbids():
    html = (ROOT / "static" / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "inline script: CSP script-src 'self' blocks it"
    assert "<style" not in html and " style=" not in html, "inline style: CSP style-src 'self' blocks it"
    assert not re.search(r"\son[a-z]+=", html), "inline event handler: CSP blocks it"
    for url in re.findall(r'(?:src|href)="(https?:[^"]+)"', html):
        pytest.fail(f"the page loads {url} from another origin")


# ---------------------------------------------------------------- API Gateway

def test_api_is_regional_and_throttled_by_parameters(resources):
    props = resources["RestAPI"]["Properties"]
    assert props["EndpointConfiguration"] == "REGIONAL"
    assert props["MethodSettings"] == [{"ResourcePath": "/*", "HttpMethod": "*",
                                        "ThrottlingRateLimit": {"Ref": "ApiThrottleRateLimit"},
                                        "ThrottlingBurstLimit": {"Ref": "ApiThrottleBurstLimit"}}]
    params = infra.parameters()
    assert params["ApiThrottleRateLimit"]["Type"] == params["ApiThrottleBurstLimit"]["Type"] == "Number"


# ---------------------------------------------------------------- classifier endpoint

CLASSIFIER_RESOURCES = {"ClassifierLogGroup", "ClassifierRole", "ClassifierModel", "ClassifierEndpointConfig",
                        "ClassifierEndpoint", "ClassifierScalableTarget", "ClassifierScalingPolicy",
                        # its alarms (butai_tools/monitoring.py)
                        "ClassifierErrorsAlarm", "ClassifierLatencyAlarm", "ClassifierCircuitAlarm"}


def test_endpoint_exists_only_when_enabled(template, resources):
    assert template["Conditions"]["ClassifierOn"] == {"Fn::Equals": [{"Ref": "ClassifierEnabled"}, "true"]}
    conditional = {k for k, v in resources.items() if v.get("Condition") == "ClassifierOn"}
    assert conditional == CLASSIFIER_RESOURCES
    assert infra.parameters()["ClassifierEnabled"]["AllowedValues"] == ["true", "false"]
    assert template["Rules"]["ClassifierNeedsImage"]["Assertions"][0]["Assert"] == \
        {"Fn::Not": [{"Fn::Equals": [{"Ref": "ClassifierImageUri"}, infra.NO_IMAGE]}]}
    env = resources["APIHandler"]["Properties"]["Environment"]["Variables"]
    # The GPU only where the lexical classifier is unsure, unless ClassifierUse says every turn.
    assert env["BUTAI_CLASSIFIER"] == {"Fn::If": ["ClassifierOn", {"Fn::If": [
        infra.CLASSIFIER_EVERY_TURN, "sagemaker", "lexical+sagemaker"]}, "lexical"]}
    assert template["Conditions"][infra.CLASSIFIER_EVERY_TURN] == {"Fn::Equals": [{"Ref": "ClassifierUse"},
                                                                                  "every-turn"]}
    assert infra.parameters()["ClassifierUse"]["Default"] == "when-unsure"
    assert unwrap_if(env["BUTAI_CLASSIFIER_TIMEOUT"]) == {"Ref": "ClassifierTimeoutSeconds"}
    assert infra.parameters()["ClassifierTimeoutSeconds"]["Default"] == 1.5
    assert unwrap_if(env["BUTAI_CLASSIFIER_BREAKER_FAILURES"]) == {"Ref": "ClassifierBreakerFailures"}
    assert unwrap_if(env["BUTAI_CLASSIFIER_BREAKER_SECONDS"]) == {"Ref": "ClassifierBreakerSeconds"}
    assert unwrap_if(env["BUTAI_SAGEMAKER_ENDPOINT"]) == {"Fn::GetAtt": ["ClassifierEndpoint", "EndpointName"]}
    assert unwrap_if(env["BUTAI_SAGEMAKER_MODEL"]) == {"Ref": "ClassifierModelId"}
    assert unwrap_if(env["BUTAI_CONTEXT_LIMIT"]) == {"Ref": "ClassifierMaxModelLen"}


def test_model_endpoint_config_and_endpoint_use_the_parameters(resources):
    model = resources["ClassifierModel"]["Properties"]
    assert model["PrimaryContainer"]["Image"] == {"Ref": "ClassifierImageUri"}
    assert model["PrimaryContainer"]["Environment"] == {"MODEL_ID": {"Ref": "ClassifierModelId"},
                                                        "MAX_MODEL_LEN": {"Ref": "ClassifierMaxModelLen"}}
    assert model["ExecutionRoleArn"] == {"Fn::GetAtt": ["ClassifierRole", "Arn"]}
    (variant,) = resources["ClassifierEndpointConfig"]["Properties"]["ProductionVariants"]
    assert variant["VariantName"] == "AllTraffic"
    assert variant["ModelName"] == {"Fn::GetAtt": ["ClassifierModel", "ModelName"]}
    assert variant["InstanceType"] == {"Ref": "ClassifierInstanceType"}
    assert variant["InitialInstanceCount"] == {"Ref": "ClassifierMinInstances"}
    assert variant["InferenceAmiVersion"] == {"Ref": "ClassifierAmiVersion"}
    endpoint = resources["ClassifierEndpoint"]["Properties"]
    assert endpoint["EndpointConfigName"] == {"Fn::GetAtt": ["ClassifierEndpointConfig", "EndpointConfigName"]}
    params = infra.parameters()
    assert params["ClassifierModelId"]["Default"] == "Qwen/Qwen3-4B-Instruct-2507"
    assert params["ClassifierInstanceType"]["Default"] == "ml.g5.xlarge"


def test_endpoint_scales_on_invocations_per_instance(resources):
    target = resources["ClassifierScalableTarget"]["Properties"]
    assert target["ServiceNamespace"] == "sagemaker"
    assert target["ScalableDimension"] == "sagemaker:variant:DesiredInstanceCount"
    assert target["ResourceId"] == {"Fn::Sub": "endpoint/${ClassifierEndpoint.EndpointName}/variant/AllTraffic"}
    assert (target["MinCapacity"], target["MaxCapacity"]) == \
        ({"Ref": "ClassifierMinInstances"}, {"Ref": "ClassifierMaxInstances"})
    policy = resources["ClassifierScalingPolicy"]["Properties"]
    assert policy["PolicyType"] == "TargetTrackingScaling"
    assert policy["ScalingTargetId"] == {"Ref": "ClassifierScalableTarget"}
    tracking = policy["TargetTrackingScalingPolicyConfiguration"]
    assert tracking["PredefinedMetricSpecification"] == {
        "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}
    assert tracking["TargetValue"] == {"Ref": "ClassifierInvocationsPerInstance"}
    assert infra.parameters()["ClassifierMinInstances"]["MinValue"] == 1


def test_endpoint_role_pulls_only_its_repository_and_writes_only_its_logs(resources):
    role = resources["ClassifierRole"]["Properties"]
    assert role["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": "sagemaker.amazonaws.com"}
    (policy,) = role["Policies"]
    got = {s["Sid"]: s for s in statements(policy["PolicyDocument"])}
    assert got["PullImage"]["Resource"] == [{"Fn::GetAtt": ["ClassifierRepository", "Arn"]}]
    assert set(got["PullImage"]["Action"]) == {"ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage",
                                               "ecr:GetDownloadUrlForLayer"}
    assert got["RegistryLogin"] == {"Sid": "RegistryLogin", "Effect": "Allow",
                                    "Action": ["ecr:GetAuthorizationToken"], "Resource": "*"}
    group = "log-group:/aws/sagemaker/Endpoints/${AWS::StackName}-classifier"
    assert got["EndpointLogs"]["Resource"] == [
        {"Fn::Sub": f"arn:${{AWS::Partition}}:logs:${{AWS::Region}}:${{AWS::AccountId}}:{group}"},
        {"Fn::Sub": f"arn:${{AWS::Partition}}:logs:${{AWS::Region}}:${{AWS::AccountId}}:{group}:*"}]
    assert resources["ClassifierEndpoint"]["Properties"]["EndpointName"] == \
        {"Fn::Sub": "${AWS::StackName}-classifier"}
    assert set(got) == {"PullImage", "RegistryLogin", "EndpointLogs"}


def test_outputs_give_the_operator_cli_everything_it_reads(template):
    from chalicelib.config import Settings
    outputs = template["Outputs"]
    for key in infra.OUTPUT_ENV:
        assert key in outputs
    env = {var: f"value-of-{key}" for key, var in infra.OUTPUT_ENV.items()}
    settings = Settings.from_env(env)
    assert (settings.table_current, settings.table_log, settings.table_pending, settings.bucket,
            settings.page_url) == tuple(f"value-of-{k}" for k in (
                "CurrentTableName", "LogTableName", "PendingRepliesTableName", "AssetsBucketName", "PageURL"))


# ---------------------------------------------------------------- webhook delivery

def test_new_replies_reach_the_delivery_function_through_the_table_stream(resources):
    pending = resources["PendingRepliesTable"]["Properties"]
    assert pending["StreamSpecification"] == {"StreamViewType": "NEW_IMAGE"}
    mapping = resources["WebhookDeliveryEventSource"]["Properties"]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": ["PendingRepliesTable", "StreamArn"]}
    assert mapping["FunctionName"] == {"Ref": "WebhookDeliveryFunction"}
    # only new replies (a claim is a MODIFY, an expiry a REMOVE)
    assert [json.loads(f["Pattern"]) for f in mapping["FilterCriteria"]["Filters"]] == [{"eventName": ["INSERT"]}]
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["MaximumRetryAttempts"] == infra.WEBHOOK_RETRIES
    assert mapping["DestinationConfig"] == {"OnFailure": {"Destination": {
        "Fn::GetAtt": ["WebhookDeadLetterQueue", "Arn"]}}}
    queue = resources["WebhookDeadLetterQueue"]["Properties"]
    assert queue["SqsManagedSseEnabled"] is True and queue["MessageRetentionPeriod"] == 14 * 86400


def test_the_delivery_function_runs_the_stream_handler_with_its_own_role(resources):
    from chalicelib.webhooks import stream
    function = resources["WebhookDeliveryFunction"]["Properties"]
    module, name = function["Handler"].rsplit(".", 1)
    assert module == stream.__name__ and callable(getattr(stream, name))
    assert function["Role"] == {"Fn::GetAtt": ["WebhookDeliveryRole", "Arn"]}
    assert function["Timeout"] > stream.LAMBDA_SCHEDULE.total + 2 * 8     # the retries fit in one invocation
    env = function["Environment"]["Variables"]
    assert env["BUTAI_TABLE_CURRENT"] == {"Ref": "CurrentTable"} and env["BUTAI_TABLE_LOG"] == {"Ref": "LogTable"}
    assert "BUTAI_TABLE_PENDING" not in env      # it reads the stream, never the table


def test_the_delivery_role_may_do_only_what_delivery_needs(resources):
    (policy,) = resources["WebhookDeliveryRole"]["Properties"]["Policies"]
    got = {s["Sid"]: (s["Action"], s["Resource"]) for s in statements(policy["PolicyDocument"])}
    assert got == {
        "ReadWebhook": (["dynamodb:GetItem"], [{"Fn::GetAtt": ["CurrentTable", "Arn"]}]),
        "RecordDeliveries": (["dynamodb:PutItem"], [{"Fn::GetAtt": ["LogTable", "Arn"]}]),
        "ReadReplyStream": (["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"],
                            [{"Fn::GetAtt": ["PendingRepliesTable", "StreamArn"]}]),
        "ListStreams": (["dynamodb:ListStreams"], "*"),
        "DeadLetters": (["sqs:SendMessage"], [{"Fn::GetAtt": ["WebhookDeadLetterQueue", "Arn"]}]),
    }
    logs = resources["WebhookDeliveryLogsPolicy"]["Properties"]
    assert logs["Roles"] == [{"Ref": "WebhookDeliveryRole"}]
    (statement,) = statements(logs["PolicyDocument"])
    assert statement["Resource"] == [{"Fn::GetAtt": ["WebhookDeliveryLogGroup", "Arn"]}]
    # and the API function gained nothing for it
    assert "sqs:SendMessage" not in json.dumps(resources["DefaultRole"])
