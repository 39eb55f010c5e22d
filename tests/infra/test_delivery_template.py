"""The template's part in delivery (no AWS): long-polls in a function of their own, a cap on the webhook
delivery function, the assets bucket's versions, and TLS only to the logs bucket."""
from butai_tools import infra
from chalicelib.webhooks import stream


def test_long_polls_have_a_function_and_a_concurrency_pool_of_their_own():
    template = infra.build()
    resources, params = template["Resources"], template["Parameters"]
    function = resources[infra.LONG_POLL_FUNCTION]
    assert function["Type"] == "AWS::Serverless::Function"
    props = function["Properties"]
    assert props["Handler"] == "app.app" and props["CodeUri"] == "./deployment.zip"
    assert props["Timeout"] < 29 + 2 and props["Timeout"] > 20       # a wait of 20 s fits, API Gateway's 29 s bounds
    assert props["ReservedConcurrentExecutions"] == {"Fn::If": [infra.LONG_POLL_RESERVED,
                                                                {"Ref": "LongPollReservedConcurrency"},
                                                                {"Ref": "AWS::NoValue"}]}
    # a parameter, unset by default (a reservation needs an account quota above 100 plus the stack's sum)
    assert params["LongPollReservedConcurrency"]["Default"] == 0
    assert template["Conditions"][infra.LONG_POLL_RESERVED] == infra.not_zero("LongPollReservedConcurrency")
    # The API function keeps its own reserved pool: the two never share instances.
    assert resources[infra.FUNCTION]["Properties"]["ReservedConcurrentExecutions"]["Fn::If"][1] == \
        {"Ref": "FunctionReservedConcurrency"}
    for name, value in infra.function_environment().items():
        assert props["Environment"]["Variables"][name] == value
    route = resources[infra.REST_API]["Properties"]["DefinitionBody"]["paths"]
    assert list(route) == [infra.LONG_POLL_PATH] and list(route[infra.LONG_POLL_PATH]) == ["post"]
    text, variables = route[infra.LONG_POLL_PATH]["post"]["x-amazon-apigateway-integration"]["uri"]["Fn::Sub"]
    # its alias, as the API function's routes call theirs (SnapStart snapshots published versions only)
    assert text.endswith("/functions/${Target}/invocations")
    assert variables == {"Target": {"Ref": f"{infra.LONG_POLL_FUNCTION}.Alias"}}
    assert props["AutoPublishAlias"] == infra.API_ALIAS and props["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    assert props["Runtime"] == infra.LAMBDA_RUNTIME
    permission = resources[f"{infra.LONG_POLL_FUNCTION}InvokePermission"]["Properties"]
    assert permission["FunctionName"] == {"Ref": f"{infra.LONG_POLL_FUNCTION}.Alias"}
    assert permission["Principal"] == "apigateway.amazonaws.com"
    logs = resources[f"{infra.LONG_POLL_FUNCTION}LogsPolicy"]["Properties"]["PolicyDocument"]["Statement"][0]
    assert logs["Resource"] == [{"Fn::GetAtt": [f"{infra.LONG_POLL_FUNCTION}LogGroup", "Arn"]}]


def test_the_long_poll_path_is_the_apps_fetch_route():
    from app import app  # tests/conftest.py puts the project root on sys.path
    assert "POST" in app.routes[infra.LONG_POLL_PATH]


def test_the_delivery_function_has_a_concurrency_limit():
    template = infra.build()
    resources = template["Resources"]
    props = resources[infra.WEBHOOK_FUNCTION]["Properties"]
    assert props["ReservedConcurrentExecutions"] == {"Fn::If": [infra.WEBHOOK_RESERVED,
                                                                {"Ref": "WebhookReservedConcurrency"},
                                                                {"Ref": "AWS::NoValue"}]}
    assert template["Parameters"]["WebhookReservedConcurrency"]["Default"] == 0      # unset unless asked
    mapping = resources["WebhookDeliveryEventSource"]["Properties"]
    # Without a reservation the event source is the cap: a few batches in flight per shard; within one,
    # stages side by side (stream.PARALLEL).
    assert 0 < mapping["ParallelizationFactor"] <= infra.WEBHOOK_PARALLEL_BATCHES
    assert stream.PARALLEL >= 1


def test_the_assets_bucket_keeps_earlier_versions_and_the_logs_bucket_refuses_plain_http():
    resources = infra.build()["Resources"]
    assets = resources["AssetsBucket"]["Properties"]
    assert assets["VersioningConfiguration"] == {"Status": "Enabled"}
    (rule,) = assets["LifecycleConfiguration"]["Rules"]
    assert rule["Status"] == "Enabled" and rule["NoncurrentVersionExpiration"]["NoncurrentDays"] >= 30
    policy = resources["AccessLogsBucketPolicy"]
    assert policy["Condition"] == resources["AccessLogsBucket"]["Condition"] == infra.CLOUDFRONT_LOGS
    (deny,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert deny["Effect"] == "Deny" and deny["Principal"] == "*" and deny["Action"] == "s3:*"
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert {"Fn::GetAtt": ["AccessLogsBucket", "Arn"]} in deny["Resource"]
