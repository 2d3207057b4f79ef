#!/usr/bin/env bash
# Issue #37, "done when": a load run at a fixed rate holds that rate within 2 % for 60 s
# with the error budget met, against the example server over HTTP (legacy and modern era)
# and over stdio, and against server-everything over HTTP (legacy: the only era it speaks).
#
# Each case is one `mcpspec load` (release build) of an open-loop rate:
#   example-http-legacy   tests/load/tools.yaml (tools/list + tools/call slow ms=0, both
#                         judged), --url, --era legacy (a session per connection)
#   example-http-modern   the same, --era modern (stateless requests)
#   example-stdio         the same, --stdio (one server process per connection, --jobs 2)
#   everything-http       tests/load/everything.yaml (tools/list + echo + get-sum, judged),
#                         the pinned server-everything of tests/interop, --era legacy
# with --warmup 5s (not counted), --duration 60s, --max-error-rate 0 (the error budget:
# no error at all), and --p99 1s as a sanity budget.
#
# Per case it prints: target rate, achieved rate (measured iterations / measured seconds),
# its deviation from the target, the slowest and fastest whole second of the series, the
# iterations left unfinished at the end, errors, p50/p99, the generator's CPU, the budgets'
# verdict and HELD when |achieved - target| <= 2 % of target and every budget held.
#
# Usage:   bench/load-fixed-rate.sh [CASE...]           (no argument: every case)
# Env:     RATE=100 (iterations/s of the example-server cases; 2 requests each)
#          EVERYTHING_RATE=25 (iterations/s of server-everything; 3 requests each)
#          DURATION=60s WARMUP=5s   MCPSPEC= SERVER= (default: target/release, built first)
#          BENCH_OUT=DIR (JSON reports; default target/bench/load-fixed-rate)
# Needs:   cargo; node and tests/interop/everything-2026.8.31/node_modules (scripts/test or
#          `npm ci --prefix tests/interop/everything-2026.8.31 --ignore-scripts`) for
#          everything-http; python3.
# Exit:    0 when every run ran (whatever its verdict: a busy machine may miss the 2 %);
#          non-zero when a run could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RATE=${RATE:-100}
EVERYTHING_RATE=${EVERYTHING_RATE:-25}
DURATION=${DURATION:-60s}
WARMUP=${WARMUP:-5s}
OUT=${BENCH_OUT:-$ROOT/target/bench/load-fixed-rate}
mkdir -p "$OUT"

die() { echo "error: $*" >&2; exit 1; }
if [[ -z ${MCPSPEC:-} || -z ${SERVER:-} ]]; then
  cargo build --release -p mcpspec -p mcpspec-example-server --bins >&2
  MCPSPEC=${MCPSPEC:-$ROOT/target/release/mcpspec}
  SERVER=${SERVER:-$ROOT/target/release/mcpspec-example-server}
fi
[[ -x $MCPSPEC ]] || die "$MCPSPEC is not an executable"
[[ -x $SERVER ]] || die "$SERVER is not an executable"
command -v python3 >/dev/null || die "python3 not found"
EVERYTHING_DIR=$ROOT/tests/interop/everything-2026.8.31
EVERYTHING_JS=$EVERYTHING_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# start_http LOG CMD...: start an HTTP server printing `listening on URL`; sets URL and PID.
start_http() {
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 300); do
    URL=$(grep -o 'listening on http://[^ ]*' "$log" | head -1 | cut -d' ' -f3 || true)
    [[ -n $URL ]] && return 0
    kill -0 "$PID" 2>/dev/null || die "server exited: $(cat "$log")"
    sleep 0.1
  done
  die "server did not listen: $(cat "$log")"
}
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# load NAME RATE SCENARIO TARGET-FLAGS...: one run, its figures
load() {
  local name=$1 rate=$2 scenario=$3; shift 3
  local json=$OUT/$name.json code=0
  echo "==> $name: $rate/s for $DURATION (warm-up $WARMUP)" >&2
  "$MCPSPEC" load "$scenario" "$@" --rate "$rate" --duration "$DURATION" --warmup "$WARMUP" \
    --max-error-rate 0 --p99 1s --json "$json" >"$OUT/$name.txt" 2>&1 || code=$?
  [[ $code -le 1 && -f $json ]] || die "$name: mcpspec load exited $code: $(tail -5 "$OUT/$name.txt")"
  python3 - "$name" "$json" <<'EOF'
import json, sys
name, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
s = r["summary"]
target = r["targetRate"]
achieved = s["iterations"] / s["measuredSeconds"]
dev = 100.0 * (achieved - target) / target
whole = [x["iterations"] for x in r["series"]][:-1] or [0]  # the last second is partial
held_budgets = all(b["passed"] for b in r["budgets"])
held = abs(dev) <= 2.0 and held_budgets
errs = sum(s["errors"].values()) if s["errors"] else 0
print(f"| {name} | {target:g}/s | {achieved:.2f}/s | {dev:+.2f} % | {min(whole)}–{max(whole)}/s "
      f"| {r['unfinished']} | {s['failedIterations']} ({errs} errors) "
      f"| {s['latency']['p50Ms']:.2f} / {s['latency']['p99Ms']:.2f} ms "
      f"| {r['generatorCpu']['percent']:.0f} % "
      f"| {'met' if held_budgets else 'BROKE'} | {'HELD' if held else 'MISSED'} |")
EOF
}

example_http() {
  local era=$1
  start_http "$OUT/example-$era.log" "$SERVER" --http 127.0.0.1:0
  load "example-http-$era" "$RATE" tests/load/tools.yaml --url "$URL" --era "$era"
  stop "$PID"
}

case_run() {
  case $1 in
    example-http-legacy) example_http legacy ;;
    example-http-modern) example_http modern ;;
    example-stdio) load example-stdio "$RATE" tests/load/tools.yaml --stdio "$SERVER" --jobs 2 ;;
    everything-http)
      command -v node >/dev/null || die "node not found"
      [[ -f $EVERYTHING_JS ]] || die "server-everything missing: npm ci --prefix $EVERYTHING_DIR --ignore-scripts"
      start_http "$OUT/everything.log" env PORT=0 node --import "$EVERYTHING_DIR/listen-loopback.mjs" \
        "$EVERYTHING_JS" streamableHttp
      load everything-http "$EVERYTHING_RATE" tests/load/everything.yaml --url "$URL" --era legacy
      stop "$PID"
      ;;
    *) die "unknown case $1" ;;
  esac
}

CASES=("$@")
[[ ${#CASES[@]} -gt 0 ]] || CASES=(example-http-legacy example-http-modern example-stdio everything-http)
echo "mcpspec $("$MCPSPEC" --version | awk '{print $2}'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo
echo "| case | target | achieved | deviation | whole seconds (min–max) | unfinished | failed iterations | p50 / p99 | generator CPU | budgets | 2 % held |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for c in "${CASES[@]}"; do case_run "$c"; done
echo
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at end; JSON reports in $OUT"
