#!/usr/bin/env bash
# JUnit memory: peak RSS of `mcpspec run` on N generated scenarios with and without
# `--junit FILE` (issue #24: the JUnit report is written as the suites finish, so the two
# must stay within 10%).
#
# Usage:   bench/junit-memory.sh
# Env:     N=10000         scenarios (two steps each: tools/list, tools/call echo)
#          BIN=DIR         where mcpspec and mcpspec-example-server are (default:
#                          target/release, built first)
#          JOBS=2          --jobs
# Needs:   GNU time (apt package `time`).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000}
JOBS=${JOBS:-2}
if [[ -z ${BIN:-} ]]; then
  cargo build --release --workspace
  BIN=$PWD/target/release
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcpspec-junit-mem.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/pack"
for ((i = 1; i <= N; i++)); do
  printf -v id '%05d' "$i"
  cat >"$TMP/pack/scale-$id.yaml" <<EOF
scenario: scale-$id
steps:
  - name: lists the tools
    request: { method: tools/list }
    expect:
      - { path: "\$.tools[*].name", contains: echo }
  - name: echo returns its text
    request: { method: tools/call, params: { name: echo, arguments: { text: "scenario $i" } } }
    expect:
      - { path: "\$.content[0].text", equals: "scenario $i" }
EOF
done
for mode in plain junit; do
  extra=()
  [[ $mode == junit ]] && extra=(--junit "$TMP/junit.xml")
  /usr/bin/time -v -o "$TMP/$mode.time" "$BIN/mcpspec" run "$TMP/pack" \
    --stdio "$BIN/mcpspec-example-server" --era 2026-07-28 --jobs "$JOBS" --color never \
    "${extra[@]}" >"$TMP/$mode.out" 2>&1
  rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$TMP/$mode.time")
  echo "$mode: peak RSS ${rss} KiB, $(tail -1 "$TMP/$mode.out")"
done
