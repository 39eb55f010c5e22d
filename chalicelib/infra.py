"""Builds infra/resources.json, the template merged into `chalice package`.

The tables come from chalicelib.tables (the one definition); a test keeps the
checked-in file equal to what this module builds.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from . import tables

ROOT = Path(__file__).resolve().parent.parent
RESOURCES = ROOT / "infra" / "resources.json"


def build() -> dict:
    resources = tables.cloudformation_tables()
    env = {var: {"Ref": resource_id} for resource_id, var in tables.CFN_TABLES.values()}
    table_arns = []
    for resource_id, _ in tables.CFN_TABLES.values():
        arn = {"Fn::GetAtt": [resource_id, "Arn"]}
        table_arns += [arn, {"Fn::Join": ["", [arn, "/index/*"]]}]
    resources["APIHandler"] = {"Properties": {
        "Environment": {"Variables": env},
        "Policies": [{"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow",
            "Action": ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
                       "dynamodb:ConditionCheckItem"],
            "Resource": table_arns}]}],
    }}
    return {"Resources": resources}


def render() -> str:
    return json.dumps(build(), ensure_ascii=False, indent=2) + "\n"


if __name__ == "__main__":
    RESOURCES.parent.mkdir(parents=True, exist_ok=True)
    RESOURCES.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {RESOURCES}\n")
