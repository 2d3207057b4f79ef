#!/usr/bin/env bash
# Engine-overhead benchmark (see BENCHMARKS.md): release build, then the bench.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace
cargo bench --bench stdio_overhead
cargo bench --bench contract_scale
cargo bench --bench eval_compare
