#!/usr/bin/env bash
# Deploys butai to an AWS account (docs/deploy.md walks through it).
#
#   infra/deploy.sh stack STACK [Param=Value …]    package, upload the code, create or update the stack
#   infra/deploy.sh assets STACK                   upload the page and the character images, refresh CloudFront
#   infra/deploy.sh all STACK [Param=Value …]      stack, then assets
#   infra/deploy.sh image STACK                    build the classifier image, push it to the stack's
#                                                  repository, print its URI
#   infra/deploy.sh classifier STACK on|off [Param=Value …]
#                                                  on: image, then the stack with the endpoint;
#                                                  off: the stack without it (no GPU cost)
#   infra/deploy.sh stage STACK NAME [--character ID] [--scenario FILE]
#                                                  create a stage; prints its page URL and keys
#   infra/deploy.sh smoke STACK                    one classification against the stack's endpoint
#   infra/deploy.sh env STACK                      print the BUTAI_* variables of the stack
#                                                  (eval "$(infra/deploy.sh env STACK)")
#
# Parameters not given keep their value on an existing stack.  Before anything is
# created, `stack` checks the stack's state (a failed first create must be removed:
# infra/teardown.sh) and the account's Lambda concurrency quota against what the
# stack reserves, and says what to ask for; after the deploy it deletes the SnapStart
# functions' old versions (each keeps a billed snapshot).  Needs the AWS CLI with
# credentials, and Docker for `image`.  Environment:
#   AWS_REGION / AWS_DEFAULT_REGION   region (else the CLI's configured one)
#   BUTAI_ARTIFACT_BUCKET             S3 bucket for the code (default butai-artifacts-ACCOUNT-REGION,
#                                     created when missing)
#   BUTAI_CHALICE_STAGE               chalice stage to package (default prod)
#   BUTAI_KEEP_VERSIONS               published versions kept per SnapStart function (default 2: the
#                                     live one and the one before it)
#   BUTAI_PACKAGE_DIR                 use this already packaged directory instead of packaging
#   BUTAI_PREFETCH_MODEL              bake this model into the image (docker build-arg PREFETCH_MODEL)
#   BUTAI_VENV_BIN                    the virtualenv's bin (default .venv/bin)
set -euo pipefail
cd "$(dirname "$0")/.."

bin="${BUTAI_VENV_BIN:-.venv/bin}"
py="$bin/python"

die() { echo "deploy.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

region() {
  local r="${AWS_REGION:-${AWS_DEFAULT_REGION:-}}"
  if [ -z "$r" ]; then
    r="$(aws configure get region 2>/dev/null || true)"
  fi
  [ -n "$r" ] || die "no region: set AWS_REGION"
  echo "$r"
}

REGION="$(region)"
export AWS_REGION="$REGION" AWS_DEFAULT_REGION="$REGION"

outputs() {  # STACK → the stack's outputs as JSON
  aws cloudformation describe-stacks --stack-name "$1" --query 'Stacks[0].Outputs' --output json
}

output() {  # STACK KEY → one output's value ('' when the stack has no such output)
  outputs "$1" | "$py" -c '
import json, sys
key = sys.argv[1]
print(next((o["OutputValue"] for o in json.load(sys.stdin) or [] if o["OutputKey"] == key), ""))' "$2"
}

stack_env() {  # STACK → export lines for the operator CLI (butai … --aws)
  local mapping
  mapping="$("$py" -m butai_tools.infra --output-env)"
  outputs "$1" | "$py" -c '
import json, shlex, sys
mapping = json.loads(sys.argv[1])
values = {o["OutputKey"]: o["OutputValue"] for o in json.load(sys.stdin) or []}
missing = sorted(k for k in mapping if k not in values)
if missing:
    sys.exit("deploy.sh: the stack has no output " + ", ".join(missing))
for key, var in sorted(mapping.items(), key=lambda kv: kv[1]):
    print(f"export {var}={shlex.quote(values[key])}")
print(f"export AWS_REGION={shlex.quote(sys.argv[2])}")' "$mapping" "$REGION"
}

artifact_bucket() {
  local bucket="${BUTAI_ARTIFACT_BUCKET:-}"
  if [ -z "$bucket" ]; then
    local account
    account="$(aws sts get-caller-identity --query Account --output text)"
    bucket="butai-artifacts-${account}-${REGION}"
  fi
  if ! aws s3api head-bucket --bucket "$bucket" >/dev/null 2>&1; then
    echo "creating the artifact bucket $bucket" >&2
    aws s3 mb "s3://$bucket" --region "$REGION" >&2
    aws s3api put-public-access-block --bucket "$bucket" --public-access-block-configuration \
      BlockPublicAcls=true,IgnorePublicAcls=true,BlockPublicPolicy=true,RestrictPublicBuckets=true >&2
  fi
  echo "$bucket"
}

preflight() {  # STACK [Param=Value …]: the stack's state and the account's Lambda quota, before anything is made
  local stack="$1"; shift
  local described settings
  # No such stack yet: describe-stacks fails, and the check sees a first create.
  described="$(aws cloudformation describe-stacks --stack-name "$stack" --output json 2>/dev/null || echo '{}')"
  settings="$(aws lambda get-account-settings --output json)"
  "$py" -m butai_tools.preflight "$stack" "$described" "$settings" "$@"
}

prune_versions() {  # STACK: delete the published versions no alias needs (each keeps a billed SnapStart snapshot)
  local stack="$1" keep="${BUTAI_KEEP_VERSIONS:-2}"
  local logical name versions aliases version
  for logical in $("$py" -m butai_tools.versions functions); do
    name="$(aws cloudformation describe-stack-resource --stack-name "$stack" --logical-resource-id "$logical" \
      --query StackResourceDetail.PhysicalResourceId --output text)"
    versions="$(aws lambda list-versions-by-function --function-name "$name" --output json)"
    aliases="$(aws lambda list-aliases --function-name "$name" --output json)"
    for version in $("$py" -m butai_tools.versions select "$keep" "$versions" "$aliases"); do
      echo "deleting $name version $version (its SnapStart snapshot is billed while it exists)" >&2
      aws lambda delete-function --function-name "$name" --qualifier "$version" >&2
    done
  done
}

cmd_stack() {
  local stack="$1"; shift
  preflight "$stack" "$@"
  local dir="${BUTAI_PACKAGE_DIR:-}"
  if [ -z "$dir" ]; then
    dir=build/package
    infra/package.sh "${BUTAI_CHALICE_STAGE:-prod}" "$dir"
  fi
  [ -f "$dir/sam.json" ] || die "$dir/sam.json is missing: run infra/package.sh"
  local bucket
  bucket="$(artifact_bucket)"
  aws cloudformation package --template-file "$dir/sam.json" --s3-bucket "$bucket" --s3-prefix "$stack" \
    --output-template-file "$dir/packaged.yaml"
  local overrides=()
  if [ "$#" -gt 0 ]; then
    overrides=(--parameter-overrides "$@")
  fi
  # The template is far over the 51,200 bytes CloudFormation takes inline: it goes by the artifact bucket.
  aws cloudformation deploy --stack-name "$stack" --template-file "$dir/packaged.yaml" \
    --s3-bucket "$bucket" --s3-prefix "$stack" \
    --capabilities CAPABILITY_IAM CAPABILITY_AUTO_EXPAND --no-fail-on-empty-changeset \
    ${overrides[@]+"${overrides[@]}"}
  prune_versions "$stack"
  echo "stack $stack: page $(output "$stack" PageURL)"
}

use_stack_env() {  # STACK → exports the stack's BUTAI_* variables here (fails when the stack lacks them)
  local lines
  lines="$(stack_env "$1")"
  eval "$lines"
}

cmd_assets() {
  local stack="$1"
  use_stack_env "$stack"
  "$py" - <<'PY'
from pathlib import Path

from chalicelib import aws
from chalicelib.config import Settings
from butai_tools.stage import images

settings = Settings.from_env()
s3 = aws.client("s3", settings)
print("page:", ", ".join(images.upload_page(s3, settings.bucket, Path("static"))))
print("characters:", ", ".join(images.upload_all_characters(s3, settings.bucket, Path("static/characters"))))
PY
  aws cloudfront create-invalidation --distribution-id "$(output "$stack" DistributionId)" \
    --paths "/index.html" "/app.js" "/voice.js" "/style.css" "/characters/*" --query 'Invalidation.Id' --output text
}

image_tag() {  # the vLLM tag (without the base image's digest), and a hash of what goes into the image
  local vllm digest
  vllm="$(sed -n 's/^FROM [^:]*:\([^ @]*\).*/\1/p' infra/classifier/Dockerfile | head -n 1)"
  digest="$( (cat infra/classifier/Dockerfile infra/classifier/serve.sh; echo "${BUTAI_PREFETCH_MODEL:-}") \
    | sha256sum | cut -c1-12)"
  echo "vllm-${vllm}-${digest}"
}

cmd_image() {
  local stack="$1"
  local repo tag
  repo="$(output "$stack" ClassifierRepositoryUri)"
  [ -n "$repo" ] || die "stack $stack has no ClassifierRepositoryUri: deploy the stack first"
  tag="$(image_tag)"
  if aws ecr describe-images --repository-name "${repo#*/}" --image-ids "imageTag=$tag" >/dev/null 2>&1; then
    echo "image $repo:$tag is already pushed" >&2
  else
    aws ecr get-login-password --region "$REGION" | docker login --username AWS --password-stdin "${repo%%/*}" >&2
    docker build --platform linux/amd64 --build-arg "PREFETCH_MODEL=${BUTAI_PREFETCH_MODEL:-}" \
      -t "$repo:$tag" infra/classifier >&2
    docker push "$repo:$tag" >&2
  fi
  echo "$repo:$tag"
}

cmd_classifier() {
  local stack="$1" state="${2:-}"
  shift
  if [ "$#" -gt 0 ]; then
    shift
  fi
  case "$state" in
    on)
      local uri
      uri="$(cmd_image "$stack")"
      cmd_stack "$stack" ClassifierEnabled=true "ClassifierImageUri=$uri" "$@"
      echo "classifier endpoint: $(output "$stack" ClassifierEndpointName)" ;;
    off)
      cmd_stack "$stack" ClassifierEnabled=false "$@" ;;
    *) die "classifier STACK on|off" ;;
  esac
}

cmd_stage() {
  local stack="$1"; shift
  [ "$#" -ge 1 ] || die "stage STACK NAME [--character ID] [--scenario FILE]"
  use_stack_env "$stack"
  "$bin/butai" stage create "$@" --aws
}

cmd_smoke() {
  local stack="$1"; shift
  local endpoint
  endpoint="$(output "$stack" ClassifierEndpointName)"
  [ -n "$endpoint" ] || die "stack $stack has no classifier endpoint (infra/deploy.sh classifier $stack on)"
  "$py" scripts/classifier_smoke.py --endpoint "$endpoint" --region "$REGION" "$@"
}

[ "$#" -ge 2 ] || usage
command="$1" stack="$2"
shift 2
case "$command" in
  stack) cmd_stack "$stack" "$@" ;;
  assets) cmd_assets "$stack" ;;
  all) cmd_stack "$stack" "$@"; cmd_assets "$stack" ;;
  image) cmd_image "$stack" ;;
  classifier) cmd_classifier "$stack" "$@" ;;
  stage) cmd_stage "$stack" "$@" ;;
  smoke) cmd_smoke "$stack" "$@" ;;
  env) stack_env "$stack" ;;
  *) usage ;;
esac
