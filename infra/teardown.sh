#!/usr/bin/env bash
# Lists, or removes, everything a butai stack leaves behind (docs/deploy.md, "Deleting the stack").
#
#   infra/teardown.sh STACK            list what deleting the stack would leave, with what each holds:
#                                      the retained tables (deletion protection on), the assets bucket and
#                                      every earlier version of its objects, the access-log bucket and log
#                                      groups, the code deploy.sh uploaded, and whether the account's API
#                                      Gateway logging role is this stack's
#   infra/teardown.sh STACK --delete   delete the stack, then all of those (the account-wide API Gateway
#                                      setting is reported, never changed)
#
# STACK may be a stack id (ARN) for a stack already deleted, or one whose first create failed
# (ROLLBACK_COMPLETE).  Needs AWS credentials; the region is AWS_REGION (or the CLI's configured one).
# BUTAI_ARTIFACT_BUCKET names the artifact bucket if deploy.sh was given one.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="${BUTAI_VENV_BIN:-.venv/bin}"
if [ -z "${AWS_REGION:-${AWS_DEFAULT_REGION:-}}" ]; then
  AWS_REGION="$(aws configure get region 2>/dev/null || true)"
  export AWS_REGION
fi
[ "$#" -ge 1 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
exec "$bin/python" -m butai_tools.teardown "$@"
