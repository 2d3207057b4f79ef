#!/usr/bin/env bash
# Stdio runs against the limit: how close `mcpspec run` over stdio comes to what the server
# itself allows, now that scenarios that only read share a warm server process (see the
# book: Steps, `fresh`).
#
# For each case it measures, best of ROUNDS:
#   start   one start of the server as mcpspec sees it: `mcpspec call ping` (spawn, handshake,
#           one request, stdin closed, exit), run alone
#   wall    the whole `mcpspec run` (process start to exit)
#   starts  the server processes the run started (its JSON report: servers.started)
#   trips   the run's own round trips: the suites' durations summed, minus the time spent
#           starting servers (servers.starting)
# and prints   wall / start   (the issue's figure: at most 4.5 for FastMCP, 5 for server-memory)
# and          wall / limit   with limit = starts × start + trips   (1.0 = nothing but the
#              server's own starts and answers; below 1 when starts overlap on several cores)
# plus the same run with --fresh (one process per scenario, as before the pool) for comparison.
#
# Cases (the pinned third-party servers of tests/interop, installed by scripts/test):
#   fastmcp-conformance   FastMCP stdio server, conformance, --era legacy --era 2026-07-28
#   memory-conformance    Node server-memory, conformance, --era legacy --era 2026-07-28
#   memory-battery        Node server-memory, conformance + security + cross-era (no --era:
#                         each scenario's own eras; the server is legacy-only)
#   memory-battery-legacy the same with --era legacy
#
# The issue's "done when" (#28) is the first and third case, side by side in one run; the
# last lines say how each compares with its target.
#
# Usage:   bench/stdio-pool.sh [CASE...]      (the final measurement: on a quiet machine,
#          ROUNDS=3 bench/stdio-pool.sh        with no argument: every case)
# Env:     ROUNDS=3   MCPSPEC= (default: target/release/mcpspec, built from this tree
#          first)   JOBS= (default: cores)   SPECS= a tree's specs/ folder: its packs run
#          instead of the ones built into the binary (to compare two builds on the same
#          scenarios: the built-in packs grow with the checks)
# Exit:    0 when every run completed (whatever its verdicts); non-zero when a run could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${ROUNDS:-3}
if [[ -z ${MCPSPEC:-} ]]; then
  MCPSPEC=$ROOT/target/release/mcpspec
  cargo build --release --bin mcpspec   # a no-op when up to date: never a stale binary
fi
JOBS=${JOBS:-}
OUT=${BENCH_OUT:-$ROOT/target/bench/stdio-pool}
mkdir -p "$OUT"

die() { echo "error: $*" >&2; exit 1; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer"
[[ -x $MCPSPEC ]] || die "$MCPSPEC is not an executable"
command -v python3 >/dev/null || die "python3 not found"

FASTMCP_PY=$ROOT/tests/interop/fastmcp/.venv/bin/python
FASTMCP_SERVER=$ROOT/tests/interop/fastmcp/server.py
MEMORY_JS=$ROOT/tests/interop/memory-2026.8.31/node_modules/@modelcontextprotocol/server-memory/dist/index.js
[[ -x $FASTMCP_PY ]] || die "FastMCP venv missing: run scripts/test once (it installs tests/interop)"
[[ -f $MEMORY_JS ]] || die "server-memory missing: run scripts/test once (it installs tests/interop)"
DATA=$(mktemp -d)
trap 'rm -rf "$DATA"' EXIT

# target flags per server
fastmcp=(--stdio "$FASTMCP_PY $FASTMCP_SERVER")
memory=(--stdio "node $MEMORY_JS" --env "MEMORY_FILE_PATH=$DATA/memory.jsonl")

now() { python3 -c 'import time; print(time.monotonic())'; }

# best wall time of ROUNDS runs of "$@" (output discarded; any exit code accepted)
best() {
  local best="" t0 t1 d
  for _ in $(seq "$ROUNDS"); do
    t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now)
    d=$(python3 -c "print($t1-$t0)")
    best=$(python3 -c "print(min(float('$d'), float('${best:-1e9}')))")
  done
  echo "$best"
}

# case NAME SERVER-ARRAY-NAME RUN-ARGS...
run_case() {
  local name=$1 server=$2; shift 2
  local -n target=$server
  local jobs=()
  [[ -n $JOBS ]] && jobs=(--jobs "$JOBS")
  local start wall fresh json=$OUT/$name.json
  start=$(best "$MCPSPEC" call ping "${target[@]}" --era legacy)
  wall=$(best "$MCPSPEC" run "$@" "${target[@]}" "${jobs[@]}" --json "$json")
  fresh=$(best "$MCPSPEC" run "$@" "${target[@]}" "${jobs[@]}" --fresh --json "$OUT/$name-fresh.json")
  python3 - "$name" "$start" "$wall" "$fresh" "$json" "$OUT/$name-fresh.json" "$RATIOS" <<'EOF'
import json, sys
name, start, wall, fresh = sys.argv[1], *map(float, sys.argv[2:5])
def load(path):
    r = json.load(open(path))
    s = r.get("servers") or {}
    trips = max(0.0, sum(x["duration"] for x in r["suites"]) - s.get("starting", 0.0))
    verdicts = sorted((x["id"], st["name"], st["outcome"]["status"]) for x in r["suites"] for st in x["steps"])
    return s.get("started", 0), trips, verdicts
starts, trips, verdicts = load(sys.argv[5])
fresh_starts, _, fresh_verdicts = load(sys.argv[6])
limit = starts * start + trips
same = "same verdicts" if verdicts == fresh_verdicts else "VERDICTS DIFFER from --fresh"
for a, b in zip(verdicts, fresh_verdicts):
    if a != b:
        print(f"  first difference: pool {a} / --fresh {b}")
        break
print(f"{name:24} start {start:6.3f}s  wall {wall:7.3f}s = {wall/start:5.2f}x start  "
      f"starts {starts:2} (--fresh: {fresh_starts:2}, {fresh:7.3f}s = {fresh/start:5.2f}x)  "
      f"trips {trips:6.3f}s  wall/limit {wall/limit:4.2f}  {same}")
# The issue's figure, for the summary at the end.
with open(sys.argv[7], "a") as f:
    f.write(f"{name} {wall/start:.2f} {starts} {fresh_starts} {verdicts == fresh_verdicts}\n")
EOF
}

RATIOS=$DATA/ratios; : >"$RATIOS"
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(fastmcp-conformance memory-conformance memory-battery memory-battery-legacy)
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg) rounds: $ROUNDS binary: $MCPSPEC"
if [[ -n ${SPECS:-} ]]; then
  conformance=("$SPECS/conformance-2025-11-25" "$SPECS/conformance-2026-07-28")
  battery=("${conformance[@]}" "$SPECS/security" "$SPECS/cross-era")
  echo "# packs from $SPECS"
else
  conformance=(conformance)
  battery=(conformance security cross-era)
fi
for c in "${cases[@]}"; do
  case $c in
    fastmcp-conformance) run_case "$c" fastmcp "${conformance[@]}" --era legacy --era 2026-07-28 ;;
    memory-conformance) run_case "$c" memory "${conformance[@]}" --era legacy --era 2026-07-28 ;;
    memory-battery) run_case "$c" memory "${battery[@]}" ;;
    memory-battery-legacy) run_case "$c" memory "${battery[@]}" --era legacy ;;
    *) die "unknown case $c" ;;
  esac
done

# The issue's "done when" (#28): wall time as a multiple of one server start, per target.
python3 - "$RATIOS" <<'EOF'
import sys
targets = {"fastmcp-conformance": 4.5, "memory-battery": 5.0}
for name, ratio, starts, fresh_starts, same in (l.split() for l in open(sys.argv[1])):
    if name in targets:
        met = float(ratio) <= targets[name] and same == "True"
        print(f"#28 {name:20} {float(ratio):5.2f}x one start (target <= {targets[name]}), "
              f"{starts} starts (--fresh: {fresh_starts}), verdicts "
              f"{'same' if same == 'True' else 'DIFFER'}: {'met' if met else 'NOT MET'}")
EOF
