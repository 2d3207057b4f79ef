//! The utilities checks of the conformance packs (`modern-utilities`,
//! `legacy-utilities`: progress, logging, completions, list_changed, -32021,
//! input_required / requestState, resource subscriptions) against the example server
//! with `--utilities`, which declares and serves them:
//!
//! 1. on the clean server every check passes in its era, over stdio and HTTP (except
//!    the few that HTTP cannot observe, which pass vacuously there);
//! 2. each seeded `--defect` fails its check at the check's level (the rows of
//!    `tests/defects/coverage.tsv`; the checks are listed in `tests/defects/coverage-checks.tsv`);
//! 3. without `--utilities` (nothing declared, no `elicitation_tool`) they are skipped
//!    with the reason — covered by `tests/conformance.rs`'s clean runs.

mod common;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use common::{HttpServer, read_json, run, stdio_target, table};
use serde_json::Value;

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "legacy";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
}

/// A utilities check (`tests/defects/coverage-checks.tsv`).
struct Check {
    /// `scenario:step`.
    id: &'static str,
    /// HTTP cannot observe it: skipped there with the reason.
    stdio_only: bool,
    /// A setup step the others build on, which no defect breaks alone.
    setup: bool,
}

/// Every utilities check.
static CHECKS: LazyLock<Vec<Check>> = LazyLock::new(|| {
    let columns = &["check", "http", "defect"];
    table::read_as("tests/defects/coverage-checks.tsv", columns, |row| Check {
        id: row.get("check"),
        stdio_only: row.pick("http", &[("passed", false), ("skipped", true)]),
        setup: row.pick("defect", &[("required", false), ("setup", true)]),
    })
});

/// `(defect, era, transports, check, status)`: the defect makes the check end so.
type Case = (
    &'static str,
    &'static str,
    &'static [Transport],
    &'static str,
    &'static str,
);

const BOTH: &[Transport] = &[Transport::Stdio, Transport::Http];
const STDIO: &[Transport] = &[Transport::Stdio];

/// The rows of `tests/defects/coverage.tsv`.
static CASES: LazyLock<Vec<Case>> = LazyLock::new(|| {
    let columns = &["defect", "era", "on", "check", "status"];
    table::read_as("tests/defects/coverage.tsv", columns, |row| {
        (
            row.get("defect"),
            row.pick("era", &[("modern", MODERN), ("legacy", LEGACY)]),
            row.pick("on", &[("stdio", STDIO), ("both", BOTH)]),
            row.get("check"),
            row.one_of("status", &["failed", "warning"]),
        )
    })
});

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
    let mut want: Vec<&str> = CHECKS.iter().map(|c| c.id).collect();
    want.sort();
    assert_eq!(got, want, "{transport:?}: exactly the utilities checks ran");
    for (check, (status, outcome)) in &outcomes {
        let stdio_only = CHECKS.iter().any(|c| c.id == check && c.stdio_only);
        if transport == Transport::Http && stdio_only {
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
    for &(defect, _era, transports, check, status) in CASES.iter() {
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

/// Every check but the setup steps is broken by some defect.
#[test]
fn every_check_has_a_defect() {
    for check in CHECKS.iter().filter(|c| !c.setup) {
        assert!(
            CASES.iter().any(|c| c.3 == check.id),
            "{} has no defect that breaks it",
            check.id
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
