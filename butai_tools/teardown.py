"""What a stack leaves when it is deleted, listed or removed (`infra/teardown.sh`).

``aws cloudformation delete-stack`` keeps what the template retains on purpose — the three tables (the
games and keys; deletion protection on), the assets bucket with every earlier version of every object, the
CloudFront access-log bucket, the API's and the sockets' access-log groups — and never touches what the
stack did not make: the code in the artifact bucket `infra/deploy.sh` uploads to, and the account's API
Gateway setting that names the CloudWatch role API Gateway logs with (one per account and region, set by
this stack's ``ApiGatewayAccount``).  A stack whose first create failed (``ROLLBACK_COMPLETE``) leaves the
same things, as far as it got.

    python -m butai_tools.teardown STACK            list all of it, with what each holds
    python -m butai_tools.teardown STACK --delete   delete the stack, then each of them

STACK is a name, or a stack id (an ARN) for a stack already deleted.  The account-wide API Gateway setting
is reported, never changed: when it names this stack's role, deleting the stack deletes the role and every
API in the region then logs nowhere until another role is set (the command to set one is printed).
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import boto3
from botocore.exceptions import ClientError

from butai_tools import env, infra

LOGS_ROLE = "ApiGatewayLogsRole"


def retained() -> dict[str, str]:
    """Logical id → type of every resource the template keeps when the stack is deleted."""
    return {logical: resource["Type"] for logical, resource in infra.build()["Resources"].items()
            if resource.get("DeletionPolicy") == "Retain" and "Type" in resource}


def artifact_bucket(account: str, region: str) -> str:
    """The bucket `infra/deploy.sh` uploads the code to (the same name it makes, or BUTAI_ARTIFACT_BUCKET)."""
    return os.environ.get(env.ARTIFACT_BUCKET) or f"butai-artifacts-{account}-{region}"


@dataclass
class Leftover:
    kind: str                     # table | bucket | log group | artifacts
    logical: str
    name: str
    holds: str = ""
    remove: Callable[[], None] | None = field(default=None, repr=False)


@dataclass
class Found:
    stack: str
    status: str | None
    leftovers: list[Leftover]
    logging_role_note: str | None


class Teardown:
    def __init__(self, session: boto3.session.Session, out=sys.stdout) -> None:
        self.session = session
        self.region = session.region_name
        self.cloudformation = session.client("cloudformation")
        self.s3 = session.client("s3")
        self.dynamodb = session.client("dynamodb")
        self.logs = session.client("logs")
        self.apigateway = session.client("apigateway")
        self.out = out

    def say(self, text: str) -> None:
        self.out.write(text + "\n")

    # ---------------------------------------------------------------- finding

    def stack_resources(self, stack: str) -> tuple[str | None, list[dict]]:
        try:
            described = self.cloudformation.describe_stacks(StackName=stack)["Stacks"][0]
        except ClientError as exc:
            if "does not exist" in str(exc):
                return None, []
            raise
        paginator = self.cloudformation.get_paginator("list_stack_resources")
        resources = [r for page in paginator.paginate(StackName=described["StackId"])
                     for r in page["StackResourceSummaries"]]
        return described["StackStatus"], resources

    def find(self, stack: str) -> Found:
        status, resources = self.stack_resources(stack)
        keep = retained()
        leftovers = []
        role = None
        for resource in resources:
            logical, physical = resource["LogicalResourceId"], resource.get("PhysicalResourceId")
            if not physical:
                continue                     # never made (a failed create stopped before it)
            if logical == LOGS_ROLE:
                role = physical
            kind = keep.get(logical)
            if kind == "AWS::DynamoDB::Table":
                leftovers.append(self.table(logical, physical))
            elif kind == "AWS::S3::Bucket":
                leftovers.append(self.bucket(logical, physical))
            elif kind == "AWS::Logs::LogGroup":
                leftovers.append(self.log_group(logical, physical))
        name = stack.split("/")[1] if stack.startswith("arn:") else stack
        leftovers.append(self.artifacts(name))
        return Found(name, status, [leftover for leftover in leftovers if leftover is not None],
                     self.logging_role(role))

    def table(self, logical: str, name: str) -> Leftover | None:
        try:
            table = self.dynamodb.describe_table(TableName=name)["Table"]
        except self.dynamodb.exceptions.ResourceNotFoundException:
            return None
        protected = table.get("DeletionProtectionEnabled", False)

        def remove() -> None:
            if protected:
                self.dynamodb.update_table(TableName=name, DeletionProtectionEnabled=False)
                self.dynamodb.get_waiter("table_exists").wait(TableName=name)
            self.dynamodb.delete_table(TableName=name)

        return Leftover("table", logical, name, f"about {table.get('ItemCount', 0)} items, "
                        f"{table.get('TableSizeBytes', 0):,} bytes, deletion protection "
                        f"{'on' if protected else 'off'}", remove)

    def objects(self, bucket: str, prefix: str = "") -> tuple[list[dict], str, int]:
        """Every version and delete marker under `prefix` (a bucket without versioning lists its objects
        the same way), what they are in words, and their bytes."""
        keys, current, earlier, markers, size = [], 0, 0, 0, 0
        for page in self.s3.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=prefix):
            for version in page.get("Versions", []):
                keys.append({"Key": version["Key"], "VersionId": version["VersionId"]})
                size += version.get("Size", 0)
                if version.get("IsLatest"):
                    current += 1
                else:
                    earlier += 1
            for marker in page.get("DeleteMarkers", []):
                keys.append({"Key": marker["Key"], "VersionId": marker["VersionId"]})
                markers += 1
        words = f"{current} objects, {earlier} earlier versions, {markers} delete markers, {size:,} bytes"
        return keys, words, size

    def delete_objects(self, bucket: str, keys: list[dict]) -> None:
        for start in range(0, len(keys), 1000):
            self.s3.delete_objects(Bucket=bucket, Delete={"Objects": keys[start:start + 1000], "Quiet": True})

    def bucket(self, logical: str, name: str) -> Leftover | None:
        try:
            _, words, _ = self.objects(name)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "NoSuchBucket":
                return None
            raise

        def remove() -> None:
            self.delete_objects(name, self.objects(name)[0])
            self.s3.delete_bucket(Bucket=name)

        return Leftover("bucket", logical, name, words, remove)

    def log_group(self, logical: str, name: str) -> Leftover | None:
        groups = [g for g in self.logs.describe_log_groups(logGroupNamePrefix=name)["logGroups"]
                  if g["logGroupName"] == name]
        if not groups:
            return None
        return Leftover("log group", logical, name, f"{groups[0].get('storedBytes', 0):,} bytes stored",
                        lambda: self.logs.delete_log_group(logGroupName=name))

    def artifacts(self, stack: str) -> Leftover | None:
        account = self.session.client("sts").get_caller_identity()["Account"]
        bucket = artifact_bucket(account, self.region)
        prefix = f"{stack}/"
        try:
            keys, _, size = self.objects(bucket, prefix)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchBucket", "AccessDenied"):
                return None
            raise
        if not keys:
            return None

        def remove() -> None:
            self.delete_objects(bucket, self.objects(bucket, prefix)[0])
            # The bucket is shared by every stack deployed from this account and region: removed only empty.
            if not self.s3.list_objects_v2(Bucket=bucket, MaxKeys=1).get("KeyCount"):
                self.s3.delete_bucket(Bucket=bucket)

        return Leftover("artifacts", "(deploy.sh)", f"s3://{bucket}/{prefix}",
                        f"{len(keys)} objects of packaged code, {size:,} bytes", remove)

    def logging_role(self, role: str | None) -> str | None:
        current = self.apigateway.get_account().get("cloudwatchRoleArn") or ""
        if not role or not current.endswith(f":role/{role}"):
            return None
        return (f"API Gateway's account setting in {self.region} names this stack's role {role} "
                f"({current}) for every API's logs in the region. Deleting the stack deletes the role: access "
                "logs of every API there then go nowhere (and a new stage with access logs is refused) until "
                "another role is set: aws apigateway update-account --patch-operations "
                "op=replace,path=/cloudwatchRoleArn,value=ROLE_ARN (a role API Gateway may assume, with the "
                "AmazonAPIGatewayPushToCloudWatchLogs policy); another butai stack's ApiGatewayLogsRole will do.")

    # ---------------------------------------------------------------- reporting, removing

    def report(self, found: Found) -> None:
        if found.status is None:
            self.say(f"no stack {found.stack} in {self.region}")
        else:
            self.say(f"stack {found.stack} ({found.status}); deleting it leaves:")
        if not found.leftovers:
            self.say("  nothing")
        for leftover in found.leftovers:
            self.say(f"  {leftover.kind} {leftover.logical} {leftover.name}: {leftover.holds}")
        if found.logging_role_note:
            self.say(found.logging_role_note)

    def delete(self, found: Found, stack: str) -> None:
        if found.status not in (None, "DELETE_COMPLETE"):
            self.say(f"deleting stack {found.stack} …")
            self.cloudformation.delete_stack(StackName=stack)
            self.cloudformation.get_waiter("stack_delete_complete").wait(StackName=stack)
        for leftover in found.leftovers:
            if leftover.remove is not None:
                leftover.remove()
                self.say(f"deleted {leftover.kind} {leftover.name}")
        if any(leftover.kind == "table" for leftover in found.leftovers):
            self.say("(a deleted table with point-in-time recovery leaves a system backup for 35 days: "
                     "aws dynamodb list-backups --backup-type SYSTEM)")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="infra/teardown.sh", description=__doc__.split("\n\n")[0])
    parser.add_argument("stack", help="stack name, or stack id (ARN) of a deleted stack")
    parser.add_argument("--delete", action="store_true", help="delete the stack, then everything it leaves")
    args = parser.parse_args(list(argv) if argv is not None else None)
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    teardown = Teardown(boto3.session.Session(region_name=region))
    if not teardown.region:
        sys.stderr.write("teardown: no region: set AWS_REGION\n")
        return 2
    found = teardown.find(args.stack)
    teardown.report(found)
    if args.delete:
        teardown.delete(found, args.stack)
    elif found.status is not None or found.leftovers:
        teardown.say(f"infra/teardown.sh {args.stack} --delete removes the stack and all of the above.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
