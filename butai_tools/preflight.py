"""Before `infra/deploy.sh` creates anything: can this stack be created or updated in this account?

Two things make a first deploy fail half-way, leaving retained tables and buckets behind:

- **the stack's state**: a stack whose first create failed is in ``ROLLBACK_COMPLETE`` and can only be
  deleted; one in progress must be waited for;
- **Lambda's concurrency quota**: AWS keeps 100 of the account's concurrent executions unreserved, so the
  reservations the stack asks for (the ``*ReservedConcurrency`` parameters, none by default) must fit in
  the unreserved part above those 100.  New accounts often have a quota of 10 to 50.

It also says what the quota serves at the defaults (docs/scaling.md, "Lambda concurrency").

    python -m butai_tools.preflight STACK DESCRIBE_STACKS_JSON ACCOUNT_SETTINGS_JSON [Param=Value …]

reads what ``aws cloudformation describe-stacks`` (``{}`` for no stack) and ``aws lambda
get-account-settings`` printed, and the deploy's parameter overrides; it exits 1 with what to do, or 0
with a summary, both on stderr.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from butai_tools import infra

# AWS keeps this much of an account's concurrency unreserved, whatever the functions reserve.
UNRESERVED_MINIMUM = 100
# The quota a new account should ask for: the usual default, and what docs/scaling.md sizes 1,000 players in.
ASK_FOR = 1000
QUOTA_CODE = "L-B99A9384"      # Service Quotas: AWS Lambda, "Concurrent executions"
# Concurrent executions per player at the defaults (docs/scaling.md, "Lambda concurrency at the defaults"):
# a scenario stage, or an agent woken by its webhook, takes a few hundredths; an agent that long-polls
# holds one execution the whole time it waits.
PER_PLAYER = {"scenario or webhook stage": 0.025, "agent that long-polls": 1.0}
# States a stack cannot be deployed from, and what to do.
WAIT = ("CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", "DELETE_IN_PROGRESS",
        "ROLLBACK_IN_PROGRESS", "UPDATE_ROLLBACK_IN_PROGRESS", "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS",
        "REVIEW_IN_PROGRESS", "IMPORT_IN_PROGRESS", "IMPORT_ROLLBACK_IN_PROGRESS")
DELETE_FIRST = ("ROLLBACK_COMPLETE", "ROLLBACK_FAILED", "DELETE_FAILED")


def reserved_parameters() -> list[str]:
    return [name for name in infra.parameters() if name.endswith("ReservedConcurrency")]


@dataclass(frozen=True)
class Verdict:
    ok: bool
    message: str


def overrides_of(arguments: Sequence[str]) -> dict[str, str]:
    out = {}
    for argument in arguments:
        key, sep, value = argument.partition("=")
        if not sep:
            raise ValueError(f"parameter override {argument!r} is not Param=Value")
        out[key] = value
    return out


def stack_state(described: Mapping) -> tuple[str | None, dict[str, str]]:
    """(status, parameters) of the stack `describe-stacks` described; (None, {}) when there is none."""
    stacks = described.get("Stacks") or []
    if not stacks:
        return None, {}
    stack = stacks[0]
    return stack.get("StackStatus"), {p["ParameterKey"]: p.get("ParameterValue", "")
                                       for p in stack.get("Parameters") or []}


def check_state(stack: str, status: str | None) -> Verdict | None:
    if status in DELETE_FIRST:
        return Verdict(False, (
            f"stack {stack} is in {status}: its first create failed, and CloudFormation can only delete it. "
            f"Why: aws cloudformation describe-stack-events --stack-name {stack} (the first CREATE_FAILED). "
            f"What it left (retained tables, buckets, log groups): infra/teardown.sh {stack}; remove the stack "
            f"and them: infra/teardown.sh {stack} --delete; then deploy again."))
    if status in WAIT:
        return Verdict(False, f"stack {stack} is {status}: wait for it (aws cloudformation wait …) and deploy again")
    return None


def reservations(overrides: Mapping[str, str], current: Mapping[str, str]) -> dict[str, int]:
    """What each reservation parameter will be after this deploy: given, else kept, else the default."""
    defaults = infra.parameters()
    out = {}
    for name in reserved_parameters():
        value = overrides.get(name, current.get(name, defaults[name]["Default"]))
        try:
            out[name] = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name}={value!r} is not a whole number") from None
    return out


def check_quota(settings: Mapping, wanted: Mapping[str, int], held: Mapping[str, int]) -> Verdict:
    """`wanted`: the stack's reservations after the deploy; `held`: what it reserves now (counted in the
    account's unreserved figure already)."""
    limit = settings.get("AccountLimit") or {}
    quota = int(limit.get("ConcurrentExecutions") or 0)
    unreserved = int(limit.get("UnreservedConcurrentExecutions") or 0)
    asked, holding = sum(wanted.values()), sum(held.values())
    room = unreserved + holding - UNRESERVED_MINIMUM
    if asked and asked > room:
        short = asked - room
        named = ", ".join(f"{k}={v}" for k, v in wanted.items() if v)
        return Verdict(False, (
            f"Lambda concurrency: this stack would reserve {asked} ({named}), but the account's quota is {quota} "
            f"with {unreserved} unreserved, and AWS keeps {UNRESERVED_MINIMUM} of it unreserved: {max(room, 0)} can "
            f"be reserved. Ask for a quota of at least {quota + short} (Service Quotas → AWS Lambda → Concurrent "
            f"executions, {QUOTA_CODE}; `aws service-quotas request-service-quota-increase --service-code lambda "
            f"--quota-code {QUOTA_CODE} --desired-value {max(quota + short, ASK_FOR)}`), or deploy with those "
            f"parameters at 0 (the default: no reservation)."))
    serves = "; ".join(f"about {int(quota / per):,} players on a {kind}" for kind, per in PER_PLAYER.items())
    lines = [f"Lambda concurrency: quota {quota}, {unreserved} unreserved; this stack reserves {asked}. "
             f"At the defaults that serves {serves} (docs/scaling.md), shared with the account's other functions."]
    if quota < ASK_FOR:
        lines.append(f"The quota is below the usual {ASK_FOR}: ask for {ASK_FOR} before players come (Service "
                     f"Quotas → AWS Lambda → Concurrent executions, {QUOTA_CODE}); throttled requests are the "
                     "alarms' *Throttles.")
    return Verdict(True, "\n".join(lines))


def preflight(stack: str, described: Mapping, settings: Mapping, arguments: Sequence[str]) -> Verdict:
    status, current = stack_state(described)
    refused = check_state(stack, status)
    if refused is not None:
        return refused
    overrides = overrides_of(arguments)
    held = reservations({}, current) if status else {name: 0 for name in reserved_parameters()}
    return check_quota(settings, reservations(overrides, current), held)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 3:
        sys.stderr.write("usage: python -m butai_tools.preflight STACK DESCRIBE_STACKS_JSON ACCOUNT_SETTINGS_JSON "
                         "[Param=Value …]\n")
        return 2
    try:
        verdict = preflight(args[0], json.loads(args[1] or "{}"), json.loads(args[2]), args[3:])
    except (ValueError, json.JSONDecodeError) as exc:
        sys.stderr.write(f"deploy.sh: {exc}\n")
        return 1
    sys.stderr.write(("" if verdict.ok else "deploy.sh: ") + verdict.message + "\n")
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
