//! `mcpspec load` against the example server: a fixed rate held with its budgets met, a
//! slow tool breaking the p99 budget (and only it), wrong answers counted as errors of their
//! kind, a server that dies and Ctrl-C ending the run with what was measured, bad profiles
//! refused. Short runs and budgets far from normal: nothing here asserts a tight timing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{Listening, example_server, read_json, run, stdio_target};

fn scenario(name: &str) -> String {
    common::repo_root()
        .join("tests/load")
        .join(name)
        .display()
        .to_string()
}

/// The tests that judge a schedule or a latency take this lock: run side by side, the test
/// binary's own load runs would compete for the 2 cores they measure on.
fn timing_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn out_file(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The budget named `name` in the JSON report.
fn budget<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no budget {name}: {report:#}"))
}

/// 50 iterations a second for 3s over HTTP, in each era (a legacy session per connection,
/// modern stateless requests): the schedule holds, nothing fails, every budget is met.
#[test]
fn a_fixed_rate_over_http_holds_and_meets_its_budgets() {
    let _timing = timing_lock();
    let server = Listening::start({
        let mut cmd = Command::new(example_server());
        cmd.args(["--http", "127.0.0.1:0"]);
        cmd
    });
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (out_file(&dir, "load.json"), out_file(&dir, "load.xml"));
    let mut outcomes = Vec::new();
    for era in ["legacy", "modern"] {
        let out = run(&[
            "load",
            &scenario("tools.yaml"),
            "--url",
            &server.url,
            "--era",
            era,
            "--rate",
            "50",
            "--duration",
            "3s",
            "--p99",
            "2s",
            "--p95",
            "2s",
            "--min-throughput",
            "20",
            "--json",
            path(&json),
            "--junit",
            path(&junit),
        ]);
        outcomes.push((era, out, read_json(&json), std::fs::read_to_string(&junit)));
    }
    let mut child = server.child;
    let _ = child.kill();
    let _ = child.wait();
    for (era, out, report, xml) in outcomes {
        assert_eq!(out.code, 0, "{era}: {out:?}");
        assert_eq!(report["era"], era);
        let summary = &report["summary"];
        let iterations = summary["iterations"].as_u64().unwrap();
        // 150 due in 3s: a generous band (the schedule, not the machine, sets the count).
        assert!((120..=160).contains(&iterations), "{era}: {summary:#}");
        assert_eq!(summary["requests"].as_u64(), Some(2 * iterations));
        assert_eq!(summary["failedIterations"], 0, "{era}: {summary:#}");
        assert_eq!(summary["errors"], serde_json::json!({}));
        assert_eq!(report["targetRate"], 50.0);
        assert_eq!(report["ended"]["early"], false);
        assert!(summary["latency"]["p99Ms"].as_f64().unwrap() > 0.0);
        assert_eq!(summary["steps"].as_array().unwrap().len(), 2);
        let series = report["series"].as_array().unwrap();
        assert!((3..=4).contains(&series.len()), "{era}: {series:?}");
        for name in ["p95", "p99", "errorRate", "throughput"] {
            assert_eq!(
                budget(&report, name)["passed"],
                true,
                "{era} {name}: {report:#}"
            );
        }
        let xml = xml.unwrap();
        assert!(xml.contains(r#"name="p99 &lt;= 2s""#), "{xml}");
        assert!(!xml.contains("<failure"), "{xml}");
        assert!(out.stdout.contains("result: passed"), "{out:?}");
    }
    common::assert_valid_junit(&junit);
}

/// `--defect slow-read-tool=1` makes the `slow` tool take a second: the p99 budget (300ms,
/// some 100x a normal call) breaks with the measured value; the error budget holds (a
/// slow reply is still a right one).
#[test]
fn a_slow_tool_breaks_the_latency_budget_and_only_it() {
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (out_file(&dir, "load.json"), out_file(&dir, "load.xml"));
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--stdio",
        &stdio_target(&["--defect", "slow-read-tool=1"]),
        "--clients",
        "1",
        "--iterations",
        "2",
        "--p99",
        "300ms",
        "--json",
        path(&json),
        "--junit",
        path(&junit),
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    let report = read_json(&json);
    let p99 = budget(&report, "p99");
    assert_eq!(p99["passed"], false, "{report:#}");
    assert!(p99["measured"].as_str().unwrap().ends_with("ms"), "{p99}");
    assert_eq!(budget(&report, "errorRate")["passed"], true, "{report:#}");
    let steps = report["summary"]["steps"].as_array().unwrap();
    let slow = steps.iter().find(|s| s["step"] == "call slow").unwrap();
    assert!(
        slow["latency"]["p50Ms"].as_f64().unwrap() >= 1000.0,
        "{slow}"
    );
    common::assert_valid_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
    assert!(xml.contains(r#"type="budget""#), "{xml}");
    assert!(out.stdout.contains("✗ p99 <= 300ms"), "{out:?}");
}

/// A failed expectation and a JSON-RPC error no expectation asked for are each an error of
/// their kind on every iteration; `--max-error-rate 100` accepts them.
#[test]
fn wrong_answers_count_as_errors_of_their_kind() {
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let target = stdio_target(&[]);
    let args = |rate: &'static str| {
        vec![
            "load".to_string(),
            scenario("wrong.yaml"),
            "--stdio".into(),
            target.clone(),
            "--iterations".into(),
            "5".into(),
            "--max-error-rate".into(),
            rate.into(),
            "--json".into(),
            path(&json).into(),
        ]
    };
    let strict: Vec<String> = args("0");
    let out = run(&strict.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.code, 1, "{out:?}");
    let report = read_json(&json);
    let summary = &report["summary"];
    assert_eq!(summary["iterations"], 5, "{summary:#}");
    assert_eq!(summary["failedIterations"], 5, "{summary:#}");
    assert_eq!(summary["errors"]["expectation"], 5, "{summary:#}");
    assert_eq!(summary["errors"]["protocol"], 5, "{summary:#}");
    assert_eq!(budget(&report, "errorRate")["passed"], false);
    let lenient: Vec<String> = args("100");
    let out = run(&lenient.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.code, 0, "{out:?}");
}

/// The HTTP server dies at its 20th tool call (about a second into a 20s run at 20/s, however
/// slow the machine): the run ends there (not 20s later), says why and when, keeps what it
/// measured, and fails.
#[test]
fn a_server_that_dies_ends_the_run_with_what_was_measured() {
    let server = Listening::start({
        let mut cmd = Command::new(example_server());
        cmd.args(["--http", "127.0.0.1:0", "--defect", "crash-after-calls=20"]);
        cmd
    });
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--url",
        &server.url,
        "--rate",
        "20",
        "--duration",
        "20s",
        "--json",
        path(&json),
    ]);
    let mut child = server.child;
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(out.code, 1, "{out:?}");
    let report = read_json(&json);
    let ended = &report["ended"];
    assert_eq!(ended["early"], true, "{ended}");
    assert!(
        ended["why"]
            .as_str()
            .unwrap()
            .contains("could not be reached"),
        "{ended}"
    );
    assert!(ended["atSeconds"].as_f64().unwrap() < 15.0, "{ended}");
    assert!(report["summary"]["iterations"].as_u64().unwrap() > 0);
    assert!(out.stdout.contains("early"), "{out:?}");
}

/// Ctrl-C writes the report of what ran, and exits as for a signal.
#[test]
fn an_interrupt_reports_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let mut cmd = Command::new(common::mcpspec());
    cmd.args([
        "load",
        &scenario("tools.yaml"),
        "--stdio",
        &stdio_target(&[]),
        "--clients",
        "1",
        "--duration",
        "60s",
        "--json",
        path(&json),
    ]);
    let spawned = common::process::spawn(&mut cmd);
    // Long enough for the server to start and iterations to finish on a busy machine.
    std::thread::sleep(Duration::from_secs(3));
    common::process::signal(spawned.child.id(), "INT");
    let finished = spawned
        .wait(Duration::from_secs(20))
        .expect("the run ends after the interrupt");
    assert_eq!(finished.code, 130, "{finished:?}");
    let report = read_json(&json);
    assert_eq!(report["ended"]["why"], "interrupted (SIGINT)", "{report:#}");
    assert!(report["summary"]["iterations"].as_u64().unwrap() > 0);
}

#[test]
fn nothing_listening_is_unreachable() {
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--url",
        "http://127.0.0.1:9/mcp",
        "--iterations",
        "1",
    ]);
    assert_eq!(out.code, 4, "{out:?}");
}

#[test]
fn bad_profiles_are_usage_errors() {
    let tools = scenario("tools.yaml");
    for (flags, says) in [
        (&["--rate", "0"][..], "greater than 0"),
        (&["--rate", "-3"][..], "greater than 0"),
        (&["--duration", "-1s"][..], "negative"),
        (&["--duration", "0s"][..], "out of range"),
        (&["--clients", "0"][..], "out of range"),
        (
            &["--clients", "2", "--rate", "5"][..],
            "cannot be used with",
        ),
        (
            &["--duration", "1s", "--iterations", "3"][..],
            "cannot be used with",
        ),
    ] {
        let mut args = vec!["load", tools.as_str(), "--url", "http://127.0.0.1:9/mcp"];
        args.extend_from_slice(flags);
        let out = run(&args);
        assert_eq!(out.code, 2, "{flags:?}: {out:?}");
        assert!(out.stderr.contains(says), "{flags:?}: {out:?}");
    }
}

/// A scenario that does not apply to the target runs no step: its iterations are counted
/// as skipped with the reason, not as fast successes, and the error budget (held by nothing
/// sent) breaks.
#[test]
fn a_scenario_that_does_not_apply_is_not_a_success() {
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let out = run(&[
        "load",
        &scenario("needs-http.yaml"),
        "--stdio",
        &stdio_target(&[]),
        "--iterations",
        "3",
        "--json",
        path(&json),
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    let report = read_json(&json);
    let summary = &report["summary"];
    assert_eq!(summary["skippedIterations"], 3, "{summary:#}");
    assert_eq!(summary["requests"], 0, "{summary:#}");
    assert!(
        summary["skipReason"].as_str().unwrap().contains("HTTP"),
        "{summary:#}"
    );
    assert_eq!(budget(&report, "errorRate")["passed"], false);
}

/// Over stdio a server process that exits mid-iteration is replaced by a new one: every
/// iteration's crash is a transport error of its own; one that never starts is exit 4.
#[test]
fn a_stdio_server_that_exits_is_replaced_and_one_that_never_starts_is_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--stdio",
        &stdio_target(&["--defect", "crash-on-call"]),
        "--iterations",
        "4",
        "--json",
        path(&json),
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    let summary = &read_json(&json)["summary"];
    assert_eq!(summary["iterations"], 4, "{summary:#}");
    assert_eq!(summary["errors"]["transport"], 4, "{summary:#}");
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--stdio",
        &stdio_target(&["--defect", "exit-at-start"]),
        "--iterations",
        "4",
    ]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(out.stderr.contains("config file missing"), "{out:?}");
}

/// `--stdio-mode shared`: every virtual client's requests go to one server process (a
/// wrapper counts the starts), at once: 4 clients of a 200 ms call do more than one process
/// answering one call at a time could (10 in 2s). A shared process that crashes is replaced;
/// one that never starts is exit 4; over HTTP the mode is a usage error.
#[cfg(unix)]
#[test]
fn a_shared_stdio_process_serves_every_client_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let starts = out_file(&dir, "starts");
    let counted = |server_flags: &str| {
        format!(
            "sh -c 'echo started >> {}; exec {} {server_flags}'",
            path(&starts),
            example_server().display()
        )
    };
    let out = run(&[
        "load",
        &scenario("slow-200ms.yaml"),
        "--stdio",
        &counted(""),
        "--stdio-mode",
        "shared",
        "--clients",
        "4",
        "--duration",
        "2s",
        "--json",
        path(&json),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&starts).unwrap().lines().count(),
        1,
        "{out:?}"
    );
    let report = read_json(&json);
    assert!(
        report["profile"]
            .as_str()
            .unwrap()
            .contains("4 client(s), closed loop, 2s, one shared server process"),
        "{report:#}"
    );
    let summary = &report["summary"];
    assert!(summary["iterations"].as_u64().unwrap() > 12, "{summary:#}");
    assert_eq!(summary["failedIterations"], 0, "{summary:#}");

    // The default: a process per client.
    std::fs::remove_file(&starts).unwrap();
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--stdio",
        &counted(""),
        "--clients",
        "3",
        "--jobs",
        "3",
        "--iterations",
        "6",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&starts).unwrap().lines().count(),
        3,
        "{out:?}"
    );

    // Each call crashes the shared process: each iteration a transport error of its own,
    // the process started again for the next.
    std::fs::remove_file(&starts).unwrap();
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--stdio",
        &counted("--defect crash-on-call"),
        "--stdio-mode",
        "shared",
        "--iterations",
        "4",
        "--json",
        path(&json),
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    let summary = &read_json(&json)["summary"];
    assert_eq!(summary["errors"]["transport"], 4, "{summary:#}");
    assert_eq!(
        std::fs::read_to_string(&starts).unwrap().lines().count(),
        4,
        "{out:?}"
    );
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--stdio",
        &stdio_target(&["--defect", "exit-at-start"]),
        "--stdio-mode",
        "shared",
        "--iterations",
        "4",
    ]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(out.stderr.contains("config file missing"), "{out:?}");
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--url",
        "http://127.0.0.1:9/mcp",
        "--stdio-mode",
        "shared",
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--stdio-mode shared"), "{out:?}");
}

/// On a terminal (`script` gives the run a pseudo-terminal) a live line shows the rate,
/// the errors and p50/p99 so far, redrawn and cleared before the summary; not on a pipe.
/// Linux only: util-linux's `script`.
#[cfg(target_os = "linux")]
#[test]
fn on_a_terminal_the_load_so_far_is_shown_live() {
    let command = format!(
        "{} load {} --stdio '{}' --rate 20 --duration 3s",
        common::mcpspec().display(),
        scenario("tools.yaml"),
        stdio_target(&[])
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("CI")
        .env("NO_COLOR", "1")
        .output()
        .expect("script (util-linux) runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("\r\x1b[2K[1s] ") && text.contains(" iterations, 0 failed (0.00%), p50 "),
        "no live line:\n{text:?}"
    );
    assert!(
        text.contains("result: passed"),
        "the summary follows:\n{text}"
    );
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--stdio",
        &stdio_target(&[]),
        "--rate",
        "20",
        "--duration",
        "2s",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stderr.contains("\x1b[2K"), "{out:?}");
}

/// A weighted mix (3:1) splits the iterations exactly by weight (a smooth round robin);
/// each iteration's `load.iteration`, `load.client` and `load.row` are its own: the steps
/// that expect an odd iteration, or the row `Boston` of three, fail exactly as often.
#[test]
fn a_weighted_mix_and_per_iteration_values() {
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let out = run(&[
        "load",
        &scenario("mix-heavy.yaml"),
        &scenario("mix-light.yaml"),
        "--stdio",
        &stdio_target(&[]),
        "--json",
        path(&json),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let report = read_json(&json);
    // The profile of mix-heavy's `load:` block: 2 clients, 40 iterations, think time.
    assert!(
        report["profile"].as_str().unwrap().contains("2 client(s)"),
        "{report:#}"
    );
    let steps = report["summary"]["steps"].as_array().unwrap();
    let requests = |s: &str| {
        steps.iter().find(|x| x["scenario"] == s).unwrap()["requests"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(
        (requests("mix-heavy"), requests("mix-light")),
        (30, 10),
        "{report:#}"
    );
    let out = run(&[
        "load",
        &scenario("per-iteration.yaml"),
        "--stdio",
        &stdio_target(&[]),
        "--clients",
        "2",
        "--iterations",
        "12",
        "--max-error-rate",
        "100",
        "--json",
        path(&json),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let report = read_json(&json);
    let errors: Vec<(String, u64)> = report["summary"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["step"].as_str().unwrap().to_string(),
                s["errors"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        errors,
        [
            ("odd iteration".to_string(), 6),
            ("row is Boston".to_string(), 8),
            ("client in range".to_string(), 0)
        ],
        "{report:#}"
    );
}

/// Steps by rate (10/s then 30/s, a second each, after a warm-up): each step's iterations
/// in the step table, the warm-up's in none.
#[test]
fn a_stepped_load_reports_each_step() {
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let out = run(&[
        "load",
        &scenario("stepped.yaml"),
        "--stdio",
        &stdio_target(&[]),
        "--json",
        path(&json),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let report = read_json(&json);
    let stages = report["summary"]["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 2, "{report:#}");
    let count = |i: usize| stages[i]["iterations"].as_u64().unwrap();
    // 10 and 30 due: generous bands (the schedule sets the counts, not the machine).
    assert!((7..=11).contains(&count(0)), "{stages:#?}");
    assert!((22..=31).contains(&count(1)), "{stages:#?}");
    assert_eq!(stages[1]["pace"], "30/s");
    assert_eq!(
        report["summary"]["iterations"].as_u64().unwrap(),
        count(0) + count(1)
    );
    assert!(out.stdout.contains("load steps:"), "{out:?}");
    // Each stage's target, each second's, and at the top the highest (it was the first
    // stage's alone, 10/s, as if the run had asked for that throughout).
    assert_eq!(stages[0]["targetRate"], 10.0, "{stages:#?}");
    assert_eq!(stages[1]["targetRate"], 30.0, "{stages:#?}");
    assert_eq!(report["targetRate"], 30.0);
    let series = report["series"].as_array().unwrap();
    assert_eq!(series[0]["targetRate"], 10.0, "{series:#?}");
    assert_eq!(series[1]["targetRate"], 30.0, "{series:#?}");
    assert!(
        out.stdout.contains("(target up to 30/s, by stage below)"),
        "{out:?}"
    );
}

/// `load:` in mcpspec.yaml is the profile below the scenarios' and the command line's.
#[test]
fn the_profile_of_mcpspec_yaml_and_the_command_line_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let config = out_file(&dir, "mcpspec.yaml");
    std::fs::write(&config, "load:\n  clients: 1\n  iterations: 3\n").unwrap();
    let target = stdio_target(&[]);
    let tools = scenario("tools.yaml");
    let base = [
        "load",
        tools.as_str(),
        "--config",
        path(&config),
        "--stdio",
        target.as_str(),
        "--json",
        path(&json),
    ];
    let out = run(&base);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(read_json(&json)["summary"]["iterations"], 3);
    let mut flags = base.to_vec();
    flags.extend(["--iterations", "5"]);
    let out = run(&flags);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(read_json(&json)["summary"]["iterations"], 5);
}

/// Bad `load:` blocks are told at validate time, each at its line and column: a rate of
/// 0, a negative or zero duration, a count with a duration, a negative weight, steps that
/// mix clients and rates; weights that sum to 0 at `mcpspec load`; in mcpspec.yaml too.
#[test]
fn bad_load_blocks_are_errors_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = out_file(&dir, name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let steps = "steps:\n  - name: list\n    request: { method: tools/list }\n";
    let bad = write(
        "bad.yaml",
        &format!(
            "scenario: bad\nload:\n  rate: 0\n  duration: -5s\n  warmup: 0s\n  iterations: 3\n  weight: -1\n{steps}"
        ),
    );
    let out = run(&["validate", path(&bad)]);
    assert_eq!(out.code, 2, "{out:?}");
    for (at, says) in [
        ("bad.yaml:3:9", "`rate: 0` must be greater than 0"),
        ("bad.yaml:4:13", "cannot be negative"),
        ("bad.yaml:5:11", "out of range"),
        ("bad.yaml:6:15", "`iterations` with `duration`"),
        ("bad.yaml:7:11", "`weight: -1` cannot be negative"),
    ] {
        assert!(out.stderr.contains(at), "{at}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{says}: {}", out.stderr);
    }
    let mixed = write(
        "mixed.yaml",
        &format!(
            "scenario: mixed\nload:\n  steps:\n    - {{ rate: 10, duration: 1s }}\n    - {{ clients: 2, duration: 1s }}\n{steps}"
        ),
    );
    let out = run(&["validate", path(&mixed)]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("mixed.yaml:5:7"), "{}", out.stderr);
    assert!(
        out.stderr.contains("mix `clients` and `rate`"),
        "{}",
        out.stderr
    );
    let zero = write(
        "zero.yaml",
        &format!("scenario: zero\nload: {{ weight: 0 }}\n{steps}"),
    );
    let out = run(&["load", path(&zero), "--stdio", &stdio_target(&[])]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("zero.yaml:2:17"), "{}", out.stderr);
    assert!(out.stderr.contains("sum to 0"), "{}", out.stderr);
    let config = write("mcpspec.yaml", "load:\n  clients: 0\n  each: [a]\n");
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--config",
        path(&config),
        "--stdio",
        &stdio_target(&[]),
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("mcpspec.yaml:2:12"), "{}", out.stderr);
    assert!(out.stderr.contains("mcpspec.yaml:3:9"), "{}", out.stderr);
}

/// Budgets in YAML, per step, tool, method and of the scenario, each a JUnit test case
/// with its measured value: against the correct server all hold; with
/// `--defect slow-read-tool=1` the two on the slow call break, and only they.
#[test]
fn yaml_budgets_per_step_tool_and_method_break_only_where_it_is_slow() {
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (out_file(&dir, "load.json"), out_file(&dir, "load.xml"));
    let load = |defect: &[&str]| {
        run(&[
            "load",
            &scenario("budgets.yaml"),
            "--stdio",
            &stdio_target(defect),
            "--iterations",
            "2",
            "--json",
            path(&json),
            "--junit",
            path(&junit),
        ])
    };
    let out = load(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    let report = read_json(&json);
    assert_eq!(report["budgets"].as_array().unwrap().len(), 8, "{report:#}");
    let out = load(&["--defect", "slow-read-tool=1"]);
    assert_eq!(out.code, 1, "{out:?}");
    let report = read_json(&json);
    let broke: Vec<(String, String)> = report["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["passed"] == false)
        .map(|b| {
            (
                b["name"].as_str().unwrap().to_string(),
                b["scope"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        broke,
        [
            ("p99".to_string(), "step `budgets / call slow`".to_string()),
            ("max".to_string(), "tool `slow`".to_string())
        ],
        "{report:#}"
    );
    common::assert_valid_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
    assert!(xml.contains("max of tool `slow` &lt;= 300ms"), "{xml}");
    let tools = report["summary"]["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "slow");
    assert_eq!(tools[0]["count"], 2);
}

/// "No step's failure rate over X": a step that fails every time breaks it, with the
/// worst step named; a budget on a step the scenario does not have is a validate error.
#[test]
fn the_step_failure_rate_budget_and_budgets_on_unknown_steps() {
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let file = out_file(&dir, "fails.yaml");
    std::fs::write(
        &file,
        "scenario: fails\nload:\n  budgets:\n    - { stepFailureRate: 10 }\nsteps:\n  - name: fine\n    request: { method: tools/list }\n  - name: unknown tool\n    request: { method: tools/call, params: { name: no-such-tool, arguments: {} } }\n",
    )
    .unwrap();
    let out = run(&[
        "load",
        path(&file),
        "--stdio",
        &stdio_target(&[]),
        "--iterations",
        "3",
        "--max-error-rate",
        "100",
        "--json",
        path(&json),
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    let report = read_json(&json);
    let b = budget(&report, "stepFailureRate");
    assert_eq!(b["passed"], false, "{b}");
    assert!(
        b["measured"]
            .as_str()
            .unwrap()
            .contains("fails / unknown tool"),
        "{b}"
    );
    assert_eq!(report["summary"]["errors"]["protocol"], 3, "{report:#}");
    let bad = out_file(&dir, "bad.yaml");
    std::fs::write(
        &bad,
        "scenario: bad\nload:\n  budgets:\n    - { step: lsit tools, p99: 1s }\n    - { tool: slow }\nsteps:\n  - name: list tools\n    request: { method: tools/list }\n",
    )
    .unwrap();
    let out = run(&["validate", path(&bad)]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("bad.yaml:4:15"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("budget on an unknown step `lsit tools`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("did you mean `list tools`?"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("bad.yaml:5:7"), "{}", out.stderr);
    assert!(
        out.stderr.contains("a budget with no limit"),
        "{}",
        out.stderr
    );
}

/// `--find-limit` doubles the rate from `--rate` until a budget breaks: a 200 ms call on at
/// most 2 connections serves some 10 a second, so 3/s and 6/s hold (p99 about 200 ms) and
/// 12/s breaks the p99 budget of 500 ms (its queue grows by 2 a second or more).
#[test]
fn find_limit_reports_the_last_rate_that_held() {
    let _timing = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (out_file(&dir, "limit.json"), out_file(&dir, "limit.xml"));
    let out = run(&[
        "load",
        &scenario("slow-200ms.yaml"),
        "--stdio",
        &stdio_target(&[]),
        "--jobs",
        "2",
        "--rate",
        "3",
        "--duration",
        "3s",
        "--find-limit",
        "--p99",
        "500ms",
        "--json",
        path(&json),
        "--junit",
        path(&junit),
        "--html",
        path(&out_file(&dir, "limit.html")),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    // The page: the step table, the step that broke marked failed.
    let page = std::fs::read_to_string(out_file(&dir, "limit.html")).unwrap();
    assert!(
        page.contains("limit: 6/s held, 12/s broke a budget"),
        "{page}"
    );
    assert_eq!(page.matches("<tr class=\"passed\"").count(), 2, "{page}");
    assert_eq!(page.matches("<tr class=\"failed\"").count(), 1, "{page}");
    let report = read_json(&json);
    assert_eq!(report["lastHeld"], 6.0, "{report:#}");
    assert_eq!(report["brokeAt"], 12.0, "{report:#}");
    let steps = report["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "{report:#}");
    assert_eq!(steps[2]["held"], false);
    assert!(
        out.stdout.contains("limit: 6/s held, 12/s broke a budget"),
        "{out:?}"
    );
    common::assert_valid_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
    assert!(xml.contains(r#"name="rate 12/s""#), "{xml}");
    // Without a rate to start from: a usage error.
    let out = run(&[
        "load",
        &scenario("slow-200ms.yaml"),
        "--stdio",
        &stdio_target(&[]),
        "--find-limit",
    ]);
    assert_eq!(out.code, 2, "{out:?}");
}

/// `mcpspec load compare`: a candidate whose slow call takes a second regresses there (its
/// distribution significantly slower by the Mann-Whitney U test on the histograms), a
/// report compared with itself does not; a file that is no load report is exit 2.
#[test]
fn compare_flags_a_significant_slowdown_and_not_the_same_run() {
    let _timing = timing_lock();
    let dir = tempfile::tempdir().unwrap();
    let (base, candidate) = (out_file(&dir, "base.json"), out_file(&dir, "cand.json"));
    let (json, junit) = (
        out_file(&dir, "compare.json"),
        out_file(&dir, "compare.xml"),
    );
    for (report, defect, n) in [
        (&base, &[][..], "20"),
        (&candidate, &["--defect", "slow-read-tool=1"][..], "3"),
    ] {
        let out = run(&[
            "load",
            &scenario("tools.yaml"),
            "--stdio",
            &stdio_target(defect),
            "--iterations",
            n,
            "--json",
            path(report),
        ]);
        assert_eq!(out.code, 0, "{out:?}");
    }
    let out = run(&[
        "load",
        "compare",
        path(&base),
        path(&candidate),
        "--json",
        path(&json),
        "--junit",
        path(&junit),
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    let changes = read_json(&json)["changes"].as_array().unwrap().clone();
    let slow = changes
        .iter()
        .find(|c| c["name"] == "list-and-call / call slow")
        .unwrap();
    assert_eq!(slow["regressed"], true, "{slow:#}");
    assert!(slow["pValue"].as_f64().unwrap() < 0.05, "{slow:#}");
    common::assert_valid_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<failure"), "{xml}");
    let out = run(&["load", "compare", path(&base), path(&base)]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("result: no regression"), "{out:?}");
    let out = run(&["load", "compare", path(&base), path(&junit)]);
    assert_eq!(out.code, 2, "{out:?}");
}

/// The `[value, count]` pairs of a histogram in a report, added into `into`.
fn add_counts(into: &mut std::collections::BTreeMap<u64, u64>, counts: &serde_json::Value) {
    for pair in counts.as_array().unwrap() {
        *into.entry(pair[0].as_u64().unwrap()).or_default() += pair[1].as_u64().unwrap();
    }
}

/// Three shards of a 30/s run (10/s each) side by side, then `report merge`: the merged
/// histogram is the shards' added value by value, its total their iterations, its
/// percentiles those of one histogram of every sample; the budgets are judged again on
/// the merged numbers. A shard with no client, and a shard missing from the merge, are
/// usage errors.
#[test]
fn three_shards_merge_exactly() {
    let server = Listening::start({
        let mut cmd = Command::new(example_server());
        cmd.args(["--http", "127.0.0.1:0"]);
        cmd
    });
    let dir = tempfile::tempdir().unwrap();
    let shard_files: Vec<PathBuf> = (1..=3)
        .map(|k| out_file(&dir, &format!("shard-{k}.json")))
        .collect();
    let spawned: Vec<_> = shard_files
        .iter()
        .enumerate()
        .map(|(i, json)| {
            let mut cmd = Command::new(common::mcpspec());
            cmd.args([
                "load",
                &scenario("tools.yaml"),
                "--url",
                &server.url,
                "--rate",
                "30",
                "--duration",
                "2s",
                "--p99",
                "2s",
                "--shard",
                &format!("{}/3", i + 1),
                "--json",
                path(json),
            ]);
            common::process::spawn(&mut cmd)
        })
        .collect();
    for s in spawned {
        let finished = s.wait(Duration::from_secs(60)).expect("a shard ends");
        assert_eq!(finished.code, 0, "{finished:?}");
    }
    let mut child = server.child;
    let _ = child.kill();
    let _ = child.wait();
    let shards: Vec<serde_json::Value> = shard_files.iter().map(|f| read_json(f)).collect();
    let mut all = std::collections::BTreeMap::new();
    let mut iterations = 0;
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(s["targetRate"], 10.0, "{s:#}");
        assert_eq!(s["shard"], serde_json::json!({"index": i + 1, "count": 3}));
        // The generator's own CPU use is measured.
        assert!(
            s["generatorCpu"]["wallSeconds"].as_f64().unwrap() > 0.0,
            "{s:#}"
        );
        assert!(
            s["generatorCpu"]["percent"].as_f64().unwrap() >= 0.0,
            "{s:#}"
        );
        add_counts(&mut all, &s["summary"]["histogram"]);
        iterations += s["summary"]["iterations"].as_u64().unwrap();
    }
    let (json, junit) = (out_file(&dir, "merged.json"), out_file(&dir, "merged.xml"));
    // Given in any order.
    let out = run(&[
        "report",
        "merge",
        path(&shard_files[2]),
        path(&shard_files[0]),
        path(&shard_files[1]),
        "--json",
        path(&json),
        "--junit",
        path(&junit),
        "--html",
        path(&out_file(&dir, "merged.html")),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let page = std::fs::read_to_string(out_file(&dir, "merged.html")).unwrap();
    assert!(
        page.contains("<th>shards</th><td>merged from 3 shards</td>"),
        "{page}"
    );
    assert!(page.contains("id=\"latency-over-time\""), "{page}");
    let merged = read_json(&json);
    let summary = &merged["summary"];
    assert_eq!(merged["mergedShards"], 3);
    assert_eq!(merged["targetRate"], 30.0);
    assert_eq!(summary["iterations"].as_u64(), Some(iterations));
    let mut merged_counts = std::collections::BTreeMap::new();
    add_counts(&mut merged_counts, &summary["histogram"]);
    assert_eq!(
        merged_counts, all,
        "the merged histogram is the shards' added"
    );
    assert_eq!(merged_counts.values().sum::<u64>(), iterations);
    // Percentiles as of one histogram of every sample (the recorder's bounds).
    let mut whole = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for (v, n) in &all {
        whole.record_n(*v, *n).unwrap();
    }
    for (q, key) in [(0.5, "p50Ms"), (0.9, "p90Ms"), (0.99, "p99Ms")] {
        assert_eq!(
            summary["latency"][key].as_f64(),
            Some(whole.value_at_quantile(q) as f64 / 1000.0),
            "{key}"
        );
    }
    assert_eq!(
        summary["latency"]["maxMs"].as_f64(),
        Some(whole.max() as f64 / 1000.0)
    );
    // Each step's requests and the series add too.
    let step_requests = |r: &serde_json::Value| {
        r["summary"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["requests"].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(
        step_requests(&merged),
        shards.iter().map(step_requests).sum::<u64>()
    );
    let series_iterations = |r: &serde_json::Value| {
        r["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["iterations"].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(series_iterations(&merged), iterations);
    assert_eq!(budget(&merged, "p99")["passed"], true, "{merged:#}");
    assert_eq!(budget(&merged, "errorRate")["passed"], true, "{merged:#}");
    assert!(out.stdout.contains("result: passed"), "{out:?}");
    common::assert_valid_junit(&junit);

    // A shard missing: refused, naming the problem.
    let out = run(&[
        "report",
        "merge",
        path(&shard_files[0]),
        path(&shard_files[1]),
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("shard 1/3 does not fit"), "{out:?}");
    // Two clients over three shards leave one with none.
    let out = run(&[
        "load",
        &scenario("tools.yaml"),
        "--url",
        "http://127.0.0.1:9/mcp",
        "--clients",
        "2",
        "--shard",
        "3/3",
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("leave this shard none"), "{out:?}");
}

/// `--defect flaky-one-percent` fails every 100th `echo` call (`isError`): over 300
/// iterations that is 3 in 300, 1 %. The error budget on the `echo` tool (0.5 %) breaks
/// with that measured value; the one on `add` and the run's (2 %) hold. On the clean
/// server all three hold.
#[test]
fn a_tool_failing_one_percent_breaks_its_error_budget_and_only_it() {
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (out_file(&dir, "load.json"), out_file(&dir, "load.xml"));
    let load = |defect: &[&str]| {
        run(&[
            "load",
            &scenario("flaky.yaml"),
            "--stdio",
            &stdio_target(defect),
            "--clients",
            "1",
            "--iterations",
            "300",
            "--max-error-rate",
            "2",
            "--json",
            path(&json),
            "--junit",
            path(&junit),
        ])
    };
    let out = load(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    let report = read_json(&json);
    assert_eq!(report["summary"]["failedIterations"], 0, "{report:#}");
    assert!(
        report["budgets"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["passed"] == true),
        "{report:#}"
    );

    let out = load(&["--defect", "flaky-one-percent"]);
    assert_eq!(out.code, 1, "{out:?}");
    let report = read_json(&json);
    let summary = &report["summary"];
    assert_eq!(summary["iterations"], 300, "{summary:#}");
    assert_eq!(summary["failedIterations"], 3, "{summary:#}");
    assert_eq!(summary["errors"]["isError"], 3, "{summary:#}");
    let broke: Vec<(String, String, String)> = report["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["passed"] == false)
        .map(|b| {
            (
                b["name"].as_str().unwrap().to_string(),
                b["scope"].as_str().unwrap().to_string(),
                b["measured"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(broke.len(), 1, "{report:#}");
    assert_eq!(broke[0].0, "errorRate", "{report:#}");
    assert_eq!(broke[0].1, "tool `echo`", "{report:#}");
    assert!(broke[0].2.starts_with("1"), "{report:#}");
    let run_budget = report["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "errorRate" && b["scope"] == "the run")
        .unwrap_or_else(|| panic!("no run error budget: {report:#}"));
    assert_eq!(run_budget["passed"], true, "{run_budget}");
    let tools = summary["tools"].as_array().unwrap();
    let add = tools.iter().find(|t| t["name"] == "add").unwrap();
    assert_eq!(add["errors"], 0, "{add}");
    common::assert_valid_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
    assert!(xml.contains("errorRate of tool `echo`"), "{xml}");
}

/// `--html`: the load section of a self-contained page. With the slow tool the p99 budget
/// (300ms) breaks and shows as failed; the latency-over-time chart has its points, the
/// percentile table a row per step; a scenario named with `<&>` is escaped; nothing is
/// fetched (no script, no external resource).
#[test]
fn the_html_report_shows_the_load_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = out_file(&dir, "html.yaml");
    let text = std::fs::read_to_string(scenario("tools.yaml"))
        .unwrap()
        .replace(
            "scenario: list-and-call",
            "scenario: \"calls <slow> & lists\"",
        );
    std::fs::write(&file, text).unwrap();
    let html = out_file(&dir, "load.html");
    let out = run(&[
        "load",
        path(&file),
        "--stdio",
        &stdio_target(&["--defect", "slow-read-tool=1"]),
        "--iterations",
        "2",
        "--p99",
        "300ms",
        "--html",
        path(&html),
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    assert!(
        page.contains("<section class=\"load\" id=\"load\">"),
        "{page}"
    );
    // The profile and the totals.
    assert!(
        page.contains("<table class=\"profile\" id=\"profile\">"),
        "{page}"
    );
    assert!(
        page.contains("1 client(s), closed loop, 2 iterations"),
        "{page}"
    );
    assert!(page.contains("<th>transport</th><td>stdio</td>"), "{page}");
    assert!(page.contains("<th>achieved rate</th>"), "{page}");
    // The budgets: p99 broke, the error rate held.
    let row = |status: &str, what: &str| {
        page.lines().any(|l| {
            l.starts_with(&format!("<tr class=\"{status}\" data-status=\"{status}\">"))
                && l.contains(what)
        })
    };
    assert!(row("failed", "<td>p99</td>"), "{page}");
    assert!(row("failed", "&lt;= 300ms"), "{page}");
    assert!(row("passed", "<td>errorRate</td>"), "{page}");
    assert!(
        page.contains("<span class=\"badge b-FAIL\">FAIL</span>"),
        "{page}"
    );
    // The percentiles: the run, each step (the slow one over a second), method and tool.
    assert!(
        page.contains("<table class=\"percentiles\" id=\"percentiles\">"),
        "{page}"
    );
    let step = page
        .lines()
        .find(|l| l.contains("<tr data-kind=\"step\">") && l.contains("/ call slow"))
        .unwrap_or_else(|| panic!("no row of the slow step: {page}"));
    assert!(
        step.contains("<td>calls &lt;slow&gt; &amp; lists / call slow</td>"),
        "{step}"
    );
    assert_eq!(
        step.matches("ms</td>").count(),
        5,
        "p50 p90 p95 p99 max: {step}"
    );
    for kind in ["run", "method", "tool", "scenario"] {
        assert!(
            page.contains(&format!("<tr data-kind=\"{kind}\">")),
            "{kind}: {page}"
        );
    }
    assert!(!page.contains("<slow>"), "the name is escaped: {page}");
    // The chart of latency over time, its lines with points.
    assert!(
        page.contains("<svg class=\"chart\" id=\"latency-over-time\""),
        "{page}"
    );
    for class in ["p50", "p99", "rate"] {
        let line = page
            .lines()
            .find(|l| l.starts_with(&format!("<polyline class=\"{class}\" points=\"")))
            .unwrap_or_else(|| panic!("no {class} line: {page}"));
        let points = line.split('"').nth(3).unwrap();
        assert!(
            points
                .split(' ')
                .all(|p| p.split(',').count() == 2 && !p.is_empty()),
            "{line}"
        );
    }
    assert!(
        page.contains("<svg class=\"chart\" id=\"latency-by-percentile\""),
        "{page}"
    );
    // Self-contained.
    for external in ["<script", "<link", "src=", "url(", "@import"] {
        assert!(!page.contains(external), "{external}: {page}");
    }
}

/// A stepped load's page: the step table, and a band for each step on the chart.
#[test]
fn the_html_report_of_a_stepped_load_shows_its_steps() {
    let dir = tempfile::tempdir().unwrap();
    let html = out_file(&dir, "stepped.html");
    let out = run(&[
        "load",
        &scenario("stepped.yaml"),
        "--stdio",
        &stdio_target(&[]),
        "--html",
        path(&html),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<table class=\"stages\" id=\"stages\">"),
        "{page}"
    );
    assert!(
        page.contains("<td>10/s</td>") && page.contains("<td>30/s</td>"),
        "{page}"
    );
    assert_eq!(page.matches("<rect class=\"band").count(), 2, "{page}");
    assert!(
        page.contains("<span class=\"badge b-PASS\">PASS</span>"),
        "{page}"
    );
}

/// `load:` in pack.yaml: `mcpspec load PACK` runs the pack's profile and budgets; a flag
/// wins over it, a scenario's own block too, and it wins over mcpspec.yaml's.
#[test]
fn a_pack_carries_its_load_profile() {
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let pack = scenario("pack");
    let target = stdio_target(&[]);
    let load = |extra: &[&str]| {
        let mut args = vec![
            "load",
            pack.as_str(),
            "--stdio",
            target.as_str(),
            "--json",
            path(&json),
        ];
        args.extend(extra);
        let out = run(&args);
        (out, read_json(&json))
    };
    let (out, report) = load(&[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(report["summary"]["iterations"], 20, "{report:#}");
    assert!(
        report["profile"]
            .as_str()
            .unwrap()
            .starts_with("2 client(s)"),
        "{report:#}"
    );
    let budgets: Vec<String> = report["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| format!("{} of {} {}", b["name"], b["scope"], b["limit"]))
        .collect();
    assert_eq!(
        budgets,
        [
            r#""p99" of "the run" "<= 5s""#,
            r#""errorRate" of "the run" "<= 0%""#,
            r#""max" of "tool `echo`" "<= 5s""#
        ],
        "{report:#}"
    );
    // A flag wins.
    let (out, report) = load(&["--iterations", "3", "--clients", "1"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(report["summary"]["iterations"], 3, "{report:#}");
    assert!(
        report["profile"]
            .as_str()
            .unwrap()
            .starts_with("1 client(s)"),
        "{report:#}"
    );
    // Over mcpspec.yaml's.
    let config = out_file(&dir, "mcpspec.yaml");
    std::fs::write(&config, "load:\n  iterations: 7\n  think: 1ms\n").unwrap();
    let (out, report) = load(&["--config", path(&config)]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(report["summary"]["iterations"], 20, "{report:#}");
    assert!(
        report["profile"]
            .as_str()
            .unwrap()
            .contains("1ms think time"),
        "what the pack leaves, mcpspec.yaml gives: {report:#}"
    );
    // Under a scenario's own block.
    let copy = dir.path().join("pack");
    std::fs::create_dir(&copy).unwrap();
    std::fs::copy(Path::new(&pack).join("pack.yaml"), copy.join("pack.yaml")).unwrap();
    let own = std::fs::read_to_string(Path::new(&pack).join("echo.yaml"))
        .unwrap()
        .replace("steps:\n", "load: { iterations: 4 }\nsteps:\n");
    std::fs::write(copy.join("echo.yaml"), own).unwrap();
    let out = run(&[
        "load",
        path(&copy),
        "--stdio",
        &target,
        "--json",
        path(&json),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let report = read_json(&json);
    assert_eq!(report["summary"]["iterations"], 4, "{report:#}");
    assert!(
        report["profile"]
            .as_str()
            .unwrap()
            .starts_with("2 client(s)"),
        "the pace stays the pack's: {report:#}"
    );
}

/// Packs with profiles together: an importing pack's wins over the imported one's; two
/// named side by side that differ are a usage error naming both. A bad `load:` block of a
/// pack is an error at its line and column (`validate`, `load`).
#[test]
fn pack_profiles_together_and_bad_pack_load_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let json = out_file(&dir, "load.json");
    let target = stdio_target(&[]);
    let steps = "steps:\n  - name: list\n    request: { method: tools/list }\n";
    let pack = |name: &str, manifest_rest: &str| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("pack.yaml"),
            format!("name: {name}\nversion: 1.0.0\n{manifest_rest}"),
        )
        .unwrap();
        std::fs::write(d.join("s.yaml"), format!("scenario: {name}-s\n{steps}")).unwrap();
        d
    };
    let inner = pack("inner", "load:\n  iterations: 9\n");
    let outer = pack(
        "outer",
        "imports:\n  - pack: ../inner\nload:\n  iterations: 5\n",
    );
    let out = run(&[
        "load",
        path(&outer),
        "--stdio",
        &target,
        "--json",
        path(&json),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let report = read_json(&json);
    assert_eq!(report["summary"]["iterations"], 5, "{report:#}");
    assert_eq!(report["summary"]["scenarios"].as_array().unwrap().len(), 2);
    let other = pack("other", "load:\n  iterations: 3\n");
    let out = run(&["load", path(&inner), path(&other), "--stdio", &target]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("the packs `inner` and `other` ask for different load profiles"),
        "{out:?}"
    );

    let bad = pack(
        "bad",
        "load:\n  rate: 0\n  each: [a]\n  budgets:\n    - { step: list, p99: 1s }\n",
    );
    for command in ["validate", "load"] {
        let mut args = vec![command, path(&bad)];
        if command == "load" {
            args.extend(["--stdio", target.as_str()]);
        }
        let out = run(&args);
        assert_eq!(out.code, 2, "{command}: {out:?}");
        for (at, says) in [
            ("pack.yaml:4:9", "`rate: 0` must be greater than 0"),
            (
                "pack.yaml:5:9",
                "`each` is a scenario's part of the workload",
            ),
            (
                "pack.yaml:7:15",
                "a budget on a step belongs in its scenario's",
            ),
        ] {
            assert!(out.stderr.contains(at), "{command} {at}: {}", out.stderr);
            assert!(
                out.stderr.contains(says),
                "{command} {says}: {}",
                out.stderr
            );
        }
    }
}
