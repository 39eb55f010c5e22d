#!/usr/bin/env bash
# Builds the deployable template without an AWS account: `chalice package`
# merged with infra/resources.json, then cfn-lint.  Needs only PyPI (chalice
# downloads the Lambda's Linux wheels).
#
#   infra/package.sh [CHALICE_STAGE] [OUTDIR]     (default: prod build/package)
#
# Writes OUTDIR/sam.json (SAM template, CodeUri ./deployment.zip) and
# OUTDIR/deployment.zip; `infra/deploy.sh stack` uploads and deploys them.
set -euo pipefail
cd "$(dirname "$0")/.."

stage="${1:-prod}"
out="${2:-build/package}"
bin="${BUTAI_VENV_BIN:-.venv/bin}"

# infra/resources.json is generated (python -m butai_tools.infra): refuse a stale one.
"$bin/python" -m butai_tools.infra --check

rm -rf "$out"
mkdir -p "$(dirname "$out")"
# chalice wants a region to exist; the template itself uses ${AWS::Region}.
AWS_DEFAULT_REGION="${AWS_DEFAULT_REGION:-${AWS_REGION:-us-east-1}}" \
  "$bin/chalice" package --stage "$stage" --merge-template infra/resources.json "$out"

# botocore's data for the services the functions call, not the other 440 (butai_tools/botocore_trim.py).
"$bin/python" -m butai_tools.botocore_trim "$out/deployment.zip"
# Chalice ships sources only and /var/task is read-only: without bytecode every new Lambda instance
# compiles boto3, pydantic and the app before its first request (docs/performance.md, cold start).
"$bin/python" -m butai_tools.bytecode "$out/deployment.zip" "$out/sam.json"

# SudachiPy publishes Linux wheels for glibc 2.28+ only: packaged under Python 3.11 (the python3.11
# runtime, Amazon Linux 2) chalice leaves it out, and interpretation would fall back to surface matching.
if ! "$bin/python" - "$out/deployment.zip" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
sys.exit(0 if any(n.startswith("sudachipy/") for n in names) else 1)
PY
then
  echo "package.sh: WARNING: the package has no SudachiPy (no wheel for this Lambda runtime);" \
       "interpretation will fall back to surface matching. Package with Python 3.12+ (docs/deploy.md)." >&2
fi

if [ -x "$bin/cfn-lint" ]; then
  "$bin/cfn-lint" "$out/sam.json"
else
  echo "package.sh: cfn-lint not installed; skipped the template check" >&2
fi
echo "packaged: $out/sam.json $out/deployment.zip"
