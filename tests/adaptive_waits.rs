//! Waiting less on silent servers (issue 39, items 6 and 7), against the real example
//! server:
//!
//! 1. a server that never answers an unknown method (`--defect unknown-method-silent`, like
//!    mcp-server-sqlite) costs a wait in its own speed per such request, not the whole
//!    `--timeout`: the steps end as before (an error, the wire check judged), and each
//!    failure says how long it waited and why;
//! 2. `--era auto` against a server that ignores requests before `initialize`
//!    (`--defect ignore-before-initialize`) probes once per run: every later process of
//!    the same server takes the legacy handshake at once; and that first probe is bounded
//!    (a few seconds, checked against a fresh process's start), not the whole `--timeout`.

mod common;

use std::time::{Duration, Instant};

use common::{read_json, run, stdio_target};
use serde_json::Value;

/// `(suite id, step name) → (status, message)` of every step of the report.
fn steps(report: &Value) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    for suite in report["suites"].as_array().expect("suites") {
        let id = suite["id"].as_str().expect("suite id").to_string();
        for step in suite["steps"].as_array().expect("steps") {
            out.push((
                id.clone(),
                step["name"].as_str().expect("name").to_string(),
                step["outcome"]["status"]
                    .as_str()
                    .expect("status")
                    .to_string(),
                step["outcome"]["message"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            ));
        }
    }
    out
}

#[test]
fn a_server_silent_on_unknown_methods_costs_seconds_not_the_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let target = stdio_target(&["--defect", "unknown-method-silent"]);
    let started = Instant::now();
    let out = run(&[
        "run",
        "conformance",
        "--stdio",
        &target,
        "--era",
        "2026-07-28",
        "--era",
        "legacy",
        "--filter",
        "*-errors",
        "--filter",
        "*-wire",
        "--timeout",
        "30s",
        "--json",
        json.to_str().expect("utf-8"),
    ]);
    let took = started.elapsed();
    let report = read_json(&json);
    let steps = steps(&report);
    let mut problems = Vec::new();
    // `error_wire_valid` has no answer to judge: an error, never a pass on the pings' replies.
    let silent = [
        ("modern-errors@2026-07-28", "unknown_method_not_found"),
        ("modern-errors@2026-07-28", "error_id_echoed"),
        ("legacy-errors@legacy", "unknown_method_not_found"),
        ("legacy-errors@legacy", "error_id_echoed"),
        ("modern-wire@2026-07-28", "error_wire_valid"),
        ("legacy-wire@legacy", "error_wire_valid"),
    ];
    for (suite, step) in silent {
        {
            match steps.iter().find(|s| s.0 == suite && s.1 == step) {
                Some((_, _, status, message))
                    if status == "error"
                        && message.contains("is answered at once")
                        && message.contains("10 × that round trip")
                        && message.contains("instead of the whole timeout")
                        && message.contains("mcpspec/conformance-unknown-method") => {}
                other => problems.push(format!("{suite}:{step}: {other:?}")),
            }
        }
    }
    // The steps the defect does not touch pass as on the clean server.
    for (suite, step, status, message) in &steps {
        let touched = silent.contains(&(suite.as_str(), step.as_str()));
        if !touched && status != "passed" && status != "skipped" {
            problems.push(format!("{suite}:{step}: {status} {message}"));
        }
    }
    // Six requests to an unknown method (two per errors suite, one per wire suite), each
    // waited out in full before (6 × 30 s); the bound is generous for a loaded machine.
    if took >= Duration::from_secs(60) {
        problems.push(format!("the run took {took:?}"));
    }
    assert!(
        problems.is_empty(),
        "{}\n{}",
        problems.join("\n"),
        out.all_output()
    );
}

/// A scenario on a process of its own, in the era `auto` picks (three of them).
fn fresh_scenario(name: &str) -> String {
    format!(
        "scenario: {name}\nfresh: true\nsteps:\n  - name: tools\n    request: {{ method: tools/list }}\n"
    )
}

#[test]
fn era_auto_probes_once_per_run_and_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("scenarios");
    std::fs::create_dir(&spec).expect("mkdir");
    for name in ["first", "second", "third"] {
        std::fs::write(spec.join(format!("{name}.yaml")), fresh_scenario(name)).expect("write");
    }
    let json = dir.path().join("result.json");
    let target = stdio_target(&["--defect", "ignore-before-initialize"]);
    let out = run(&[
        "run",
        spec.to_str().expect("utf-8"),
        "--stdio",
        &target,
        "--era",
        "auto",
        "--timeout",
        "5s",
        "--jobs",
        "3",
        "--json",
        json.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let report = read_json(&json);
    let notes: Vec<String> = report["suites"]
        .as_array()
        .expect("suites")
        .iter()
        .map(|s| s["era"]["note"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(notes.len(), 3, "{notes:?}");
    let probed = notes
        .iter()
        .filter(|n| !n.contains("decided once for this run"))
        .count();
    assert_eq!(probed, 1, "one probe, then the decision reused: {notes:?}");
    for note in &notes {
        assert!(
            note.contains("server/discover") && note.contains("fell back to legacy"),
            "{note}"
        );
    }
}

/// The first `server/discover` of `--era auto` over stdio is bounded too: a server that
/// ignores requests before `initialize` costs a few seconds once, not the whole `--timeout`,
/// and the note says what measured the bound (a fresh process's start and handshake).
#[test]
fn era_auto_first_probe_is_bounded_not_the_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("scenarios");
    std::fs::create_dir(&spec).expect("mkdir");
    std::fs::write(spec.join("first.yaml"), fresh_scenario("first")).expect("write");
    let json = dir.path().join("result.json");
    let target = stdio_target(&["--defect", "ignore-before-initialize"]);
    let started = Instant::now();
    let out = run(&[
        "run",
        spec.to_str().expect("utf-8"),
        "--stdio",
        &target,
        "--era",
        "auto",
        "--timeout",
        "30s",
        "--json",
        json.to_str().expect("utf-8"),
    ]);
    let took = started.elapsed();
    assert_eq!(out.code, 0, "{}", out.all_output());
    let report = read_json(&json);
    let note = report["suites"][0]["era"]["note"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        note.contains("server/discover")
            && note.contains("fell back to legacy")
            && !note.contains("after 30s"),
        "{note}"
    );
    // Before: the whole 30 s timeout. The bound is generous for a loaded machine.
    assert!(
        took < Duration::from_secs(20),
        "the run took {took:?}: {note}"
    );
}

/// The bound does not mistake a modern server slow to start for a legacy one: the slow
/// start measured on a fresh process lengthens the wait of a second probe.
#[cfg(unix)]
#[test]
fn era_auto_still_finds_a_modern_server_slow_to_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("scenarios");
    std::fs::create_dir(&spec).expect("mkdir");
    std::fs::write(spec.join("first.yaml"), fresh_scenario("first")).expect("write");
    let slow = dir.path().join("slow.sh");
    std::fs::write(
        &slow,
        format!("#!/bin/sh\nsleep 4\nexec {} \"$@\"\n", stdio_target(&[])),
    )
    .expect("write");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let json = dir.path().join("result.json");
    let out = run(&[
        "run",
        spec.to_str().expect("utf-8"),
        "--stdio",
        slow.to_str().expect("utf-8"),
        "--era",
        "auto",
        "--timeout",
        "30s",
        "--json",
        json.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let report = read_json(&json);
    let note = report["suites"][0]["era"]["note"].as_str().unwrap_or("");
    assert!(note.contains("chose modern"), "{note}");
}
