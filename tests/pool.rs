//! The warm-server pool over stdio (`engine::pool`): scenarios that only read share one
//! server process per era; one that writes state, without opting in to anything, is the
//! last user of a process (a warm one no reader needs any more, or its own), so writers
//! and readers never see each other's state whatever the order and `--jobs`. A shared process that dies is replaced, and the report says so and
//! counts the processes started. What a server writes after a scenario's last reply
//! (`tests/hostile/server.py`'s `*-after-call` modes) is that scenario's, never judged in
//! the next: verdicts equal `--fresh`'s in both orders.

mod common;

use common::{run, stdio_target};
use serde_json::Value;

fn json_report(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("JSON report")).expect("JSON")
}

/// Every reader and writer passes: 5 scenarios × 2 eras, 9 steps per era.
#[test]
fn writers_and_readers_never_see_each_others_state_whatever_the_order_and_jobs() {
    let target = stdio_target(&["--utilities"]);
    for jobs in ["1", "2", "4"] {
        for shard in [None, Some("1/2"), Some("2/2")] {
            let dir = tempfile::tempdir().unwrap();
            let json = dir.path().join("run.json");
            let mut args = vec![
                "run",
                "tests/pool/isolation",
                "--stdio",
                &target,
                "--jobs",
                jobs,
                "--json",
                json.to_str().unwrap(),
            ];
            args.extend(shard.iter().flat_map(|s| ["--shard", s]));
            let out = run(&args);
            assert_eq!(out.code, 0, "--jobs {jobs} {shard:?}\n{}", out.all_output());
            let report = json_report(&json);
            let servers = &report["servers"];
            if shard.is_none() {
                assert!(
                    out.stdout
                        .contains("10 suites, 18 steps: 18 passed, 0 failed"),
                    "{}",
                    out.stdout
                );
                // The 6 reader runs share at most one process per era and job; of the 4
                // writer runs, one per era takes a warm process once no reader of its era
                // needs it (its last user), the others start their own.
                let started = servers["started"].as_u64().unwrap();
                assert!((4..=8).contains(&started), "{servers}");
                assert!(servers["warm"].as_u64().unwrap() >= 2, "{servers}");
                if jobs == "1" {
                    // In order: one process per era, started to list the tools' annotations
                    // (two scenarios of each era call tools), then used by the three readers
                    // and taken last by the first writer (`toggle_tool` is no read); the
                    // second writer of each era starts its own.
                    assert_eq!(started, 4, "{servers}");
                    assert_eq!(servers["warm"], 8, "{servers}");
                }
            }
            assert!(out.stdout.contains("Server processes: "), "{}", out.stdout);
        }
    }
}

/// Run `folder` over stdio with one job (in order) plus `extra`; assert the exit code and
/// that stdout holds every line of `expected`.
fn one_job(folder: &str, target: &str, extra: &[&str], code: i32, expected: &[&str]) {
    let mut args = vec!["run", folder, "--stdio", target, "--jobs", "1"];
    args.extend(extra);
    let out = run(&args);
    assert_eq!(out.code, code, "{}", out.all_output());
    for line in expected {
        assert!(out.stdout.contains(line), "{line}\n{}", out.stdout);
    }
}

/// The control: with `fresh: false` the writer shares its process, and the reader after it
/// (one job: in order) sees its change. So the test above would catch a leak.
#[test]
fn a_writer_that_opts_in_to_sharing_is_seen_by_the_next_scenario() {
    let target = stdio_target(&["--utilities"]);
    let folder = "tests/pool/opted-in";
    let seen = [
        "PASS  sees-the-change@2026-07-28",
        "Server processes: 1 started",
    ];
    one_job(folder, &target, &[], 0, &seen);
    // `--fresh` isolates it again: the reader no longer sees the change.
    let unseen = [
        "FAIL  sees-the-change@2026-07-28",
        "Server processes: 2 started",
    ];
    one_job(folder, &target, &["--fresh"], 1, &unseen);
}

/// The shared process dies under the first scenario: the next one runs on a new process,
/// passes, and both the report and its transcript say what happened.
#[test]
fn a_crashed_shared_server_is_replaced_and_reported() {
    replaced_after("crash-on-call", &[], "exit");
}

/// A request of the first scenario times out (the server is alive, but a late reply could
/// land in the next scenario): the process is replaced all the same.
#[test]
fn a_timed_out_shared_server_is_replaced_and_reported() {
    replaced_after("hang-on-call", &["--timeout", "1s"], "a request timed out");
}

fn replaced_after(defect: &str, extra: &[&str], why: &str) {
    let target = stdio_target(&["--defect", defect]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let expected = [
        "PASS  after-the-crash@2026-07-28",
        "Server processes: 2 started",
        "replaced: the shared server process (2026-07-28) was stopped after `breaks-it@2026-07-28`",
    ];
    let mut flags = vec!["--json", json.to_str().unwrap()];
    flags.extend(extra);
    one_job("tests/pool/crash", &target, &flags, 1, &expected);
    let report = json_report(&json);
    assert_eq!(report["servers"]["started"], 2, "{report}");
    assert!(report["servers"]["starting"].as_f64().unwrap() > 0.0);
    let replaced = report["servers"]["replaced"].as_array().expect("replaced");
    assert_eq!(replaced.len(), 1, "{report}");
    assert!(replaced[0].as_str().unwrap().contains(why), "{report}");
    let after = &report["suites"][1];
    assert_eq!(after["scenario"], "after-the-crash");
    let notes = after["steps"][0]["transcript"].to_string();
    assert!(
        notes.contains("was stopped after `breaks-it@2026-07-28`"),
        "{notes}"
    );
}

/// One reader in one era: one process, counted in the summary.
#[test]
fn the_process_count_is_reported() {
    let target = stdio_target(&[]);
    let reader = "tests/pool/isolation/1-reads.yaml";
    let expected = ["Server processes: 1 started ("];
    one_job(reader, &target, &["--era", "2026-07-28"], 0, &expected);
}

/// Each scenario's verdict (`id`: the status of every step) in a report.
fn verdicts(report: &Value) -> Vec<(String, Vec<String>)> {
    let suites = report["suites"].as_array().expect("suites");
    suites
        .iter()
        .map(|s| {
            let steps = s["steps"].as_array().expect("steps");
            let statuses = steps.iter().map(|st| st["outcome"]["status"].to_string());
            (s["id"].as_str().unwrap().to_string(), statuses.collect())
        })
        .collect()
}

/// The hostile stdio server (`tests/hostile/server.py`) misbehaving in `mode`.
fn hostile(mode: &str) -> String {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/server.py");
    format!("python3 {} {mode}", script.display())
}

/// The two scenarios of `tests/pool/leftovers` (`calls` shares its process and the server
/// misbehaves just after its reply, `reads` shares it too) in `order`, over the hostile
/// server in `mode`, one job: the JSON report, pooled or under `--fresh`.
fn leftovers_run(mode: &str, order: [&str; 2], fresh: bool) -> Value {
    let target = hostile(mode);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let files = order.map(|s| format!("tests/pool/leftovers/{s}.yaml"));
    let mut args = vec!["run", &files[0], &files[1], "--stdio", &target];
    args.extend(["--jobs", "1", "--json", json.to_str().unwrap()]);
    if fresh {
        args.push("--fresh");
    }
    let out = run(&args);
    assert!(out.code <= 1, "{mode} {order:?}\n{}", out.all_output());
    json_report(&json)
}

/// What the server wrote after `calls`'s reply is read before the process is handed on,
/// in both orders: every verdict equals `--fresh`'s (where nobody reads it), and the
/// pooled `calls` shows what was read (`shown`) in its transcript. Unless `exits`, the
/// process is handed on whatever the order. Returns the pooled reports (calls first,
/// reads first).
fn leftovers_are_not_the_next_scenarios(mode: &str, shown: &str, exits: bool) -> [Value; 2] {
    [["calls", "reads"], ["reads", "calls"]].map(|order| {
        let fresh = leftovers_run(mode, order, true);
        let pooled = leftovers_run(mode, order, false);
        assert_eq!(
            verdicts(&pooled),
            verdicts(&fresh),
            "{mode} {order:?}\n{pooled:#}"
        );
        assert_eq!(fresh["summary"]["failed"], 0, "{mode} {order:?}\n{fresh:#}");
        let handed_on = !exits || order[0] == "reads";
        assert_eq!(pooled["servers"]["warm"], u64::from(handed_on), "{pooled}");
        let suites = pooled["suites"].as_array().unwrap();
        let calls = suites.iter().find(|s| s["scenario"] == "calls").unwrap();
        let transcript = calls["steps"][0]["transcript"].to_string();
        assert!(transcript.contains(shown), "{mode} {order:?}: {transcript}");
        pooled
    })
}

#[test]
fn garbage_after_a_reply_stays_with_the_scenario_that_caused_it() {
    let shown = "non-JSON output from the server: garbage after the reply";
    leftovers_are_not_the_next_scenarios("garbage-after-call", shown, false);
}

#[test]
fn a_stale_duplicate_reply_stays_with_the_scenario_that_caused_it() {
    let shown = "the server wrote 1 reply(ies) to an earlier request";
    leftovers_are_not_the_next_scenarios("duplicate-call-reply", shown, false);
}

#[test]
fn a_late_notification_stays_with_the_scenario_that_caused_it() {
    let shown = "the server wrote 1 notification(s)";
    leftovers_are_not_the_next_scenarios("log-after-call", shown, false);
}

/// A server that exits just after `calls`'s reply is not handed on: `reads` starts a new
/// one, and the report says why.
#[test]
fn a_server_that_exits_after_a_reply_is_not_handed_on() {
    let shown = "its server process is not handed to another scenario";
    let [calls_first, _] = leftovers_are_not_the_next_scenarios("exit-after-call", shown, true);
    assert_eq!(calls_first["servers"]["started"], 2, "{calls_first}");
    // Why: the closed stdout, or the `ping` that could not be written (whichever the
    // client saw first).
    let replaced = calls_first["servers"]["replaced"].to_string();
    let stopped = "the shared server process (legacy) was stopped after `calls@legacy`";
    assert!(replaced.contains(stopped), "{replaced}");
}

/// A server that never answers the hand-over barrier (`ping`) costs one wait, not one per
/// scenario: the process is not handed on, and its era's scenarios run on processes of
/// their own from then on, passing as under `--fresh`.
#[test]
fn a_server_that_does_not_answer_the_barrier_costs_one_wait() {
    let target = hostile("ignore-ping");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let files = ["calls", "reads", "reads-again"].map(|s| format!("tests/pool/leftovers/{s}.yaml"));
    let mut args = vec!["run", &files[0], &files[1], &files[2], "--stdio", &target];
    // The default timeout: a shorter one could cut a slow start short on a loaded machine.
    args.extend(["--jobs", "1", "--json", json.to_str().unwrap()]);
    let out = run(&args);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let report = json_report(&json);
    assert_eq!(report["servers"]["started"], 3, "{report}");
    let replaced = report["servers"]["replaced"].as_array().expect("replaced");
    assert_eq!(replaced.len(), 1, "{report}");
    let why = replaced[0].as_str().unwrap();
    assert!(
        why.contains("`ping` after its last step got no answer within 5s"),
        "{why}"
    );
    assert!(why.contains("processes of their own from now on"), "{why}");
}

/// A server that writes every reply twice: the second copy of the hand-over `ping`'s reply
/// reaches the next scenario, which notes it and judges nothing by it (under `--fresh`
/// its first step passes too).
#[test]
fn a_second_copy_of_every_reply_is_not_the_next_scenarios() {
    let shown = "the server wrote 1 reply(ies) to an earlier request";
    let [calls_first, _] =
        leftovers_are_not_the_next_scenarios("duplicate-every-reply", shown, false);
    let reads = calls_first["suites"][1]["steps"][0]["transcript"].to_string();
    assert!(
        reads.contains("a second reply to the hand-over request after the scenario before"),
        "{reads}"
    );
}
