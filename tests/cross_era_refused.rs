//! `cross-era` on a server that does not speak the modern era (issue 39, item 8): a
//! legacy-only server (its `server/discover` answers -32601) and one that exits on
//! `server/discover` (rmcp-based legacy servers do) are no dual-era servers — the pack's
//! steps are skipped with the server's refusal quoted, not a red setup error, and the run
//! ends as an all-skipped run does. A server that exits on `server/discover` is said to have
//! started and then exited on that request (a fresh process took `initialize`), not "did
//! not start"; one that really does not start still is.

mod common;

use common::{assert_contains, read_json, repo_root, run, scenario_file, stdio_target, suite};

/// `mcpspec run cross-era` against `server` (a `--stdio` command line): the run and its
/// `cross-era@2026-07-28` suite.
fn cross_era(server: &str) -> (common::Run, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = run(&[
        "run",
        "cross-era",
        "--stdio",
        server,
        "--json",
        json.to_str().unwrap(),
    ]);
    let report = read_json(&json);
    let suite = suite(&report, "cross-era@2026-07-28").clone();
    (out, suite)
}

/// Every step of the suite is skipped, each with a reason containing all of `words`.
fn assert_all_skipped(out: &common::Run, suite: &serde_json::Value, words: &[&str]) {
    assert!(suite["setupError"].is_null(), "no setup error: {out:?}");
    let steps = suite["steps"].as_array().expect("steps");
    assert!(!steps.is_empty(), "{out:?}");
    for step in steps {
        let outcome = &step["outcome"];
        assert_eq!(outcome["status"], "skipped", "{step}\n{out:?}");
        let reason = outcome["reason"].as_str().unwrap_or_default();
        for word in words {
            assert_contains(reason, word);
        }
    }
    assert_eq!(out.code, 0, "an all-skipped run: {out:?}");
    assert!(!out.stdout.contains("ERROR"), "{out:?}");
}

#[test]
fn a_legacy_only_server_skips_cross_era_with_its_refusal() {
    let (out, suite) = cross_era(&stdio_target(&["--defect", "legacy-only"]));
    assert_all_skipped(
        &out,
        &suite,
        &[
            "the server does not speak 2026-07-28",
            "server/discover answered error -32601",
            "Method not found: server/discover",
        ],
    );
}

#[test]
fn a_server_that_exits_on_discover_skips_cross_era_saying_it_started() {
    let (out, suite) = cross_era(&stdio_target(&["--defect", "exit-on-discover"]));
    assert_all_skipped(
        &out,
        &suite,
        &[
            "it started, then exited on `server/discover` without answering it",
            "a fresh process completed the legacy `initialize` handshake",
        ],
    );
    assert!(!out.stdout.contains("did not start"), "{out:?}");
}

const MODERN_LIST: &str = "scenario: modern-list\neras: [2026-07-28]\nsteps:\n  - name: list\n    request: { method: tools/list }\n";

/// Outside the cross-era pack a refused era stays a setup error, now with the right words:
/// the server started (and the stderr of the process that exited is shown).
#[test]
fn exiting_on_discover_is_no_failed_start() {
    let (_dir, file) = scenario_file("modern.yaml", MODERN_LIST);
    let target = stdio_target(&["--defect", "exit-on-discover"]);
    let out = run(&["run", file.to_str().unwrap(), "--stdio", &target]);
    assert_eq!(
        out.code, 1,
        "the server was reached: a failure, not exit 4: {out:?}"
    );
    assert_contains(
        &out.stdout,
        "the server did not accept protocol 2026-07-28: it started, then exited on `server/discover` without answering it",
    );
    assert_contains(&out.stdout, "expect initialize request");
    assert!(!out.stdout.contains("did not start"), "{out:?}");
}

/// A server that exits before serving anything did not start, and is still said so.
#[test]
fn a_server_that_exits_at_start_still_did_not_start() {
    let (_dir, file) = scenario_file("modern.yaml", MODERN_LIST);
    let target = stdio_target(&["--defect", "exit-at-start"]);
    let out = run(&["run", file.to_str().unwrap(), "--stdio", &target]);
    assert_eq!(out.code, 4, "{out:?}");
    assert_contains(&out.stdout, "the server did not start");
    assert!(!out.stdout.contains("it started"), "{out:?}");
    // The same through the cross-era pack: an error, not a skip.
    let (out, suite) = cross_era(&target);
    assert_eq!(out.code, 4, "{out:?}");
    assert_contains(
        suite["setupError"].as_str().unwrap_or_default(),
        "did not start",
    );
}

/// Real legacy-only servers of the interop corpus, where installed: the Python SDK 1.9.4
/// and server-everything 2025.4.8 (TypeScript SDK 1.x).
#[test]
fn real_legacy_only_servers_skip_cross_era() {
    let interop = repo_root().join("tests/interop");
    let servers = [
        (
            interop.join("python-1.9.4/.venv/bin/python"),
            format!(
                "{} {}",
                interop.join("python-1.9.4/.venv/bin/python").display(),
                interop.join("python-1.9.4/server.py").display()
            ),
        ),
        (
            interop.join(
                "everything-2025.4.8/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            ),
            format!(
                "node {}",
                interop
                    .join("everything-2025.4.8/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
                    .display()
            ),
        ),
    ];
    let mut tried = 0;
    for (needed, server) in servers {
        if !needed.exists() {
            eprintln!("{} is not installed: not tried", needed.display());
            continue;
        }
        tried += 1;
        let (out, suite) = cross_era(&server);
        assert_all_skipped(&out, &suite, &["the server does not speak 2026-07-28"]);
    }
    eprintln!("{tried} real legacy-only server(s) tried");
}
