//! `mcpspec eval compare` of two 10,000-task results files, end to end through the CLI
//! (reading, parsing, pairing, statistics, the console table and the JSON document).
//! Run with `cargo bench --bench eval_compare` (release build). `BENCH_TASKS` sets the task
//! count (default 10,000), `BENCH_TRIALS` the trials per task (default 3).
//!
//! The candidate differs from the base in every tenth task (a failed trial, an extra call),
//! so the comparison has regressions to list, not only identical tasks.
#![allow(
    unsafe_code,
    reason = "the children's CPU time read with libc::getrusage"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mcpspec::run::eval::results::*;
use serde_json::json;

fn main() {
    let tasks: usize = env("BENCH_TASKS", 10_000);
    let trials: u32 = env("BENCH_TRIALS", 3) as u32;
    let mcpspec = PathBuf::from(env!("CARGO_BIN_EXE_mcpspec"));
    let dir =
        std::env::temp_dir().join(format!("mcpspec-eval-compare-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.join("base.json");
    let cand = dir.join("candidate.json");
    write(&base, &results(tasks, trials, false));
    write(&cand, &results(tasks, trials, true));
    let size = std::fs::metadata(&base).unwrap().len();
    let mut best = Duration::MAX;
    let mut best_cpu = Duration::MAX;
    for _ in 0..5 {
        let cpu_before = children_cpu();
        let started = Instant::now();
        let out = Command::new(&mcpspec)
            .args(["eval", "compare"])
            .arg(&base)
            .arg(&cand)
            .arg("--json")
            .arg(dir.join("compare.json"))
            .output()
            .unwrap();
        let took = started.elapsed();
        assert_eq!(
            out.status.code(),
            Some(1),
            "the candidate has regressions\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        best = best.min(took);
        best_cpu = best_cpu.min(children_cpu() - cpu_before);
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "eval compare: {tasks} tasks × {trials} trials per file ({:.1} MB each): {:.3}s wall, \
         {:.3}s CPU (user + system; best of 5)",
        size as f64 / 1e6,
        best.as_secs_f64(),
        best_cpu.as_secs_f64()
    );
}

/// CPU time (user + system) of the waited-for children so far: on a shared machine the wall
/// time measures the neighbours too.
#[cfg(unix)]
fn children_cpu() -> Duration {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Windows has no getrusage: the CPU figure reads 0 there (the wall time stands).
#[cfg(not(unix))]
fn children_cpu() -> Duration {
    Duration::ZERO
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn write(path: &Path, r: &EvalResults) {
    std::fs::write(path, serde_json::to_string_pretty(r).unwrap()).unwrap();
}

fn results(tasks: usize, trials: u32, candidate: bool) -> EvalResults {
    EvalResults {
        format: RESULTS_FORMAT.into(),
        partial: false,
        aborted: None,
        set: SetInfo {
            name: "bench".into(),
            kind: SetKind::Regression,
            file: "evals/bench.yaml".into(),
            trials,
            affected_by: None,
        },
        model: ModelInfo {
            profile: "local".into(),
            api: ModelApi::Openai,
            model: "policy".into(),
            base_url: "http://127.0.0.1:9000/v1".into(),
            temperature: Some(0.0),
            seed: Some(7),
            price: None,
            replayed_from: None,
        },
        server: ServerInfo {
            name: "mcpspec-example-server".into(),
            version: "1.0.0".into(),
            era: "modern".into(),
            revision: "2026-07-28".into(),
            tools_hash: if candidate { "b" } else { "a" }.repeat(64),
            tool_count: 6,
        },
        judge: None,
        judge_usage: None,
        tool_selection: Vec::new(),
        started: "2026-12-01T12:00:00Z".into(),
        duration_ms: 1000,
        tasks: (0..tasks)
            .map(|i| {
                let changed = candidate && i % 10 == 0;
                TaskResult {
                    id: format!("task-{i:05}"),
                    tags: vec!["bench".into()],
                    no_tool_call: i % 7 == 0,
                    expected_tools: vec!["get_weather".into()],
                    usage: Default::default(),
                    judge_usage: None,
                    cut: None,
                    pass: Default::default(),
                    trials: (0..trials)
                        .map(|t| {
                            let calls = if changed { 2 } else { 1 };
                            TrialResult {
                                index: t,
                                success: !(changed && t == 0),
                                expectations: vec![ExpectationOutcome {
                                    name: "calls get_weather".into(),
                                    passed: true,
                                    ..Default::default()
                                }],
                                tool_calls: (0..calls)
                                    .map(|_| ToolCallRecord {
                                        name: "get_weather".into(),
                                        arguments: json!({"city": "Boston"}),
                                        is_error: false,
                                        protocol_error: None,
                                    })
                                    .collect(),
                                tool_errors: 0,
                                retries: 0,
                                argument_score: None,
                                judge_usage: None,
                                input_tokens: 812,
                                output_tokens: 64,
                                estimated_tokens: false,
                                turns: 2,
                                latency_ms: 420,
                                final_answer: Some("It is 12 °C in Boston.".into()),
                                error: None,
                            }
                        })
                        .collect(),
                }
            })
            .collect(),
        usage: Default::default(),
    }
}
