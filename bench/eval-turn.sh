#!/usr/bin/env bash
# The eval runner's own time per model turn (BENCHMARKS.md, issue #17 point 7): an eval set
# of N trials run against the example server through the local model server, whose replies
# take microseconds — so the time per turn is an upper bound of what the runner adds to a
# real model's (which takes 0.3–10 s a turn). TRIALS (default 500) per task; two tasks: one
# with a tool call (2 model turns + 1 tools/call a trial), one without (1 turn).
set -euo pipefail
cd "$(dirname "$0")/.."
TRIALS=${TRIALS:-500}
[ -n "${NO_BUILD:-}" ] || cargo build --release -p mcpspec -p mcpspec-model-server -p mcpspec-example-server
BIN=${BIN:-target/release}
dir=$(mktemp -d)
trap 'kill "$model_pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
"$BIN/mcpspec-model-server" >"$dir/model.out" &
model_pid=$!
until grep -q listening "$dir/model.out"; do sleep 0.05; done
url=$(sed -n 's/listening on //p' "$dir/model.out")
cat >"$dir/bench.eval.yaml" <<YAML
evalset: bench
trials: $TRIALS
models:
  local: { api: openai, baseUrl: "$url/v1", model: policy }
tasks:
  - id: weather
    prompt: What is the current weather in Boston?
    expect: [ { calls: get_weather }, { answer: { contains: Boston } } ]
  - id: small-talk
    prompt: Write a friendly greeting for the team.
    expect: [ { noToolCall: true } ]
YAML
for round in 1 2 3; do
  start=$(date +%s.%N)
  "$BIN/mcpspec" eval run "$dir/bench.eval.yaml" --stdio "$BIN/mcpspec-example-server" \
    --model local --json "$dir/results.json" >/dev/null
  end=$(date +%s.%N)
  python3 - "$dir/results.json" "$start" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
trials = [t for task in r["tasks"] for t in task["trials"]]
turns = sum(t["turns"] for t in trials)
calls = sum(len(t["toolCalls"]) for t in trials)
ok = sum(t["success"] for t in trials)
print(f"{len(trials)} trials ({ok} ok), {turns} model turns, {calls} tool calls: "
      f"wall {wall:.2f} s (process), run {r['durationMs']} ms -> "
      f"{r['durationMs'] / turns * 1000:.0f} us per model turn (tool call included)")
PY
done
