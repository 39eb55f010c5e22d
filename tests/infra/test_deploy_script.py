"""infra/deploy.sh with stand-ins for the `aws` and `docker` commands that log
their arguments: the order and the arguments of what it would run."""
import json
import os
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from butai_tools import infra

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "infra" / "deploy.sh"
REPO = "123456789012.dkr.ecr.us-east-1.amazonaws.com/butai-prod-classifierrepository-abc"
OUTPUTS = {"PageURL": "https://d111.cloudfront.net/", "DistributionId": "E2EXAMPLE",
           "AssetsBucketName": "butai-prod-assetsbucket-1", "CurrentTableName": "butai-prod-CurrentTable-1",
           "LogTableName": "butai-prod-LogTable-1", "PendingRepliesTableName": "butai-prod-PendingRepliesTable-1",
           "ClassifierRepositoryUri": REPO, "ClassifierEndpointName": "butai-prod-classifier"}

FAKE_AWS = textwrap.dedent("""\
    #!/usr/bin/env python3
    import json, os, sys
    args = sys.argv[1:]
    with open(os.environ["FAKE_LOG"], "a") as log:
        log.write(json.dumps(["aws", *args]) + "\\n")
    outputs = json.loads(os.environ["FAKE_OUTPUTS"])
    listed = [{"OutputKey": k, "OutputValue": v} for k, v in outputs.items()]
    if args[:2] == ["cloudformation", "describe-stacks"] and "--query" in args:
        print(json.dumps(listed))
    elif args[:2] == ["cloudformation", "describe-stacks"]:
        if os.environ.get("FAKE_STATUS") == "none":
            sys.exit(254)                   # no such stack
        print(json.dumps({"Stacks": [{"StackName": "butai-prod", "StackStatus": os.environ["FAKE_STATUS"],
                                      "Parameters": [{"ParameterKey": k, "ParameterValue": v} for k, v in
                                                     json.loads(os.environ["FAKE_PARAMETERS"]).items()],
                                      "Outputs": listed}]}))
    elif args[:2] == ["lambda", "get-account-settings"]:
        quota, unreserved = json.loads(os.environ["FAKE_QUOTA"])
        print(json.dumps({"AccountLimit": {"ConcurrentExecutions": quota,
                                           "UnreservedConcurrentExecutions": unreserved}}))
    elif args[:2] == ["cloudformation", "describe-stack-resource"]:
        print("butai-prod-" + args[args.index("--logical-resource-id") + 1] + "-Xy12")
    elif args[:2] == ["lambda", "list-versions-by-function"]:
        print(json.dumps({"Versions": [{"Version": "$LATEST"}] + [{"Version": str(v)} for v in range(1, 6)]}))
    elif args[:2] == ["lambda", "list-aliases"]:
        print(json.dumps({"Aliases": [{"Name": "live", "FunctionVersion": "5"}]}))
    elif args[:2] == ["sts", "get-caller-identity"]:
        print("123456789012")
    elif args[:2] == ["ecr", "describe-images"]:
        sys.exit(254)                       # not pushed yet
    elif args[:2] == ["ecr", "get-login-password"]:
        print("password")
    """)
FAKE_DOCKER = textwrap.dedent("""\
    #!/usr/bin/env python3
    import json, os, sys
    sys.stdin.read() if "--password-stdin" in sys.argv else None
    with open(os.environ["FAKE_LOG"], "a") as log:
        log.write(json.dumps(["docker", *sys.argv[1:]]) + "\\n")
    """)


@pytest.fixture
def deploy(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("aws", FAKE_AWS), ("docker", FAKE_DOCKER)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    package = tmp_path / "package"
    package.mkdir()
    (package / "sam.json").write_text("{}")
    log = tmp_path / "calls.jsonl"

    def run(*args, outputs=OUTPUTS, status="UPDATE_COMPLETE", parameters=None, quota=(1000, 1000), **env):
        log.write_text("")
        inherited = {k: v for k, v in os.environ.items() if k not in ("BUTAI_ARTIFACT_BUCKET", "BUTAI_KEEP_VERSIONS")}
        environ = {**inherited, "PATH": f"{bin_dir}:{os.environ['PATH']}", "AWS_REGION": "us-east-1",
                   "FAKE_LOG": str(log), "FAKE_OUTPUTS": json.dumps(outputs), "BUTAI_PACKAGE_DIR": str(package),
                   "FAKE_STATUS": status, "FAKE_PARAMETERS": json.dumps(parameters or {}),
                   "FAKE_QUOTA": json.dumps(list(quota)), "BUTAI_VENV_BIN": str(ROOT / ".venv" / "bin"), **env}
        result = subprocess.run([str(DEPLOY), *args], env=environ, capture_output=True, text=True, timeout=60)
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        return result, calls
    run.package = package
    return run


def test_stack_packages_uploads_and_deploys_with_the_parameters(deploy):
    result, calls = deploy("stack", "butai-prod", "ClassifierEnabled=false", "RetentionDays=14")
    assert result.returncode == 0, result.stderr
    commands = [c[:3] for c in calls]
    assert ["aws", "cloudformation", "package"] in commands and ["aws", "cloudformation", "deploy"] in commands
    assert commands.index(["aws", "cloudformation", "package"]) < commands.index(["aws", "cloudformation", "deploy"])
    package = next(c for c in calls if c[1:3] == ["cloudformation", "package"])
    assert package[package.index("--template-file") + 1] == str(deploy.package / "sam.json")
    assert package[package.index("--s3-bucket") + 1] == "butai-artifacts-123456789012-us-east-1"
    run = next(c for c in calls if c[1:3] == ["cloudformation", "deploy"])
    assert run[run.index("--stack-name") + 1] == "butai-prod"
    # a template over 51,200 bytes is refused inline: it is deployed from the artifact bucket
    assert run[run.index("--s3-bucket") + 1] == "butai-artifacts-123456789012-us-east-1"
    assert run[run.index("--s3-prefix") + 1] == "butai-prod"
    capabilities = run[run.index("--capabilities") + 1:run.index("--capabilities") + 3]
    assert capabilities == ["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"]
    assert run[run.index("--parameter-overrides") + 1:] == ["ClassifierEnabled=false", "RetentionDays=14"]
    assert "https://d111.cloudfront.net/" in result.stdout


def test_stack_without_parameters_keeps_the_previous_ones(deploy):
    result, calls = deploy("stack", "butai-prod", BUTAI_ARTIFACT_BUCKET="my-artifacts")
    assert result.returncode == 0, result.stderr
    run = next(c for c in calls if c[1:3] == ["cloudformation", "deploy"])
    assert "--parameter-overrides" not in run
    assert not any(c[1:3] == ["sts", "get-caller-identity"] for c in calls)


def test_env_configures_the_operator_cli(deploy):
    result, _ = deploy("env", "butai-prod")
    assert result.returncode == 0, result.stderr
    check = ("from chalicelib.config import Settings; s = Settings.from_env(); "
             "print(s.table_current, s.table_log, s.table_pending, s.bucket, s.page_url, s.region)")
    script = f'eval "$1"; "{ROOT}/.venv/bin/python" -c "{check}"'
    shown = subprocess.run(["bash", "-c", script, "-", result.stdout], capture_output=True, text=True, cwd=ROOT,
                           env={k: v for k, v in os.environ.items() if not k.startswith(("BUTAI_", "AWS_"))})
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == [OUTPUTS["CurrentTableName"], OUTPUTS["LogTableName"],
                                    OUTPUTS["PendingRepliesTableName"], OUTPUTS["AssetsBucketName"],
                                    OUTPUTS["PageURL"], "us-east-1"]
    assert len(result.stdout.splitlines()) == len(infra.OUTPUT_ENV) + 1


def test_env_of_a_stack_without_the_outputs_fails(deploy):
    result, _ = deploy("env", "butai-prod", outputs={"PageURL": "https://x/"})
    assert result.returncode != 0
    assert "AssetsBucketName" in result.stderr


def test_classifier_on_builds_pushes_and_enables_the_endpoint(deploy):
    result, calls = deploy("classifier", "butai-prod", "on", "ClassifierMaxInstances=4")
    assert result.returncode == 0, result.stderr
    docker = [c for c in calls if c[0] == "docker"]
    assert [c[1] for c in docker] == ["login", "build", "push"]
    build = docker[1]
    image = build[build.index("-t") + 1]
    # the vLLM version and a hash of the build's inputs; the base image's digest is in the hash, not the tag
    assert re.fullmatch(re.escape(REPO) + r":vllm-v\d+\.\d+\.\d+-[0-9a-f]{12}", image), image
    assert build[-1] == "infra/classifier"
    assert build[build.index("--platform") + 1] == "linux/amd64"
    assert docker[2][-1] == image
    run = next(c for c in calls if c[1:3] == ["cloudformation", "deploy"])
    assert run[run.index("--parameter-overrides") + 1:] == [
        "ClassifierEnabled=true", f"ClassifierImageUri={image}", "ClassifierMaxInstances=4"]


def test_classifier_off_needs_no_image(deploy):
    result, calls = deploy("classifier", "butai-prod", "off")
    assert result.returncode == 0, result.stderr
    assert not [c for c in calls if c[0] == "docker"]
    run = next(c for c in calls if c[1:3] == ["cloudformation", "deploy"])
    assert run[run.index("--parameter-overrides") + 1:] == ["ClassifierEnabled=false"]


def test_unknown_command_prints_usage(deploy):
    result, calls = deploy("launch", "butai-prod")
    assert result.returncode == 2
    assert "infra/deploy.sh stack STACK" in result.stderr


# ---------------------------------------------------------------- before and after the deploy

CREATING = (["aws", "s3", "mb"], ["aws", "cloudformation", "package"], ["aws", "cloudformation", "deploy"])


def created_nothing(calls):
    return not [c for c in calls if c[:3] in CREATING]


def test_a_reservation_the_quota_cannot_hold_is_refused_before_anything_is_made(deploy):
    # a new account: quota 50, all unreserved; AWS keeps 100 unreserved, so nothing can be reserved at all
    result, calls = deploy("stack", "butai-prod", "FunctionReservedConcurrency=20", status="none", quota=(50, 50))
    assert result.returncode != 0 and created_nothing(calls)
    assert "would reserve 20" in result.stderr and "quota is 50" in result.stderr
    assert "at least 120" in result.stderr and "L-B99A9384" in result.stderr
    assert "at 0 (the default" in result.stderr
    assert [c[:3] for c in calls][:2] == [["aws", "cloudformation", "describe-stacks"],
                                         ["aws", "lambda", "get-account-settings"]]


def test_the_defaults_reserve_nothing_and_deploy_on_a_small_quota_with_a_warning(deploy):
    result, calls = deploy("stack", "butai-prod", status="none", quota=(10, 10))
    assert result.returncode == 0, result.stderr
    assert ["aws", "cloudformation", "deploy"] in [c[:3] for c in calls]
    assert "this stack reserves 0" in result.stderr
    assert "below the usual 1000: ask for 1000" in result.stderr
    assert "about 400 players on a scenario or webhook stage" in result.stderr


def test_the_stacks_own_reservations_count_as_room_on_an_update(deploy):
    # The stack holds 50 already (in the account's 850 unreserved): 800 more fits exactly, 801 does not.
    held = {"FunctionReservedConcurrency": "50"}
    result, _ = deploy("stack", "butai-prod", "FunctionReservedConcurrency=800", parameters=held, quota=(1000, 850))
    assert result.returncode == 0, result.stderr
    result, calls = deploy("stack", "butai-prod", "FunctionReservedConcurrency=400", "LongPollReservedConcurrency=401",
                           parameters=held, quota=(1000, 850))
    assert result.returncode != 0 and created_nothing(calls)
    assert "would reserve 801" in result.stderr and "at least 1001" in result.stderr
    # a parameter not given keeps the stack's value: still counted
    result, calls = deploy("stack", "butai-prod", "LongPollReservedConcurrency=751", parameters=held,
                           quota=(1000, 850))
    assert result.returncode != 0 and "would reserve 801" in result.stderr


def test_a_failed_first_create_is_explained_and_not_deployed_over(deploy):
    result, calls = deploy("stack", "butai-prod", status="ROLLBACK_COMPLETE")
    assert result.returncode != 0 and created_nothing(calls)
    assert "ROLLBACK_COMPLETE" in result.stderr and "describe-stack-events" in result.stderr
    assert "infra/teardown.sh butai-prod --delete" in result.stderr


def test_old_snapstart_versions_are_deleted_after_the_deploy(deploy):
    result, calls = deploy("stack", "butai-prod")
    assert result.returncode == 0, result.stderr
    deploy_at = [c[:3] for c in calls].index(["aws", "cloudformation", "deploy"])
    deleted = [(c[c.index("--function-name") + 1], c[c.index("--qualifier") + 1]) for c in calls
               if c[1:3] == ["lambda", "delete-function"]]
    # the alias's version (5) and the one before it stay; $LATEST is never a version to delete
    assert deleted == [(f"butai-prod-{f}-Xy12", v) for f in (infra.FUNCTION, infra.LONG_POLL_FUNCTION)
                       for v in ("1", "2", "3")]
    assert all(calls.index(c) > deploy_at for c in calls if c[1:3] == ["lambda", "delete-function"])
    result, calls = deploy("stack", "butai-prod", BUTAI_KEEP_VERSIONS="4")
    assert [c[-1] for c in calls if c[1:3] == ["lambda", "delete-function"]] == ["1", "1"]


def test_the_figures_deploy_quotes_are_the_ones_scaling_works_out():
    from butai_tools import preflight
    scaling = (ROOT / "docs" / "scaling.md").read_text(encoding="utf-8")
    assert "`infra/deploy.sh` quotes the last two (0.025 and 1.0 per player)" in scaling
    assert list(preflight.PER_PLAYER.values()) == [0.025, 1.0]
    assert "| agent stage, agent woken by its webhook: API + push + delivery | ~0.025 |" in scaling
