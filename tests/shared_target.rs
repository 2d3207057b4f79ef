//! Scenarios run concurrently (`--jobs`) share an HTTP server: one that calls the change
//! tool (`list_change_tool`) changes what every client sees, so it runs alone — another
//! scenario's list never shows its change. The control folder makes the same change
//! without the marking, and the other scenario does see it: the race is real. A scenario
//! its author marks `exclusive: true` runs alone on any transport.

mod common;

use std::time::{Duration, Instant};

use common::{HttpServer, run, stdio_target};

/// Run the folder's scenarios two at a time against one HTTP server; all must pass and
/// stdout must say `expected`.
fn passes_over_http(folder: &str, extra: &[&str], expected: &str) {
    let server = HttpServer::start(&["--utilities"]);
    let path = format!("tests/shared_target/{folder}");
    let mut args = vec![
        "run",
        path.as_str(),
        "--url",
        server.url.as_str(),
        "--jobs",
        "2",
    ];
    args.extend(extra);
    let out = run(&args);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(out.stdout.contains(expected), "{}", out.stdout);
}

#[test]
fn a_scenario_that_changes_the_server_runs_alone() {
    passes_over_http(
        "exclusive",
        &["--set", "list_change_tool=toggle_tool"],
        "2 suites, 5 steps: 5 passed",
    );
}

#[test]
fn the_same_change_unmarked_is_seen_by_a_concurrent_scenario() {
    passes_over_http("concurrent", &[], "PASS  b-sees@2026-07-28");
}

#[test]
fn a_scenario_marked_exclusive_runs_alone_over_http() {
    passes_over_http("marked", &[], "2 suites, 5 steps: 5 passed");
}

/// Over stdio each scenario has its own server, so only time shows it: the marked
/// scenario (1.5 s) and the other (0.5 s) do not overlap.
#[test]
fn a_scenario_marked_exclusive_runs_alone_over_stdio() {
    let target = stdio_target(&["--utilities"]);
    let started = Instant::now();
    let out = run(&[
        "run",
        "tests/shared_target/marked",
        "--stdio",
        &target,
        "--jobs",
        "2",
    ]);
    let took = started.elapsed();
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(
        took >= Duration::from_millis(2000),
        "{took:?}: they overlapped"
    );
}
