#!/bin/sh
# The regression pipeline for model behaviour (docs/src/eval.md, "The CI pipeline"):
#   1. contract: snapshot base and candidate, diff them — a breaking change fails here;
#   2. no change that affects models → done;
#   3. the eval set's tasks at risk (`--affected-by`) run through the model against the
#      base and against the candidate (same model, same trials);
#   4. `mcpspec eval compare` pairs the two runs task by task — exit 1 on a regression.
#
# Out of the box it runs the example server (base) against its "next release" with a new tool
# (`send_greeting`) that the model wrongly calls for small talk, through the project's local
# model server — the pipeline ends with compare reporting that regression:
#   cargo build --workspace --bins && PATH="$PWD/target/debug:$PATH" examples/ci/eval-pipeline.sh
# For your server set BASE_CMD / CAND_CMD (or use --url targets), SET and MODEL (a profile of
# the set, e.g. `openai` with OPENAI_API_KEY in the environment).
set -eu

BASE_CMD=${BASE_CMD:-"mcpspec-example-server"}
CAND_CMD=${CAND_CMD:-"mcpspec-example-server --change add-greeting-tool"}
SET=${SET:-examples/packs/weather-basics/weather.eval.yaml}
MODEL=${MODEL:-local}
OUT=${OUT:-reports}
mkdir -p "$OUT"

MODEL_ARGS=""
if [ "$MODEL" = local ]; then
  # The local model server on a free port; the run is pointed at it with --base-url (the
  # set's `local` profile names 127.0.0.1:8088, for running the server by hand).
  mcpspec-model-server >"$OUT/model-server.log" 2>&1 &
  MODEL_PID=$!
  trap 'kill "$MODEL_PID" 2>/dev/null || true' EXIT
  # Wait for its "listening on http://ADDR" line (10 s at most), or for it to fail.
  tries=0
  until addr=$(sed -n 's|^listening on \(http://.*\)$|\1|p' "$OUT/model-server.log") && [ -n "$addr" ]; do
    if ! kill -0 "$MODEL_PID" 2>/dev/null || [ "$tries" -ge 100 ]; then
      echo "the local model server did not start: see $OUT/model-server.log" >&2
      exit 4
    fi
    tries=$((tries + 1))
    sleep 0.1
  done
  MODEL_ARGS="--base-url $addr/v1"
fi

# 1. Contract diff: breaking changes fail the pipeline.
mcpspec snapshot --stdio "$BASE_CMD" --out "$OUT/contract/base"
mcpspec snapshot --stdio "$CAND_CMD" --out "$OUT/contract/candidate"
rc=0
mcpspec diff "$OUT/contract/base" "$OUT/contract/candidate" --format json \
  --junit "$OUT/contract-diff.xml" >"$OUT/diff.json" || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "contract diff failed (exit $rc): see $OUT/diff.json" >&2
  exit "$rc"
fi

# 2. Nothing a model reads changed: no eval needed.
if grep -q '"modelReview": \[\]' "$OUT/diff.json"; then
  echo "no change affects models: eval skipped"
  exit 0
fi

# 3. The tasks at risk, on base and candidate. Exit 1 (a failed trial) is for compare to
#    judge; 2 (bad input), 3 (key) and 4 (unreachable) stop the pipeline.
for side in base candidate; do
  if [ "$side" = base ]; then cmd=$BASE_CMD; else cmd=$CAND_CMD; fi
  rc=0
  # shellcheck disable=SC2086 # MODEL_ARGS is empty or two words
  mcpspec eval run "$SET" --stdio "$cmd" --model "$MODEL" $MODEL_ARGS \
    --affected-by "$OUT/diff.json" \
    --json "$OUT/eval-$side.json" --junit "$OUT/eval-$side.xml" || rc=$?
  if [ "$rc" -gt 1 ]; then
    exit "$rc"
  fi
done

# 4. Paired comparison: exit 1 on a regression.
mcpspec eval compare "$OUT/eval-base.json" "$OUT/eval-candidate.json" \
  --junit "$OUT/eval-compare.xml"
