#!/usr/bin/env bash
# Starts vLLM's OpenAI-compatible server the way butai's classifier needs it.
#
# Environment (defaults in the Dockerfile):
#   MODEL_ID                Hugging Face id or local path; a model SageMaker mounted at
#                           /opt/ml/model (ModelDataUrl) wins
#   SERVED_MODEL_NAME       the `model` name clients send (default: MODEL_ID), which is
#                           BUTAI_SAGEMAKER_MODEL / BUTAI_OPENAI_MODEL on the function side
#   MAX_MODEL_LEN           context length (the function's BUTAI_CONTEXT_LIMIT)
#   MAX_LOGPROBS            the most top_logprobs a request may ask
#   GPU_MEMORY_UTILIZATION  share of GPU memory vLLM takes
#   PORT                    8080 (SageMaker's SAGEMAKER_BIND_TO_PORT wins when set)
#   STRUCTURED_OUTPUTS_BACKEND  empty: vLLM's "auto" (xgrammar for a choice list);
#                           or xgrammar | guidance
#   SM_VLLM_<NAME>=<value>  any further vLLM flag, as in vLLM's own SageMaker entrypoint:
#                           SM_VLLM_MAX_NUM_SEQS=128 → --max-num-seqs 128; a boolean is a bare flag:
#                           SM_VLLM_ENFORCE_EAGER=true (or empty) → --enforce-eager,
#                           SM_VLLM_ENABLE_PREFIX_CACHING=false → --no-enable-prefix-caching
# Arguments after the optional leading `serve` are passed to vLLM as they are.
set -euo pipefail

if [ "${1:-}" = "serve" ]; then
  shift
fi

port="${SAGEMAKER_BIND_TO_PORT:-${PORT:-8080}}"
model="${MODEL_ID:?MODEL_ID names the model to serve}"
if [ -f /opt/ml/model/config.json ]; then
  model=/opt/ml/model
fi

args=(
  "$model"
  --host 0.0.0.0
  --port "$port"
  --served-model-name "${SERVED_MODEL_NAME:-$MODEL_ID}"
  --max-model-len "${MAX_MODEL_LEN:-8192}"
  --max-logprobs "${MAX_LOGPROBS:-32}"
  --gpu-memory-utilization "${GPU_MEMORY_UTILIZATION:-0.90}"
  # The instructions and the option list open every prompt of a call site:
  # their KV cache is reused across players.
  --enable-prefix-caching
  # SageMaker pings every few seconds; the access log would be mostly pings.
  --disable-uvicorn-access-log
)
if [ -n "${STRUCTURED_OUTPUTS_BACKEND:-}" ]; then
  args+=(--structured-outputs-config "{\"backend\": \"${STRUCTURED_OUTPUTS_BACKEND}\"}")
fi

# vLLM's boolean flags take no value (argparse's BooleanOptionalAction): `--enforce-eager true` is refused
# and the server never starts, so true (or an empty value) is the bare flag and false its --no- form.
while IFS='=' read -r key value; do
  if [ -z "$key" ]; then
    continue
  fi
  name="$(printf '%s' "${key#SM_VLLM_}" | tr '[:upper:]_' '[:lower:]-')"
  case "$(printf '%s' "$value" | tr '[:upper:]' '[:lower:]')" in
    ""|true) args+=("--$name") ;;
    false) args+=("--no-$name") ;;
    *) args+=("--$name" "$value") ;;
  esac
done < <(env | grep '^SM_VLLM_' || true)

args+=("$@")
echo "butai-serve: vllm serve ${args[*]}" >&2
exec vllm serve "${args[@]}"
