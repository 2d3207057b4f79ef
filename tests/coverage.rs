//! The utilities checks of the conformance packs (`modern-utilities`,
//! `legacy-utilities`: progress, logging, completions, list_changed, -32021,
//! input_required / requestState, resource subscriptions) against the example server
//! with `--utilities`, which declares and serves them:
//!
//! 1. on the clean server every check passes in its era, over stdio and HTTP (except
//!    the few that HTTP cannot observe, which pass vacuously there);
//! 2. each seeded `--defect` fails its check at the check's level ([`CASES`]);
//! 3. without `--utilities` (nothing declared, no `elicitation_tool`) they are skipped
//!    with the reason — covered by `tests/conformance.rs`'s clean runs.

mod common;

use std::collections::BTreeMap;

use common::{HttpServer, read_json, run, stdio_target};
use serde_json::Value;

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "legacy";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
}

/// Every utilities check, as `scenario:step`.
const CHECKS: &[&str] = &[
    "modern-utilities:progress_token_echoed",
    "modern-utilities:log_requires_log_level",
    "modern-utilities:log_level_respected",
    "modern-utilities:completion_prompt_listed",
    "modern-utilities:completion_values_valid",
    "modern-utilities:tools_list_changed_only_when_subscribed",
    "modern-utilities:prompts_list_changed_only_when_subscribed",
    "modern-utilities:resources_list_changed_only_when_subscribed",
    "modern-utilities:missing_capability_rejected",
    "modern-utilities:input_required_result_valid",
    "modern-utilities:input_required_state",
    "modern-utilities:input_required_reasks",
    "modern-utilities:progress_increases",
    "modern-utilities:listen_acknowledged",
    "modern-utilities:listen_delivers_list_changed",
    "modern-utilities:listen_only_requested",
    "modern-utilities:listen_ends_on_cancel",
    "legacy-utilities:progress_token_echoed",
    "legacy-utilities:set_level_served",
    "legacy-utilities:log_level_respected",
    "legacy-utilities:completion_prompt_listed",
    "legacy-utilities:completion_values_valid",
    "legacy-utilities:subscribe_resource_listed",
    "legacy-utilities:resources_subscribe_served",
    "legacy-utilities:resources_unsubscribe_served",
    "legacy-utilities:progress_increases",
    "legacy-utilities:tools_list_changed_sent",
];

/// Checks that HTTP cannot observe: skipped there with the reason (a cancelled listen
/// stream is closed; a legacy session's list_changed goes to the GET stream).
const STDIO_ONLY: &[&str] = &[
    "modern-utilities:listen_ends_on_cancel",
    "legacy-utilities:tools_list_changed_sent",
];

/// `(defect, era, transports, check, status)`: the defect makes the check end so.
type Case = (
    &'static str,
    &'static str,
    &'static [Transport],
    &'static str,
    &'static str,
);

const BOTH: &[Transport] = &[Transport::Stdio, Transport::Http];
/// Legacy HTTP sends a session's log messages, and progress whose token names no request in
/// flight, on the GET stream, which mcpspec does not hold: those are observable over stdio
/// only in the legacy era.
const STDIO: &[Transport] = &[Transport::Stdio];

#[rustfmt::skip]
const CASES: &[Case] = &[
    ("progress-wrong-token", MODERN, BOTH, "modern-utilities:progress_token_echoed", "failed"),
    ("progress-wrong-token", LEGACY, STDIO, "legacy-utilities:progress_token_echoed", "failed"),
    ("log-without-level", MODERN, BOTH, "modern-utilities:log_requires_log_level", "failed"),
    ("log-level-ignored", MODERN, BOTH, "modern-utilities:log_level_respected", "warning"),
    ("log-level-ignored", LEGACY, STDIO, "legacy-utilities:log_level_respected", "warning"),
    ("completion-over-limit", MODERN, BOTH, "modern-utilities:completion_values_valid", "failed"),
    ("completion-over-limit", LEGACY, BOTH, "legacy-utilities:completion_values_valid", "failed"),
    ("unrequested-list-changed", MODERN, BOTH, "modern-utilities:tools_list_changed_only_when_subscribed", "failed"),
    ("unrequested-list-changed", MODERN, BOTH, "modern-utilities:prompts_list_changed_only_when_subscribed", "failed"),
    ("unrequested-list-changed", MODERN, BOTH, "modern-utilities:resources_list_changed_only_when_subscribed", "failed"),
    ("missing-capability-old-code", MODERN, BOTH, "modern-utilities:missing_capability_rejected", "failed"),
    ("input-required-empty", MODERN, BOTH, "modern-utilities:input_required_result_valid", "failed"),
    ("input-required-unanswered", MODERN, BOTH, "modern-utilities:input_required_reasks", "warning"),
    ("set-level-refused", LEGACY, BOTH, "legacy-utilities:set_level_served", "failed"),
    ("subscribe-refused", LEGACY, BOTH, "legacy-utilities:resources_subscribe_served", "failed"),
    ("subscribe-refused", LEGACY, BOTH, "legacy-utilities:resources_unsubscribe_served", "failed"),
    ("progress-decreasing", MODERN, BOTH, "modern-utilities:progress_increases", "failed"),
    ("progress-decreasing", LEGACY, BOTH, "legacy-utilities:progress_increases", "failed"),
    ("progress-wrong-token", MODERN, BOTH, "modern-utilities:progress_increases", "failed"),
    ("progress-wrong-token", LEGACY, STDIO, "legacy-utilities:progress_increases", "failed"),
    ("listen-no-ack", MODERN, STDIO, "modern-utilities:listen_acknowledged", "failed"),
    ("list-changed-never-sent", MODERN, BOTH, "modern-utilities:listen_delivers_list_changed", "failed"),
    ("list-changed-never-sent", LEGACY, STDIO, "legacy-utilities:tools_list_changed_sent", "warning"),
    ("listen-unrequested", MODERN, BOTH, "modern-utilities:listen_only_requested", "failed"),
    ("listen-ignores-cancel", MODERN, STDIO, "modern-utilities:listen_ends_on_cancel", "failed"),
    ("listen-no-subscription-id", MODERN, BOTH, "modern-utilities:listen_delivers_list_changed", "failed"),
];

/// Run the utilities scenarios of the conformance packs against the example server with
/// `--utilities` and `extra` flags: `scenario:step → (status, outcome)`.
fn run_utilities(extra: &[&str], transport: Transport) -> BTreeMap<String, (String, Value)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let json_arg = json.display().to_string();
    let mut flags = vec!["--utilities"];
    flags.extend(extra);
    let common = [
        "--era",
        MODERN,
        "--era",
        LEGACY,
        "--filter",
        "*-utilities",
        "--set",
        "elicitation_tool=confirm",
        "--set",
        "list_change_tool=toggle_tool",
        "--set",
        "progress_tool=slow",
        "--timeout",
        "10s",
        "--json",
        &json_arg,
    ];
    let out = match transport {
        Transport::Stdio => {
            let target = stdio_target(&flags);
            let mut args = vec!["run", "conformance", "--stdio", &target];
            args.extend(common);
            run(&args)
        }
        Transport::Http => {
            let server = HttpServer::start(&flags);
            let mut args = vec!["run", "conformance", "--url", &server.url];
            args.extend(common);
            run(&args)
        }
    };
    assert!(json.exists(), "no JSON report: {out:?}");
    assert!(!out.all_output().contains("panicked"), "{out:?}");
    let report = read_json(&json);
    let mut outcomes = BTreeMap::new();
    for suite in report["suites"].as_array().expect("suites") {
        assert!(suite["setupError"].is_null(), "{suite:#}");
        let id = suite["id"].as_str().expect("id");
        let scenario = id.split('@').next().expect("scenario@era");
        for step in suite["steps"].as_array().expect("steps") {
            let name = step["name"].as_str().expect("name");
            let status = step["outcome"]["status"].as_str().expect("status");
            outcomes.insert(
                format!("{scenario}:{name}"),
                (status.to_string(), step["outcome"].clone()),
            );
        }
    }
    outcomes
}

fn clean(transport: Transport) {
    let outcomes = run_utilities(&[], transport);
    let got: Vec<&String> = outcomes.keys().collect();
    let mut want: Vec<&str> = CHECKS.to_vec();
    want.sort();
    assert_eq!(got, want, "{transport:?}: exactly the utilities checks ran");
    for (check, (status, outcome)) in &outcomes {
        if transport == Transport::Http && STDIO_ONLY.contains(&check.as_str()) {
            assert_eq!(status, "skipped", "{transport:?} {check}: {outcome:#}");
            continue;
        }
        assert_eq!(status, "passed", "{transport:?} {check}: {outcome:#}");
    }
}

#[test]
fn clean_server_passes_over_stdio() {
    clean(Transport::Stdio);
}

#[test]
fn clean_server_passes_over_http() {
    clean(Transport::Http);
}

#[test]
fn each_defect_fails_its_check() {
    let mut problems = Vec::new();
    for &(defect, _era, transports, check, status) in CASES {
        for &transport in transports {
            let outcomes = run_utilities(&["--defect", defect], transport);
            match outcomes.get(check) {
                Some((got, _)) if got == status => {}
                Some((got, outcome)) => problems.push(format!(
                    "--defect {defect} over {transport:?}: {check} is {got}, expected {status}: {outcome}"
                )),
                None => problems.push(format!(
                    "--defect {defect} over {transport:?}: {check} did not run"
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every check is broken by some defect.
#[test]
fn every_check_has_a_defect() {
    let setup = [
        "modern-utilities:completion_prompt_listed",
        "modern-utilities:input_required_state",
        "legacy-utilities:completion_prompt_listed",
        "legacy-utilities:subscribe_resource_listed",
    ];
    for check in CHECKS {
        if setup.contains(check) {
            continue;
        }
        assert!(
            CASES.iter().any(|c| c.3 == *check),
            "{check} has no defect that breaks it"
        );
    }
}

/// A scenario author's whole MRTR round trip (`tests/coverage/input-required-round-trip.yaml`)
/// passes on the clean server and fails when the server keeps no requestState.
#[test]
fn input_required_round_trip_as_data() {
    let file = "tests/coverage/input-required-round-trip.yaml";
    let run_with = |flags: &[&str]| {
        let mut all = vec!["--utilities"];
        all.extend(flags);
        let target = stdio_target(&all);
        run(&[
            "run",
            file,
            "--stdio",
            &target,
            "--era",
            MODERN,
            "--timeout",
            "10s",
        ])
    };
    let clean = run_with(&[]);
    assert_eq!(clean.code, 0, "{clean:?}");
    let broken = run_with(&["--defect", "input-required-empty"]);
    assert_eq!(broken.code, 1, "{broken:?}");
    assert!(
        broken
            .stdout
            .contains("`$.inputRequests.confirm.method` matched nothing")
            && broken.stdout.contains("needs `state`"),
        "{broken:?}"
    );
}
