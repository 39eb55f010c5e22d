#!/usr/bin/env bash
# GPU benchmark of the in-process classifier (`butai bench classify`) on one CUDA machine, no network.
#
#   OUT=/some/dir bash scripts/gpu_bench.sh        # from the repository root
#
# - Python: $PYTHON if set, else the first of .venv/bin/python, python3, python whose torch sees a CUDA device.
# - Packages: torch, transformers and tokenizers must already be there (the CUDA build of torch cannot be
#   installed offline).  The rest of requirements.txt that is missing (boto3, pydantic, pykakasi, ...) is
#   installed into a private folder: from wheels in $WHEELHOUSE (default build/wheels) when there are any,
#   else from the package index when it can be reached; otherwise the script says what is missing and stops.
# - Runs `python -m butai_tools.cli bench classify --device cuda --size 1.5b --json`, then `--size 4b`,
#   each under `timeout`, the whole script well under 9 minutes; writes classify-<size>.json (the figures),
#   classify-<size>.log (stderr) and summary.txt (the tables, and the environment) under $OUT.
# It only reads the GPU's state (nvidia-smi -L); it never resets or reconfigures it.
# A dry run of the same steps without a GPU: BENCH_DEVICE=cpu SIZES=tiny ITERATIONS=5 bash scripts/gpu_bench.sh
set -u
cd "$(dirname "$0")/.." || exit 2

START=$SECONDS
BUDGET=${BENCH_BUDGET_S:-510}            # whole script, seconds (under 9 minutes)
OUT=${OUT:-./gpu-bench-out}
WHEELHOUSE=${WHEELHOUSE:-build/wheels}
SITE=${BENCH_SITE:-/tmp/butai-bench-site}
ITERATIONS=${ITERATIONS:-200}
DEVICE=${BENCH_DEVICE:-cuda}
SIZES=${SIZES:-1.5b 4b}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false

say() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - (SECONDS - START))); }

# ---- Python with CUDA torch
TORCH_INFO='import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, end=" ")'
cuda_ok() {
    timeout 60 "$1" -c "import torch, sys; sys.exit(0 if '$DEVICE' == 'cpu' or torch.cuda.is_available() else 1)" \
        >/dev/null 2>&1
}
PY=""
for candidate in ${PYTHON:-} .venv/bin/python python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 && cuda_ok "$candidate"; then PY=$candidate; break; fi
done
if [ -z "$PY" ]; then
    say "no Python here has a torch that sees a CUDA device; tried: ${PYTHON:-} .venv/bin/python python3 python"
    for candidate in ${PYTHON:-} .venv/bin/python python3 python; do
        command -v "$candidate" >/dev/null 2>&1 || continue
        say "  $candidate: $("$candidate" -c "$TORCH_INFO"'; print("available", torch.cuda.is_available())' 2>&1 | tail -1)"
    done
    exit 3
fi
say "python: $(command -v "$PY") ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"

# ---- what the command needs that is missing
MODULES="torch transformers tokenizers jinja2 boto3 botocore pydantic pykakasi jaconv deprecated"
missing() {
    "$PY" - "$MODULES" <<'EOF'
import importlib, sys
gone = []
for name in sys.argv[1].split():
    try:
        importlib.import_module(name)
    except Exception:
        gone.append(name)
print(" ".join(gone))
EOF
}
MISSING=$(missing)
if [ -n "$MISSING" ]; then
    say "missing Python modules: $MISSING"
    case " $MISSING " in
        *" torch "*|*" transformers "*|*" tokenizers "*)
            say "torch, transformers and tokenizers must already be installed (with CUDA); cannot go on"
            exit 3 ;;
    esac
    mkdir -p "$SITE"
    if ls "$WHEELHOUSE"/*.whl >/dev/null 2>&1; then
        say "installing the wheels of $WHEELHOUSE into $SITE"
        timeout 120 "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$SITE" "$WHEELHOUSE"/*.whl 2>&1 | tail -5 | tee -a "$SUMMARY"
    else
        say "no wheels in $WHEELHOUSE; trying the package index for requirements.txt (fails fast offline)"
        timeout 120 "$PY" -m pip install -q --no-cache-dir --retries 0 --timeout 10 --target "$SITE" \
            -r requirements.txt 2>&1 | tail -5 | tee -a "$SUMMARY"
    fi
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
    MISSING=$(missing)
    if [ -n "$MISSING" ]; then
        say "STILL MISSING: $MISSING"
        say "bring them as wheels for this Python: pip download --no-deps --only-binary=:all: -d $WHEELHOUSE" \
            "boto3 botocore s3transfer jmespath pydantic pydantic_core annotated-types typing-inspection" \
            "pykakasi jaconv Deprecated (versions as in requirements.txt), then run this script again"
        exit 3
    fi
fi
if ! "$PY" -c 'from butai_tools.cli import build_parser; build_parser()' >>"$SUMMARY" 2>&1; then
    say "the butai command does not load here (see above)"
    exit 3
fi
"$PY" -c "$TORCH_INFO"'; import transformers; print("| transformers", transformers.__version__)' 2>&1 \
    | tee -a "$SUMMARY"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>&1 | tee -a "$SUMMARY"

# ---- the runs
STATUS=0
run_size() {      # size, planned seconds
    local size=$1 planned=$2 limit
    limit=$(left)
    [ "$limit" -gt "$planned" ] && limit=$planned
    if [ "$limit" -lt 30 ]; then
        say "size $size: skipped, ${limit}s left of the ${BUDGET}s budget"
        STATUS=1
        return
    fi
    say ""
    say "== size $size (timeout ${limit}s)"
    local json="$OUT/classify-$size.json" log="$OUT/classify-$size.log" t0=$SECONDS rc
    timeout --kill-after=10 "$limit" "$PY" -m butai_tools.cli bench classify --device "$DEVICE" --size "$size" \
        --iterations "$ITERATIONS" --json >"$json" 2>"$log"
    rc=$?
    say "size $size: exit $rc after $((SECONDS - t0))s"
    if [ "$rc" -ne 0 ]; then
        STATUS=1
        [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && say "size $size: TIMED OUT"
        tail -20 "$log" | tee -a "$SUMMARY"
        return
    fi
    "$PY" - "$json" <<'EOF' 2>&1 | tee -a "$SUMMARY"
import json, sys
from butai_tools.bench.classify import print_table
print_table(json.load(open(sys.argv[1], encoding="utf-8")))
EOF
}
for size in $SIZES; do
    case $size in
        4b) run_size "$size" 260 ;;
        *) run_size "$size" 200 ;;
    esac
done
say ""
say "done in $((SECONDS - START))s; results under $OUT"
exit $STATUS
