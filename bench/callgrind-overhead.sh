#!/usr/bin/env bash
# Instruction counts of the stdio_overhead bench's two clients (issue #28 item 5), which
# unlike wall time do not depend on the machine's load: `perf stat -e instructions` is not
# supported on the project's VM, so valgrind's callgrind counts them.
#
#   engine  `mcpspec run` of the bench's N-step scenario (the mcpspec process only; the
#           server runs outside valgrind) — and `mcpspec validate` of the same file, the
#           YAML front end's share
#   raw     the bench's raw line-in/line-out client (BENCH_ONLY=raw, one round)
#
# Prints instructions per request of each. Usage: bench/callgrind-overhead.sh [N]
# Needs a release build with symbols for the profile (`callgrind_annotate` on the
# files in target/bench/callgrind): CARGO_PROFILE_RELEASE_STRIP=false cargo bench
# --bench stdio_overhead --no-run && cargo build --release -p mcpspec-example-server
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000}
OUT=target/bench/callgrind
mkdir -p "$OUT"
BIN=target/release/mcpspec
SERVER=target/release/mcpspec-example-server
BENCH=$(ls -t target/release/deps/stdio_overhead-* | grep -v '\.d$' | head -1)
[[ -x $BIN && -x $SERVER && -x $BENCH ]] || { echo "build first (see the header)" >&2; exit 1; }
python3 - "$N" >"$OUT/bench.yaml" <<'PY'
import sys
n = int(sys.argv[1])
print("scenario: bench\neras: [2026-07-28]\nsteps:")
for i in range(n):
    print(f'  - name: call {i}\n    request: {{ method: tools/call, params: {{ name: echo, arguments: {{ text: "hi {i}" }} }} }}\n    expect:\n      - {{ path: "$.content[0].text", equals: "hi {i}" }}')
PY
count() { # OUTFILE CMD... → total instructions (Ir) of the traced process
  valgrind --tool=callgrind --callgrind-out-file="$1" "${@:2}" >/dev/null 2>&1 || true
  callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}'
}
run=$(count "$OUT/engine.out" "$BIN" run "$OUT/bench.yaml" --stdio "$SERVER" --era 2026-07-28)
load=$(count "$OUT/validate.out" "$BIN" validate "$OUT/bench.yaml")
raw=$(BENCH_ONLY=raw BENCH_ROUNDS=1 BENCH_REQUESTS=$N count "$OUT/raw.out" "$BENCH")
python3 - "$N" "$run" "$load" "$raw" <<'PY'
import sys
n, run, load, raw = int(sys.argv[1]), *map(int, sys.argv[2:])
print(f"requests {n}: mcpspec run {run/n:,.0f} instr/request (of which loading the file {load/n:,.0f}), "
      f"raw client {raw/n:,.0f}; run/raw {run/raw:.2f}, run minus load / raw {(run-load)/raw:.2f}")
PY
# System calls of mcpspec's main thread (the exchange runs there; `-i`: not the server's),
# per request, where perf's tracepoints work (session 10: 4.0 per request, the raw client 2.0).
if perf stat -i -e raw_syscalls:sys_enter true >/dev/null 2>&1; then
  calls() { perf stat -i -x, -e raw_syscalls:sys_enter "$@" 2>&1 >/dev/null | awk -F, '/raw_syscalls/ {print $1}'; }
  m=$(calls "$BIN" run "$OUT/bench.yaml" --stdio "$SERVER" --era 2026-07-28)
  r=$(BENCH_ONLY=raw BENCH_ROUNDS=1 BENCH_REQUESTS=$N calls "$BENCH")
  python3 -c "import sys; n,m,r=map(int,sys.argv[1:]); print(f'system calls per request: mcpspec {m/n:.1f}, raw client {r/n:.1f}')" "$N" "$m" "$r"
fi
