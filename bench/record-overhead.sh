#!/usr/bin/env bash
# Issue #44: the recording proxy adds no visible delay (goal: p50 added latency under 1 ms
# over loopback). One virtual client (closed loop) runs tests/load/tools.yaml (a list and a
# call, both judged) against the example server, directly and through `mcpspec record`,
# over stdio and over HTTP (legacy era); the step latency percentiles of `mcpspec load`
# (send to last byte of the reply) are compared.
#
# Usage:   bench/record-overhead.sh            ITERATIONS=3000 (per run)
# Env:     MCPSPEC= SERVER= (default: target/release, built first); BENCH_OUT=DIR
# Prints:  a table row per transport: p50 / p99 direct, through the recorder, and added.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
N=${ITERATIONS:-3000}
OUT=${BENCH_OUT:-$ROOT/target/bench/record-overhead}
mkdir -p "$OUT"
die() { echo "error: $*" >&2; exit 1; }
if [[ -z ${MCPSPEC:-} || -z ${SERVER:-} ]]; then
  cargo build --release -p mcpspec -p mcpspec-example-server --bins >&2
  MCPSPEC=${MCPSPEC:-$ROOT/target/release/mcpspec}
  SERVER=${SERVER:-$ROOT/target/release/mcpspec-example-server}
fi
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# run NAME TARGET-FLAGS...: one closed-loop run; prints "p50 p99" in ms
run() {
  local name=$1; shift
  "$MCPSPEC" load tests/load/tools.yaml "$@" --era legacy --clients 1 --iterations "$N" \
    --json "$OUT/$name.json" >"$OUT/$name.txt" 2>&1 || die "$name: $(tail -3 "$OUT/$name.txt")"
  python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["summary"]["latency"]; print(l["p50Ms"], l["p99Ms"])' "$OUT/$name.json"
}

# start_http LOG CMD...: a process printing `listening on URL` (server) or
# `mcpspec record: listening on URL` (recorder) to stdout or stderr; sets URL and PID.
start_http() {
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  PID=$!; PIDS+=("$PID")
  for _ in $(seq 300); do
    URL=$(grep -o 'listening on http://[^ ]*' "$log" | head -1 | cut -d' ' -f3 || true)
    [[ -n $URL ]] && return 0
    sleep 0.1
  done
  die "no address: $(cat "$log")"
}

row() {
  python3 - "$@" <<'PY'
import sys
name, d50, d99, r50, r99 = sys.argv[1], *map(float, sys.argv[2:])
print(f"| {name} | {d50:.3f} / {d99:.3f} ms | {r50:.3f} / {r99:.3f} ms | {1000*(r50-d50):+.0f} µs / {1000*(r99-d99):+.0f} µs |")
PY
}

echo "| transport | direct p50 / p99 | through mcpspec record | added p50 / p99 |"
echo "|---|---|---|---|"
read -r d50 d99 < <(run stdio-direct --stdio "$SERVER")
rm -rf "$OUT/rec-stdio"
read -r r50 r99 < <(run stdio-recorded --stdio "$MCPSPEC record --out $OUT/rec-stdio -- $SERVER")
row stdio "$d50" "$d99" "$r50" "$r99"

start_http "$OUT/server.log" "$SERVER" --http 127.0.0.1:0
SERVER_URL=$URL
read -r d50 d99 < <(run http-direct --url "$SERVER_URL")
rm -rf "$OUT/rec-http"
start_http "$OUT/recorder.log" "$MCPSPEC" record --out "$OUT/rec-http" --url "$SERVER_URL" --listen 127.0.0.1:0
read -r r50 r99 < <(run http-recorded --url "$URL")
row http "$d50" "$d99" "$r50" "$r99"
