#!/bin/sh
# The regression pipeline for model behaviour (docs/src/eval.md, "The CI pipeline"):
#   1. contract: snapshot base and candidate, diff them — a breaking change fails here;
#   2. no change that affects models → done;
#   3. the eval set's tasks at risk (`--affected-by`) run through the model against the
#      base and against the candidate (same model(s), same trials);
#   4. `mcpspec eval compare` pairs the two runs task by task, per model — exit 1 on a
#      regression.
#
# Out of the box it runs the example server (base) against its "next release" with a new tool
# (`send_greeting`) that the model wrongly calls for small talk, through the project's local
# model server — the pipeline ends with compare reporting that regression:
#   cargo build --workspace --bins && PATH="$PWD/target/debug:$PATH" examples/ci/eval-pipeline.sh
# For your server set BASE_CMD / CAND_CMD (or use --url targets), SET and MODEL (profiles of
# the set, space-separated, e.g. `openai` with OPENAI_API_KEY in the environment, or
# `openai anthropic` to run and compare both models).
#
# Replay, for CI without a key: REPLAY=DIR runs the whole set against the candidate with the
# model answers recorded in DIR (`eval run --replay`): no model server, no key, no cost,
# the same answers every time. The tool calls really run on the candidate, so a tool whose
# result changed fails its trials. Exit 2 when the candidate's tools (what the model reads)
# or the set no longer match the recording: the recorded answers cannot stand for them.
#   REPLAY=examples/ci/recording CAND_CMD=mcpspec-example-server examples/ci/eval-pipeline.sh
# Re-recording, when the contract change is intended (with the model and its key, once):
# RECORD=DIR records the candidate's runs of the whole set into DIR (`eval run --record`);
# commit DIR. The committed examples/ci/recording was made with the local model server:
#   RECORD=examples/ci/recording MODEL="local local-anthropic" CAND_CMD=mcpspec-example-server \
#     examples/ci/eval-pipeline.sh
set -eu

BASE_CMD=${BASE_CMD:-"mcpspec-example-server"}
CAND_CMD=${CAND_CMD:-"mcpspec-example-server --change add-greeting-tool"}
SET=${SET:-examples/packs/weather-basics/weather.eval.yaml}
MODEL=${MODEL:-local}
OUT=${OUT:-reports}
REPLAY=${REPLAY:-}
RECORD=${RECORD:-}
mkdir -p "$OUT"

# One --model per profile; the local model server serves the `local*` profiles.
MODEL_FLAGS=""
ALL_LOCAL=yes
MODELS=0
for m in $MODEL; do
  MODEL_FLAGS="$MODEL_FLAGS --model $m"
  MODELS=$((MODELS + 1))
  case "$m" in local*) ;; *) ALL_LOCAL=no ;; esac
done

MODEL_ARGS=""
if [ -z "$REPLAY" ] && [ "$ALL_LOCAL" = yes ]; then
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

# Replay: the whole set against the candidate, the model's answers from the recording.
if [ -n "$REPLAY" ]; then
  rc=0
  # shellcheck disable=SC2086 # MODEL_FLAGS is one `--model P` per profile
  mcpspec eval run "$SET" --stdio "$CAND_CMD" $MODEL_FLAGS --replay "$REPLAY" \
    --json "$OUT/eval-candidate.json" --junit "$OUT/eval-candidate.xml" || rc=$?
  if [ "$rc" -eq 2 ]; then
    echo "the recording in $REPLAY cannot answer for the candidate (its tools or the set changed): if the change is intended, re-record it with the model: RECORD=$REPLAY MODEL=\"$MODEL\" $0" >&2
  fi
  exit "$rc"
fi

# 2. Nothing a model reads changed: no eval needed (unless re-recording).
if [ -z "$RECORD" ] && grep -q '"modelReview": \[\]' "$OUT/diff.json"; then
  echo "no change affects models: eval skipped"
  exit 0
fi

# 3. The tasks at risk, on base and candidate (re-recording: the whole set, the candidate's
#    model exchanges recorded). Exit 1 (a failed trial) is for compare to judge; 2 (bad
#    input), 3 (key), 4 (unreachable) and 5 (stopped by --max-cost, --max-duration or the
#    circuit breaker: a partial run never clears the gate) stop the pipeline.
for side in base candidate; do
  if [ "$side" = base ]; then cmd=$BASE_CMD; else cmd=$CAND_CMD; fi
  select="--affected-by $OUT/diff.json"
  if [ -n "$RECORD" ]; then
    select=""
    if [ "$side" = candidate ]; then select="--record $RECORD"; fi
  fi
  rc=0
  # shellcheck disable=SC2086 # one `--model P` per profile; MODEL_ARGS and select are flags
  mcpspec eval run "$SET" --stdio "$cmd" $MODEL_FLAGS $MODEL_ARGS $select \
    --json "$OUT/eval-$side.json" --junit "$OUT/eval-$side.xml" || rc=$?
  if [ "$rc" -gt 1 ]; then
    exit "$rc"
  fi
done

# 4. Paired comparison, per model (two servers through one model): exit 1 on a regression.
worst=0
for m in $MODEL; do
  junit="$OUT/eval-compare.xml"
  if [ "$MODELS" -gt 1 ]; then junit="$OUT/eval-compare-$m.xml"; fi
  rc=0
  mcpspec eval compare "$OUT/eval-base.json" "$OUT/eval-candidate.json" --model "$m" \
    --junit "$junit" || rc=$?
  if [ "$rc" -gt "$worst" ]; then worst=$rc; fi
done
exit "$worst"
