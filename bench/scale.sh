#!/usr/bin/env bash
# Scale benchmark: how mcpspec's wall time and memory grow with the number of
# scenario files, how --jobs helps, and how fast `mcpspec validate` is.
#
# What it does:
#   1. cargo build --release --workspace
#   2. generates into a temp dir
#      (a) packs of SIZES scenario files (default 250, 500, 1000), 5 steps each,
#          against the example server: tools/list (+ expectation), tools/call echo
#          and add (+ expectations), resources/read example://readme, prompts/get
#          greet — every step checked, every scenario different (its own values);
#      (b) VALIDATE_FILES (default 1000) richer scenario files for `validate`
#          (vars, templates, captures, tags, eras, schemas, regexes, retry, ...).
#   3. measures, best of ROUNDS (after WARMUP untimed runs; the sizes and jobs
#      values alternate inside each round so drift hits them alike):
#      - wall time of `mcpspec run PACK --stdio SERVER --era 2026-07-28 --jobs J`
#        for every size and every J in JOBS (default "1 2"); each run must exit 0
#        with exactly 5 x size steps passed;
#      - peak RSS of each run (GNU `/usr/bin/time -v`, "Maximum resident set
#        size"; without it, VmHWM sampled from /proc every 10 ms);
#      - wall time of `mcpspec validate DIR` on the VALIDATE_FILES files (and,
#        for context, on the largest run pack).
#   4. prints a table: time per scenario, speed-up of the largest J over J=1,
#      RSS and its growth per 1,000 scenarios, validate time vs its 1 s target.
#
# Every scenario runs on its own connection: each one spawns and shuts down one
# example-server process, so "time per scenario" includes a process spawn.
#
# Usage:   bench/scale.sh
# Env:     ROUNDS=3            timed runs per measurement (best-of-N is reported)
#          WARMUP=1            untimed runs of the largest size first (page cache, CPU clocks)
#          SIZES="250 500 1000"  scenario counts of the run packs
#          JOBS="1 2"          --jobs values (the first is the speed-up baseline)
#          VALIDATE_FILES=1000 files of the validation set
#          VALIDATE_ROUNDS=5   timed `validate` runs
#          BENCH_OUT=DIR       logs and report (default: target/bench/scale)
#          KEEP_TMP=1          keep the generated scenarios (path printed)
#          JUNIT=1             every run also writes a JUnit report (--junit FILE), written
#                              as the suites finish (memory as without it)
# Needs:   cargo; GNU time (apt package `time`) for exact peak RSS (optional).
# Exit:    0 when every run completed and passed; non-zero otherwise. Missing the
#          validate target (< 1 s) is reported, not an error (shared machines).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-1}
SIZES=${SIZES:-"250 500 1000"}
JOBS=${JOBS:-"1 2"}
VALIDATE_FILES=${VALIDATE_FILES:-1000}
VALIDATE_ROUNDS=${VALIDATE_ROUNDS:-5}
OUT=${BENCH_OUT:-$ROOT/target/bench/scale}
KEEP_TMP=${KEEP_TMP:-0}
JUNIT=${JUNIT:-0}
ERA=2026-07-28
STEPS_PER_SCENARIO=5
VALIDATE_TARGET=1.0

die() { echo "error: $*" >&2; exit 1; }
note() { echo "==> $*" >&2; }
posint() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }

posint "$ROUNDS" || die "ROUNDS must be a positive integer (got '$ROUNDS')"
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP must be a non-negative integer (got '$WARMUP')"
posint "$VALIDATE_FILES" || die "VALIDATE_FILES must be a positive integer"
posint "$VALIDATE_ROUNDS" || die "VALIDATE_ROUNDS must be a positive integer"
read -r -a SIZE_LIST <<<"$SIZES"
read -r -a JOBS_LIST <<<"$JOBS"
((${#SIZE_LIST[@]} > 0)) || die "SIZES is empty"
((${#JOBS_LIST[@]} > 0)) || die "JOBS is empty"
for n in "${SIZE_LIST[@]}" "${JOBS_LIST[@]}"; do posint "$n" || die "SIZES/JOBS: '$n' is not a positive integer"; done
command -v cargo >/dev/null || die "cargo not found"

# ---------------------------------------------------------------- build
note "cargo build --release --workspace"
cargo build --release --workspace
MCPSPEC=$ROOT/target/release/mcpspec
SERVER=$ROOT/target/release/mcpspec-example-server
[[ -x $MCPSPEC && -x $SERVER ]] || die "release binaries missing after the build"

rm -rf "$OUT"
mkdir -p "$OUT"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcpspec-scale.XXXXXX")
cleanup() {
  if [[ $KEEP_TMP == 1 ]]; then note "generated scenarios kept in $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- peak RSS method
if /usr/bin/time -v -o /dev/null true 2>/dev/null; then
  RSS_METHOD="GNU /usr/bin/time -v (max RSS of mcpspec and of each reaped child, whichever is largest)"
  HAVE_GNU_TIME=1
else
  RSS_METHOD="VmHWM of the mcpspec process, sampled from /proc every 10 ms (a lower bound: the last ms before exit can be missed)"
  HAVE_GNU_TIME=0
  note "GNU time not found (apt package \`time\`): sampling VmHWM from /proc instead"
fi

# ---------------------------------------------------------------- generate
# (a) a run pack of N files, 5 steps each; scenario i uses its own values.
gen_pack() { # DIR N
  local dir=$1 n=$2 i id
  mkdir -p "$dir"
  for ((i = 1; i <= n; i++)); do
    printf -v id '%05d' "$i"
    cat >"$dir/scale-$id.yaml" <<EOF
scenario: scale-$id
description: generated scale scenario $i of $n
tags: [scale]
steps:
  - name: lists the tools
    request: { method: tools/list }
    expect:
      - { path: "\$.tools[*].name", contains: echo }
  - name: echo returns its text
    request: { method: tools/call, params: { name: echo, arguments: { text: "scenario $i" } } }
    expect:
      - isError: false
      - { path: "\$.content[0].text", equals: "scenario $i" }
  - name: add returns the sum
    request: { method: tools/call, params: { name: add, arguments: { a: $i, b: 1 } } }
    expect:
      - { path: "\$.structuredContent.sum", equals: $((i + 1)) }
  - name: reads the readme
    request: { method: resources/read, params: { uri: "example://readme" } }
    expect:
      - { path: "\$.contents[0].uri", equals: "example://readme" }
  - name: gets the greet prompt
    request: { method: prompts/get, params: { name: greet, arguments: { name: "Ada $i" } } }
    expect:
      - { path: "\$.messages[0].content.text", contains: "Ada $i" }
EOF
  done
}

# (b) validation files: more of the DSL per file than the run packs (8 steps).
gen_validate() { # DIR N
  local dir=$1 n=$2 i id
  mkdir -p "$dir"
  for ((i = 1; i <= n; i++)); do
    printf -v id '%05d' "$i"
    cat >"$dir/validate-$id.yaml" <<EOF
# yaml-language-server: \$schema=../../schema/scenario.schema.json
scenario: validate-$id
description: generated validation scenario $i of $n
tags: [generated, batch-$((i % 10))]
eras: [legacy, 2026-07-28]
vars: { city: "City $i", a: $i, b: 2, greeting: "Ada $i" }
steps:
  - name: lists the tools
    request: { method: tools/list, paginate: true }
    expect:
      - { path: "\$.tools[*].name", contains: get_weather }
      - { path: "\$.tools[*].name", unique: true, length: { gte: 4 } }
      - { path: "\$.tools[?@.name == 'add'].inputSchema.type", equals: [object] }
      - schema:
          type: object
          required: [tools]
          properties:
            tools: { type: array, items: { type: object, required: [name, inputSchema] } }
  - name: add with templated arguments
    request:
      method: tools/call
      params: { name: add, arguments: { a: "{{ a }}", b: "{{ b }}" } }
    expect:
      - isError: false
      - outputSchema: conforms
      - { path: "\$.structuredContent.sum", type: number, gte: 0, lt: 1000000 }
    capture: { sum: "\$.structuredContent.sum" }
  - name: echo the captured sum
    request:
      method: tools/call
      params: { name: echo, arguments: { text: "sum={{ sum }} id-{{ a + 1 }}" } }
    expect:
      - { path: "\$.content[0].text", matches: "^sum=[0-9]+ id-[0-9]+\$" }
      - { path: "\$.content[0].type", oneOf: [text, image] }
  - name: weather for the city
    level: should
    timeout: 5s
    request:
      method: tools/call
      params: { name: get_weather, arguments: { city: "{{ city }}", units: celsius } }
    expect:
      - outputSchema: conforms
      - { path: "\$.structuredContent.conditions", exists: true }
      - { path: "\$.structuredContent.humidity", absent: true }
  - name: division by zero is a tool error
    retry: { count: 1, interval: 10ms }
    request: { method: tools/call, params: { name: divide, arguments: { a: $i, b: 0 } } }
    expect:
      - isError: true
      - { path: "\$.content[0].text", contains: zero }
  - name: unknown tool is a protocol error
    request: { method: tools/call, params: { name: no_such_tool_$i, arguments: {} } }
    expect:
      - error: { code: [-32602, -32601], message: "." }
  - name: reads a templated resource
    request: { method: resources/read, params: { uri: "example://items/$i" } }
    expect:
      - { path: "\$.contents[0].text", equals: "item $i" }
  - name: gets a prompt
    eras: [legacy, 2026-07-28]
    request: { method: prompts/get, params: { name: greet, arguments: { name: "{{ greeting }}" } } }
    expect:
      - { path: "\$.messages[0].content.text", contains: "{{ greeting }}" }
      - { path: "\$.messages", length: 1 }
EOF
  done
}

note "generating packs of ${SIZE_LIST[*]} scenario file(s) and $VALIDATE_FILES validation file(s) in $TMP"
for n in "${SIZE_LIST[@]}"; do gen_pack "$TMP/pack-$n" "$n"; done
gen_validate "$TMP/validate" "$VALIDATE_FILES"
VALIDATE_MSG=$("$MCPSPEC" validate "$TMP/validate") || {
  echo "$VALIDATE_MSG" | tail -n 20 >&2
  die "the generated validation set does not validate"
}
note "validation set: $VALIDATE_MSG"

# ---------------------------------------------------------------- measuring
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }

# measure LOG CMD... -> sets ELAPSED (s), RSS_KB, RC
measure() {
  local log=$1 t0 t1 pid line hwm=0
  shift
  if ((HAVE_GNU_TIME)); then
    t0=$(now)
    set +e
    /usr/bin/time -v -o "$log.time" "$@" >"$log" 2>&1
    RC=$?
    set -e
    t1=$(now)
    RSS_KB=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): *//p' "$log.time")
    [[ $RSS_KB =~ ^[0-9]+$ ]] || die "no peak RSS in $log.time"
  else
    t0=$(now)
    "$@" >"$log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      line=$(grep -s '^VmHWM:' "/proc/$pid/status" || true)
      [[ $line =~ ([0-9]+) ]] && ((BASH_REMATCH[1] > hwm)) && hwm=${BASH_REMATCH[1]}
      sleep 0.01
    done
    set +e
    wait "$pid"
    RC=$?
    set -e
    t1=$(now)
    RSS_KB=$hwm
  fi
  ELAPSED=$(elapsed "$t0" "$t1")
}

declare -A BEST RSS_MAX TIMES
run_pack() { # N JOBS TAG
  local n=$1 j=$2 tag=$3 want log
  log=$OUT/run-$n-j$j-$tag.log
  local report=()
  [[ $JUNIT == 1 ]] && report=(--junit "$OUT/run-$n-j$j-$tag.xml")
  measure "$log" "$MCPSPEC" run "$TMP/pack-$n" --stdio "$SERVER" --era "$ERA" --jobs "$j" --color never "${report[@]}"
  want=$((n * STEPS_PER_SCENARIO))
  if ((RC != 0)) || ! grep -q "^Summary: $n suites, $want steps: $want passed, 0 failed, 0 errors" "$log"; then
    tail -n 20 "$log" >&2
    die "run of $n scenarios with --jobs $j (exit $RC) did not pass $want steps; log: $log"
  fi
}

for ((w = 1; w <= WARMUP; w++)); do
  note "warm-up $w/$WARMUP (untimed): ${SIZE_LIST[-1]} scenarios, --jobs ${JOBS_LIST[-1]}"
  run_pack "${SIZE_LIST[-1]}" "${JOBS_LIST[-1]}" "warmup$w"
done

for ((r = 1; r <= ROUNDS; r++)); do
  for n in "${SIZE_LIST[@]}"; do
    for j in "${JOBS_LIST[@]}"; do
      run_pack "$n" "$j" "$r"
      key=$n/$j
      TIMES[$key]="${TIMES[$key]:-}${TIMES[$key]:+ }$ELAPSED"
      if [[ -z ${BEST[$key]:-} ]] || awk -v a="$ELAPSED" -v b="${BEST[$key]}" 'BEGIN { exit !(a < b) }'; then
        BEST[$key]=$ELAPSED
      fi
      ((RSS_KB > ${RSS_MAX[$key]:-0})) && RSS_MAX[$key]=$RSS_KB
      note "round $r/$ROUNDS: $n scenarios --jobs $j: ${ELAPSED}s, peak RSS ${RSS_KB} KiB"
    done
  done
done

# Peak RSS of one example-server process during a scenario (context for the RSS
# column: with GNU time the figure is the max over mcpspec and its children).
SERVER_RSS=n/a
first=$(find "$TMP/pack-${SIZE_LIST[0]}" -name '*.yaml' | sort | sed -n 1p)
if ((HAVE_GNU_TIME)); then
  "$MCPSPEC" run "$first" --stdio "/usr/bin/time -f %M -o $OUT/server.rss $SERVER" --era "$ERA" --color never \
    >"$OUT/server-rss.log" 2>&1 || die "the server RSS probe failed; see $OUT/server-rss.log"
  SERVER_RSS=$(tail -n 1 "$OUT/server.rss")
fi

# One-file baselines (context for the growth): `run` and `validate` of a single
# scenario file, peak RSS, smallest of ROUNDS.
BASE_RUN_RSS=
BASE_VALIDATE_RSS=
for ((r = 1; r <= ROUNDS; r++)); do
  measure "$OUT/base-run-$r.log" "$MCPSPEC" run "$first" --stdio "$SERVER" --era "$ERA" --jobs 1 --color never
  ((RC == 0)) || die "the one-scenario run failed; see $OUT/base-run-$r.log"
  [[ -z $BASE_RUN_RSS ]] || ((RSS_KB < BASE_RUN_RSS)) && BASE_RUN_RSS=$RSS_KB
  measure "$OUT/base-validate-$r.log" "$MCPSPEC" validate "$first"
  ((RC == 0)) || die "validate of one file failed; see $OUT/base-validate-$r.log"
  [[ -z $BASE_VALIDATE_RSS ]] || ((RSS_KB < BASE_VALIDATE_RSS)) && BASE_VALIDATE_RSS=$RSS_KB
done

# validate: the rich validation set, and (context) the largest run pack; alternating.
V_SETS=(validate "pack-${SIZE_LIST[-1]}")
declare -A V_TIMES V_BEST V_RSS V_MSG
for v in "${V_SETS[@]}"; do V_MSG[$v]=$("$MCPSPEC" validate "$TMP/$v") || die "validate $v failed"; done
for ((r = 1; r <= VALIDATE_ROUNDS; r++)); do
  for v in "${V_SETS[@]}"; do
    measure "$OUT/validate-$v-$r.log" "$MCPSPEC" validate "$TMP/$v"
    ((RC == 0)) || die "validate $v failed (exit $RC); see $OUT/validate-$v-$r.log"
    V_TIMES[$v]="${V_TIMES[$v]:-}${V_TIMES[$v]:+ }$ELAPSED"
    ((RSS_KB > ${V_RSS[$v]:-0})) && V_RSS[$v]=$RSS_KB
    if [[ -z ${V_BEST[$v]:-} ]] || awk -v a="$ELAPSED" -v b="${V_BEST[$v]}" 'BEGIN { exit !(a < b) }'; then V_BEST[$v]=$ELAPSED; fi
    note "validate $v round $r/$VALIDATE_ROUNDS: ${ELAPSED}s"
  done
done

# ---------------------------------------------------------------- report
J0=${JOBS_LIST[0]}
JN=${JOBS_LIST[-1]}
N0=${SIZE_LIST[0]}
NN=${SIZE_LIST[-1]}
ms_per() { awk -v t="$1" -v n="$2" 'BEGIN { printf "%.2f", 1000 * t / n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
{
  echo
  echo "== scale: $(date -u +%Y-%m-%dT%H:%M:%SZ) =="
  echo "machine   : $(nproc) CPU(s), $(uname -srm), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end (shared machine)"
  echo "mcpspec   : $("$MCPSPEC" --version) (git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- 2>/dev/null || echo ', dirty tree')), $(rustc --version 2>/dev/null || echo 'rustc ?')"
  echo "command   : mcpspec run PACK --stdio mcpspec-example-server --era $ERA --jobs J --color never$([[ $JUNIT == 1 ]] && echo ' --junit FILE') (console report to a file)"
  echo "scenarios : $STEPS_PER_SCENARIO steps each (tools/list, tools/call echo, tools/call add, resources/read, prompts/get; all with expectations); one server process per scenario"
  echo "timing    : best of $ROUNDS (+$WARMUP warm-up), wall clock via date +%s.%N; sizes and jobs interleaved per round"
  echo "peak RSS  : $RSS_METHOD; max over the $ROUNDS rounds"
  echo "server    : one example-server process peaks at ${SERVER_RSS} KiB"
  echo "baseline  : one scenario file: run peaks at $(mib "$BASE_RUN_RSS") MiB, validate at $(mib "$BASE_VALIDATE_RSS") MiB (smallest of $ROUNDS)"
  echo
  printf '%-10s' "scenarios"
  for j in "${JOBS_LIST[@]}"; do printf ' | %9s %9s %9s' "j$j s" "j$j ms/sc" "j$j RSS"; done
  ((${#JOBS_LIST[@]} > 1)) && printf ' | %12s' "j$JN speed-up"
  printf ' | %10s\n' "t/t($N0)"
  for n in "${SIZE_LIST[@]}"; do
    printf '%-10s' "$n"
    for j in "${JOBS_LIST[@]}"; do
      printf ' | %9s %9s %9s' "${BEST[$n/$j]}" "$(ms_per "${BEST[$n/$j]}" "$n")" "$(mib "${RSS_MAX[$n/$j]}")M"
    done
    ((${#JOBS_LIST[@]} > 1)) && printf ' | %11sx' "$(ratio "${BEST[$n/$J0]}" "${BEST[$n/$JN]}")"
    printf ' | %9sx\n' "$(ratio "${BEST[$n/$J0]}" "${BEST[$N0/$J0]}")"
  done
  echo "(j = --jobs; s = best wall time; ms/sc = ms per scenario; RSS = peak, MiB; t/t($N0) = jobs-$J0 time relative to $N0 scenarios, linear = $(ratio "$NN" "$N0")x at $NN)"
  echo
  for j in "${JOBS_LIST[@]}"; do
    if ((NN > N0)); then
      growth=$(awk -v a="${RSS_MAX[$N0/$j]}" -v b="${RSS_MAX[$NN/$j]}" -v n0="$N0" -v n1="$NN" \
        'BEGIN { printf "%+.2f MiB (peak %.1f MiB at %d -> %.1f MiB at %d scenarios)", (b - a) / 1024 * 1000 / (n1 - n0), a / 1024, n0, b / 1024, n1 }')
      echo "RSS growth per 1,000 scenarios, --jobs $j ($N0 -> $NN): $growth"
    fi
  done
  echo
  for n in "${SIZE_LIST[@]}"; do
    for j in "${JOBS_LIST[@]}"; do echo "runs (s) $n --jobs $j: ${TIMES[$n/$j]}"; done
  done
  echo
  echo "validate (best of $VALIDATE_ROUNDS, target < $VALIDATE_TARGET s):"
  for v in "${V_SETS[@]}"; do
    if [[ $v == validate ]]; then
      what="validation set, $VALIDATE_FILES files (8 steps each: vars, templates, captures, schema, regexes, retry, ...)"
    else
      what="run pack $v (5 steps each, as run above)"
    fi
    echo "  $what: ${V_MSG[$v]}"
    echo "    runs (s): ${V_TIMES[$v]}"
    echo "    best (s): ${V_BEST[$v]} (target: $(awk -v t="${V_BEST[$v]}" -v g="$VALIDATE_TARGET" 'BEGIN { print (t < g ? "met" : "MISSED") }')); peak RSS $(mib "${V_RSS[$v]}") MiB"
  done
  echo "  (validate only loads and checks: its peak RSS over the one-file baseline is what holding the"
  echo "   loaded scenarios costs; run's growth beyond that is the per-scenario results kept for the report)"
  echo
  echo "logs: $OUT"
} | tee "$OUT/report.txt"
