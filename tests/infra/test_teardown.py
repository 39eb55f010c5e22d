"""infra/teardown.sh against a moto server (real sockets, moto's CloudFormation): a stack made of what butai's
template retains lists everything it would leave, with what each holds, and `--delete` removes the stack
and all of it — versioned objects, protected tables, log groups, the stack's code in the shared artifact
bucket — while the account-wide API Gateway logging setting is reported, never changed."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import boto3
import pytest

from butai_tools import infra, teardown
from chalicelib import tables

ROOT = Path(__file__).resolve().parents[2]
STACK = "butai-test"
ACCOUNT = "123456789012"           # moto's
ARTIFACTS = f"butai-artifacts-{ACCOUNT}-us-east-1"      # the bucket infra/deploy.sh uploads the code to


def template() -> dict:
    """The retained resources of butai's template, by its logical ids (literal properties: moto's
    CloudFormation does not evaluate the template's parameters and conditions), and two that are not."""
    resources = tables.cloudformation_tables()
    resources.update({
        "AssetsBucket": {"Type": "AWS::S3::Bucket", "DeletionPolicy": "Retain",
                         "Properties": {"VersioningConfiguration": {"Status": "Enabled"}}},
        "AccessLogsBucket": {"Type": "AWS::S3::Bucket", "DeletionPolicy": "Retain"},
        "ApiAccessLogGroup": {"Type": "AWS::Logs::LogGroup", "DeletionPolicy": "Retain",
                              "Properties": {"LogGroupName": f"/butai/{STACK}/api-access"}},
        infra.PUSH_ACCESS_LOG_GROUP: {"Type": "AWS::Logs::LogGroup", "DeletionPolicy": "Retain",
                                      "Properties": {"LogGroupName": f"/butai/{STACK}/push-access"}},
        teardown.LOGS_ROLE: {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                    "Principal": {"Service": "apigateway.amazonaws.com"}}]}}},
        infra.WEBHOOK_QUEUE: {"Type": "AWS::SQS::Queue"},
    })
    return {"Resources": resources}


@pytest.fixture
def aws(monkeypatch):
    from moto.server import ThreadedMotoServer
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    import urllib.request
    # moto's state lives in this process, whichever server serves it: start from an empty account.
    urllib.request.urlopen(urllib.request.Request(f"http://{host}:{port}/moto-api/reset", method="POST"), timeout=10)
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "BUTAI_ARTIFACT_BUCKET", "BUTAI_AWS_ENDPOINT"):
        monkeypatch.delenv(key, raising=False)
    session = boto3.session.Session(region_name="us-east-1")
    yield session, env
    server.stop()


def made(session):
    cloudformation = session.client("cloudformation")
    cloudformation.create_stack(StackName=STACK, TemplateBody=json.dumps(template()),
                                Capabilities=["CAPABILITY_IAM"])
    physical = {r["LogicalResourceId"]: r["PhysicalResourceId"]
                for r in cloudformation.describe_stack_resources(StackName=STACK)["StackResources"]}
    s3 = session.client("s3")
    # (the template's VersioningConfiguration, which moto's CloudFormation does not apply)
    s3.put_bucket_versioning(Bucket=physical["AssetsBucket"], VersioningConfiguration={"Status": "Enabled"})
    for body in (b"first", b"second", b"third"):             # two earlier versions, then a delete marker
        s3.put_object(Bucket=physical["AssetsBucket"], Key="audio/line.mp3", Body=body)
    s3.put_object(Bucket=physical["AssetsBucket"], Key="index.html", Body=b"<html>")
    s3.delete_object(Bucket=physical["AssetsBucket"], Key="audio/line.mp3")
    s3.put_object(Bucket=physical["AccessLogsBucket"], Key="cloudfront/E1.2026-01-01.gz", Body=b"log")
    s3.create_bucket(Bucket=ARTIFACTS)
    s3.put_object(Bucket=ARTIFACTS, Key=f"{STACK}/0123abcd", Body=b"zip" * 100)
    s3.put_object(Bucket=ARTIFACTS, Key="another-stack/4567cdef", Body=b"zip")
    session.client("dynamodb").put_item(TableName=physical["CurrentTable"], Item={"stage_id": {"S": "s1"}})
    role = session.client("iam").get_role(RoleName=physical[teardown.LOGS_ROLE])["Role"]["Arn"]
    session.client("apigateway").update_account(
        patchOperations=[{"op": "replace", "path": "/cloudwatchRoleArn", "value": role}])
    return physical, role


def run(env, *args):
    return subprocess.run([str(ROOT / "infra" / "teardown.sh"), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})


def test_what_the_template_retains_is_what_teardown_looks_for():
    kept = teardown.retained()
    assert {logical for logical, kind in kept.items() if kind == "AWS::DynamoDB::Table"} == \
        {resource_id for resource_id, _ in tables.CFN_TABLES.values()}
    assert {"AssetsBucket", "AccessLogsBucket", "ApiAccessLogGroup", infra.PUSH_ACCESS_LOG_GROUP} <= set(kept)
    assert set(kept.values()) == {"AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::Logs::LogGroup"}


def test_the_list_names_everything_left_and_changes_nothing(aws):
    session, env = aws
    physical, role = made(session)
    result = run(env, STACK)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for logical in ("CurrentTable", "LogTable", "PendingRepliesTable", "AssetsBucket", "AccessLogsBucket",
                    "ApiAccessLogGroup", infra.PUSH_ACCESS_LOG_GROUP):
        assert f" {logical} {physical[logical]}: " in out, logical
    assert infra.WEBHOOK_QUEUE not in out                       # deleted with the stack: not a leftover
    assert "deletion protection on" in out
    assert f"{physical['AssetsBucket']}: 1 objects, 3 earlier versions, 1 delete markers" in out
    assert f"s3://{ARTIFACTS}/{STACK}/: 1 objects of packaged code" in out
    assert physical[teardown.LOGS_ROLE] in out and "update-account" in out
    assert f"infra/teardown.sh {STACK} --delete" in out
    assert session.client("cloudformation").describe_stacks(StackName=STACK)["Stacks"]
    assert session.client("s3").head_bucket(Bucket=physical["AssetsBucket"])


def test_delete_removes_the_stack_and_everything_it_left(aws):
    session, env = aws
    physical, role = made(session)
    stack_id = session.client("cloudformation").describe_stacks(StackName=STACK)["Stacks"][0]["StackId"]
    result = run(env, STACK, "--delete")
    assert result.returncode == 0, result.stderr
    cloudformation = session.client("cloudformation")
    assert cloudformation.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"
    names = set(session.client("dynamodb").list_tables()["TableNames"])
    assert not names & {physical[t] for t in ("CurrentTable", "LogTable", "PendingRepliesTable")}
    buckets = {b["Name"] for b in session.client("s3").list_buckets()["Buckets"]}
    assert physical["AssetsBucket"] not in buckets and physical["AccessLogsBucket"] not in buckets
    groups = {g["logGroupName"] for g in session.client("logs").describe_log_groups()["logGroups"]}
    assert not groups & {f"/butai/{STACK}/api-access", f"/butai/{STACK}/push-access"}
    # the shared artifact bucket keeps another stack's code, and so itself
    left = session.client("s3").list_objects_v2(Bucket=ARTIFACTS)["Contents"]
    assert [o["Key"] for o in left] == ["another-stack/4567cdef"]
    # reported, never changed: the account's setting is everyone's in this region
    assert session.client("apigateway").get_account()["cloudwatchRoleArn"] == role
    assert "update-account" in result.stdout and "system backup for 35 days" in result.stdout
    # run again by the deleted stack's id: nothing is left
    again = run(env, stack_id)
    assert again.returncode == 0, again.stderr
    assert "(DELETE_COMPLETE)" in again.stdout and "  nothing" in again.stdout


def test_no_such_stack_is_said_plainly(aws):
    _, env = aws
    result = run(env, "never-made")
    assert result.returncode == 0, result.stderr
    assert "no stack never-made in us-east-1" in result.stdout and "  nothing" in result.stdout
