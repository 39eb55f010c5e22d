#!/usr/bin/env bash
# Builds the deployable template without an AWS account: `chalice package`
# merged with infra/resources.json, then cfn-lint on it and on what SAM's
# transform makes of it.  Needs PyPI (the Lambda's
# wheels) and an interpreter of the runtime's Python version (its bytecode).
#
#   infra/package.sh [CHALICE_STAGE] [OUTDIR]     (default: prod build/package)
#
# Writes OUTDIR/sam.json (SAM template, CodeUri ./deployment.zip),
# OUTDIR/sam-transformed.json (the same after SAM's transform: what the stack
# creates, for reading and linting) and OUTDIR/deployment.zip; `infra/deploy.sh stack` uploads and deploys them.
# Any step that fails stops it with a non-zero exit and no package: a
# dependency without a wheel for the runtime, a native module the runtime
# could not load, a template cfn-lint refuses.
set -euo pipefail
cd "$(dirname "$0")/.."

stage="${1:-prod}"
out="${2:-build/package}"
bin="${BUTAI_VENV_BIN:-.venv/bin}"

# infra/resources.json is generated (python -m butai_tools.infra): refuse a stale one.
"$bin/python" -m butai_tools.infra --check
# The runtime's interpreter (butai_tools/lambda_runtime.py) compiles the bytecode the package ships.
runtime_python="$("$bin/python" -m butai_tools.lambda_runtime python)"

rm -rf "$out"
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"    # chalice runs in the project copy
work="$(dirname "$out")/.$(basename "$out").work"
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
project="$work/project"
mkdir -p "$project/.chalice"
# Chalice zips a project's app.py, chalicelib/ and vendor/: a copy with the sources only (no local
# bytecode) and, in vendor/, the runtime's wheels. Without a requirements.txt chalice installs nothing
# itself: it would pick wheels for the Python it runs under, and only warn when one is missing.
cp app.py "$project/"
cp .chalice/config.json "$project/.chalice/"
tar --exclude=__pycache__ -cf - chalicelib | tar -xf - -C "$project"
"$bin/python" -m butai_tools.lambda_deps install requirements.txt "$project/vendor"

# chalice wants a region to exist; the template itself uses ${AWS::Region}.
AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-${AWS_REGION:-us-east-1}}" \
  "$bin/chalice" --project-dir "$project" package --stage "$stage" --merge-template "$PWD/infra/resources.json" "$out"

# API Gateway calls the function's alias: SnapStart snapshots published versions only.
"$bin/python" -m butai_tools.infra --route-to-alias "$out/sam.json"
# botocore's data for the services the functions call, not the other 440 (butai_tools/botocore_trim.py).
"$bin/python" -m butai_tools.botocore_trim "$out/deployment.zip"
# Every pinned dependency, and only those; wheel tags and native modules fit the runtime.
"$bin/python" -m butai_tools.lambda_deps check "$out/deployment.zip" requirements.txt
# /var/task is read-only: without bytecode every new Lambda instance would compile boto3, pydantic and
# the app before its first request (docs/performance.md, cold start). Compiled by the runtime's Python,
# with nothing but its standard library.
"$runtime_python" -I -S butai_tools/bytecode.py "$out/deployment.zip" "$out/sam.json"

# What CloudFormation creates is the template after SAM's transform (the API's deployment and stage, the
# functions' versions and aliases, the permissions): lint that too, not only what chalice wrote.
"$bin/python" -m butai_tools.infra --transform "$out/sam.json" "$out/sam-transformed.json"
if [ -x "$bin/cfn-lint" ]; then
  "$bin/cfn-lint" "$out/sam.json" "$out/sam-transformed.json"
else
  echo "package.sh: cfn-lint not installed; skipped the template check" >&2
fi
echo "packaged: $out/sam.json $out/deployment.zip"
