//! Task steps (2025-11-25 tasks utility) end to end against the example server's
//! `slow_job` (`--interactive`, stdio): carried through `tasks/get` to `tasks/result`,
//! cancelled, judged by `taskStatus`; a task that never ends errors within the step's
//! timeout with the statuses seen; 2026-07-28 skips task steps (the extension is not in its
//! schema); `approve_job`'s task in `input_required`, its elicitation answered over
//! `tasks/result`; and the conformance check `task_status_forward`. Data: `tests/tasks/`.

mod common;

use common::{Run, assert_contains, read_json, repo_root, run, stdio_target, step, suite};
use serde_json::Value;

fn run_file(file: &str, flags: &[&str], eras: &[&str]) -> (Run, Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let path = repo_root().join(file).display().to_string();
    let target = stdio_target(flags);
    let mut args: Vec<&str> = vec!["run", &path, "--timeout", "10s", "--stdio", &target];
    for era in eras {
        args.extend(["--era", era]);
    }
    args.extend(["--json", json.to_str().expect("utf-8 path")]);
    let run = run(&args);
    assert!(json.exists(), "no report: {run:?}");
    (run, read_json(&json))
}

#[test]
fn a_task_step_is_carried_to_its_result_and_a_cancelled_one_ends_cancelled() {
    let (run, report) = run_file(
        "tests/tasks/slow-job.yaml",
        &["--interactive"],
        &["legacy", "2026-07-28"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let legacy = suite(&report, "slow-job@legacy");
    let done = step(legacy, "the job completes");
    assert_eq!(done["outcome"]["status"], "passed", "{done}");
    assert_eq!(
        sent(done),
        ["tools/call", "tasks/get", "tasks/get", "tasks/result"],
        "the call, a poll per status change, the result"
    );
    let modern = suite(&report, "slow-job@2026-07-28");
    let skipped = step(modern, "the job completes");
    assert_contains(
        &skipped["outcome"].to_string(),
        "io.modelcontextprotocol/tasks",
    );
}

/// The methods of the step's sent requests.
fn sent(step: &Value) -> Vec<String> {
    step["transcript"]
        .as_array()
        .expect("transcript")
        .iter()
        .filter(|e| e["direction"] == "sent")
        .filter_map(|e| serde_json::from_str::<Value>(e["body"].as_str()?).ok())
        .filter_map(|b| b["method"].as_str().map(String::from))
        .collect()
}

#[test]
fn a_task_in_input_required_gets_its_elicitation_answered_over_tasks_result() {
    let (run, report) = run_file(
        "tests/tasks/approve-job.yaml",
        &["--interactive"],
        &["legacy", "2026-07-28"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let legacy = suite(&report, "approve-job@legacy");
    let done = step(legacy, "the job asks, is answered and completes");
    assert_eq!(done["outcome"]["status"], "passed", "{done}");
    // The server fails the task when the answer lacks the task's `related-task`: the
    // completed status and the text show it came.
    assert_eq!(
        sent(done),
        ["tools/call", "tasks/get", "tasks/result", "tasks/get"],
        "a poll finds input_required, tasks/result is sent at once, a poll sees the end"
    );
    assert_contains(
        &done["transcript"].to_string(),
        "`elicitation/create`: answered from the script",
    );
    let declined = step(legacy, "a declined job completes declined");
    assert_eq!(declined["outcome"]["status"], "passed", "{declined}");
    let modern = suite(&report, "approve-job@2026-07-28");
    let skipped = step(modern, "the job asks, is answered and completes");
    assert_eq!(skipped["outcome"]["status"], "skipped", "{skipped}");
    let plain = step(
        modern,
        "called plainly it asks inline (legacy) or by input_required (2026-07-28)",
    );
    assert_eq!(plain["outcome"]["status"], "passed", "{plain}");
}

#[test]
fn a_task_that_never_ends_errors_within_the_timeout_with_the_statuses_seen() {
    let (run, report) = run_file("tests/tasks/forever.yaml", &["--interactive"], &["legacy"]);
    assert_ne!(run.code, 0, "{run:?}");
    let s = step(suite(&report, "task-forever@legacy"), "never ends");
    let took = s["duration"].as_f64().expect("duration");
    assert!(
        took < 3.0,
        "the step's 1s timeout bounds the polls: {took}s"
    );
    let outcome = s["outcome"].to_string();
    assert_contains(&outcome, "did not end within the step's timeout (1s)");
    assert_contains(&outcome, "statuses seen: working ×");
}

#[test]
fn task_status_fails_with_the_statuses_seen() {
    let (run, report) = run_file(
        "tests/tasks/wrong-status.yaml",
        &["--interactive"],
        &["legacy"],
    );
    assert_ne!(run.code, 0, "{run:?}");
    let s = step(suite(&report, "task-wrong-status@legacy"), "expects failed");
    let outcome = s["outcome"].to_string();
    assert_contains(&outcome, "working, completed");
}

/// `mcpspec run conformance` against the `--interactive` server over stdio, legacy era:
/// the status of `legacy-tasks@legacy:task_status_forward`.
fn task_check(flags: &[&str]) -> (Run, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let target = stdio_target(flags);
    let run = run(&[
        "run",
        "conformance",
        "--stdio",
        &target,
        "--era",
        "legacy",
        "--json",
        json.to_str().expect("utf-8 path"),
    ]);
    let report = read_json(&json);
    let s = step(suite(&report, "legacy-tasks@legacy"), "task_status_forward");
    (run, s["outcome"].to_string())
}

#[test]
fn task_status_forward_passes_on_the_clean_server_and_fails_when_a_status_regresses() {
    let (run, clean) = task_check(&["--interactive"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_contains(&clean, "passed");
    let (run, broken) = task_check(&["--interactive", "--defect", "task-status-regresses"]);
    assert_ne!(run.code, 0, "{run:?}");
    assert_contains(&broken, "from `completed` (terminal) to `working`");
    let (_, none) = task_check(&[]);
    assert_contains(&none, "does not declare task-augmented tools/call");
}
