#!/usr/bin/env bash
# Times what a newcomer waits for: a fresh clone of this repository, then `make run` until the page
# answers 200 (docs/performance.md, "The first make run").  Then a second start of the same clone.
#
#   scripts/clone_to_page.sh [REPOSITORY]      (default: this repository's committed HEAD)
#
# Prints one JSON object: seconds from the clone to the page (and its parts), the second start, the run
# venv's size, and the load average before and after.  The clone lives in a temporary folder, removed at
# the end.  Runs as a newcomer's shell would: no bytecode switches inherited from this environment.
set -euo pipefail
src="${1:-$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
unset PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX VIRTUAL_ENV

now() { date +%s.%N; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
since() { python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$1" "$2"; }

# Starts `make run` in its own process group, waits for the page, then stops it as Ctrl-C would.
# Prints "<seconds until the run stamp existed> <seconds until the page answered 200>".
serve_until_page() {
  local start="$1" stamp_at="" page_at="" url="" pid
  BUTAI_PORT=0 setsid make run >>"$work/run.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    if [ -z "$stamp_at" ] && [ -e .venv/.installed-run ]; then stamp_at="$(now)"; fi
    if [ -z "$url" ] && [ -s .butai/local.json ]; then
      url="$(python3 -c "import json; print(json.load(open('.butai/local.json')).get('api_url', ''))" 2>/dev/null || true)"
    fi
    if [ -n "$url" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/" || true)" = 200 ]; then
      page_at="$(now)"; break
    fi
    if ! kill -0 "$pid" 2>/dev/null; then echo "make run exited early; log: $(tail -20 "$work/run.log")" >&2; exit 1; fi
    sleep 0.2
  done
  kill -INT -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ -n "$page_at" ] || { echo "the page never answered; log: $(tail -20 "$work/run.log")" >&2; exit 1; }
  echo "$(since "$start" "${stamp_at:-$start}") $(since "$start" "$page_at")"
}

load_before="$(load)"
t0="$(now)"
git clone -q "$src" "$work/butai"
cd "$work/butai"
cloned="$(since "$t0" "$(now)")"
read -r install first < <(serve_until_page "$t0")
rm -f .butai/local.json
t1="$(now)"
read -r _ second < <(serve_until_page "$t1")
venv_mb="$(du -sm .venv | cut -f1)"
packages="$(.venv/bin/python -m pip list --format=freeze 2>/dev/null | wc -l)"
python3 - "$cloned" "$install" "$first" "$second" "$venv_mb" "$packages" "$load_before" "$(load)" <<'PY'
import json, sys
cloned, install, first, second = map(float, sys.argv[1:5])
print(json.dumps({"clone_to_page_s": first, "clone_s": cloned, "install_s": round(install - cloned, 1),
                  "first_start_s": round(first - install, 1), "second_start_s": second,
                  "run_venv_mb": int(sys.argv[5]), "packages": int(sys.argv[6]),
                  "load_average_before": sys.argv[7], "load_average_after": sys.argv[8]}, indent=2))
PY
