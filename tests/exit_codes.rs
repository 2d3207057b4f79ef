//! Exit codes of `mcpspec run` and `mcpspec call`: 0 passed (warnings allowed), 1 a test
//! failed, 2 invalid input, 3 authentication required, 4 server not started / reached.

mod common;

use std::path::Path;

use common::{HttpServer, Run, read_json, run, scenario_file, stdio_target};
use serde_json::Value;

const WARNS: &str = r#"
scenario: warns
steps:
  - name: lists tools
    request: { method: tools/list }
    expect:
      - { path: "$.tools[*].name", contains: echo }
  - name: an optional nicety is missing
    level: should
    request: { method: tools/list }
    expect:
      - { path: "$.tools", length: 999 }
"#;

const FAILS: &str = r#"
scenario: fails
steps:
  - name: echo says something else
    request:
      method: tools/call
      params: { name: echo, arguments: { text: hello } }
    expect:
      - { path: "$.content[0].text", equals: goodbye }
"#;

const PASSES: &str = r#"
scenario: passes
steps:
  - name: lists tools
    request: { method: tools/list }
"#;

const INVALID: &str = r#"
scenario: invalid
steps:
  - name: misspelled key
    requestt: { method: tools/list }
"#;

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn assert_contains(haystack: &str, needle: &str) {
    assert!(
        haystack.contains(needle),
        "expected to find {needle:?} in:\n{haystack}"
    );
}

fn run_stdio(yaml: &str, server_flags: &[&str], extra: &[&str]) -> (Run, tempfile::TempDir) {
    let (dir, path) = scenario_file("scenario.yaml", yaml);
    let target = stdio_target(server_flags);
    let mut args = vec![
        "run",
        path_str(&path),
        "--stdio",
        &target,
        "--timeout",
        "5s",
    ];
    args.extend(extra);
    (run(&args), dir)
}

#[test]
fn exit_0_when_everything_passes_even_with_a_should_warning() {
    let (dir, path) = scenario_file("warns.yaml", WARNS);
    let json = dir.path().join("result.json");
    let target = stdio_target(&[]);
    let r = run(&[
        "run",
        path_str(&path),
        "--stdio",
        &target,
        "--timeout",
        "5s",
        "--json",
        path_str(&json),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_contains(&r.stdout, "WARN");
    assert_contains(&r.stdout, "an optional nicety is missing");
    let summary = &read_json(&json)["summary"];
    assert_eq!(summary["passed"], 1, "{summary}");
    assert_eq!(summary["warnings"], 1, "{summary}");
    assert_eq!(summary["failed"], 0, "{summary}");
}

#[test]
fn exit_1_when_an_expectation_fails() {
    let (r, _dir) = run_stdio(FAILS, &[], &[]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_contains(&r.stdout, "FAIL");
    assert_contains(&r.stdout, "goodbye");
}

#[test]
fn exit_2_for_an_invalid_scenario_before_any_server_is_started() {
    // The target does not exist: a 4 would mean the server was tried first.
    let (_dir, path) = scenario_file("invalid.yaml", INVALID);
    let r = run(&[
        "run",
        path_str(&path),
        "--stdio",
        "/nonexistent/mcpspec-no-such-server",
    ]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_contains(&r.stderr, "unknown key `requestt`");
    assert_contains(&r.stderr, "invalid.yaml:5:5");

    let v = run(&["validate", path_str(&path)]);
    assert_eq!(v.code, 2, "{v:?}");
}

#[test]
fn exit_2_for_bad_flags() {
    let (_dir, path) = scenario_file("passes.yaml", PASSES);
    let target = stdio_target(&[]);
    let p = path_str(&path);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", p, "--stdio", &target, "--no-such-flag"],
            "--no-such-flag",
        ),
        (
            vec!["run", p, "--stdio", &target, "--era", "bogus"],
            "is not an era",
        ),
        (
            vec!["run", p, "--stdio", &target, "--timeout", "forever"],
            "--timeout",
        ),
        (vec!["run", p], "no target"),
        (
            vec![
                "run",
                p,
                "--stdio",
                &target,
                "--url",
                "http://127.0.0.1:1/mcp",
            ],
            "cannot be used with",
        ),
        (
            vec!["call", "tools/list", "--stdio", &target, "--params", "{bad"],
            "--params is not valid JSON",
        ),
        (vec!["no-such-command"], "no-such-command"),
    ];
    for (args, message) in cases {
        let r = run(&args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert_contains(&r.stderr, message);
    }
}

#[test]
fn exit_3_when_the_server_requires_a_token() {
    let server = HttpServer::start(&["--defect", "require-token=s3cret"]);
    let (_dir, path) = scenario_file("passes.yaml", PASSES);
    for era in ["auto", "legacy", "2026-07-28"] {
        let r = run(&[
            "run",
            path_str(&path),
            "--url",
            &server.url,
            "--timeout",
            "5s",
            "--era",
            era,
        ]);
        assert_eq!(r.code, 3, "--era {era}: {r:?}");
        assert_contains(&r.stdout, "requires authentication (HTTP 401)");
    }
    // A wrong token is no better than none.
    let r = run(&[
        "run",
        path_str(&path),
        "--url",
        &server.url,
        "--timeout",
        "5s",
        "--header",
        "Authorization: Bearer wrong",
    ]);
    assert_eq!(r.code, 3, "{r:?}");
}

#[test]
fn exit_3_when_the_server_forbids_the_request() {
    // The example server answers 403 to a non-loopback Origin.
    let server = HttpServer::start(&[]);
    let (_dir, path) = scenario_file("passes.yaml", PASSES);
    let r = run(&[
        "run",
        path_str(&path),
        "--url",
        &server.url,
        "--timeout",
        "5s",
        "--header",
        "Origin: http://evil.example",
    ]);
    assert_eq!(r.code, 3, "{r:?}");
    assert_contains(&r.stdout, "HTTP 403");
}

#[test]
fn exit_4_when_the_server_exits_at_start() {
    let (r, _dir) = run_stdio(PASSES, &["--defect", "exit-at-start"], &[]);
    assert_eq!(r.code, 4, "{r:?}");
    assert_contains(&r.stdout, "fatal: config file missing");
}

#[test]
fn call_prints_the_json_response() {
    let target = stdio_target(&[]);
    for era in ["auto", "legacy", "2026-07-28"] {
        let r = run(&[
            "call",
            "tools/list",
            "--stdio",
            &target,
            "--timeout",
            "5s",
            "--era",
            era,
        ]);
        assert_eq!(r.code, 0, "--era {era}: {r:?}");
        let response: Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {r:?}"));
        let tools = response["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no result.tools: {response:#}"));
        assert!(tools.iter().any(|t| t["name"] == "echo"), "{response:#}");
    }
}

#[test]
fn call_of_an_unknown_method_prints_the_error_and_exits_1() {
    let target = stdio_target(&[]);
    let r = run(&[
        "call",
        "no/such/method",
        "--stdio",
        &target,
        "--timeout",
        "5s",
    ]);
    assert_eq!(r.code, 1, "{r:?}");
    let response: Value = serde_json::from_str(&r.stdout).expect("stdout is JSON");
    assert_eq!(response["error"]["code"], -32601, "{response:#}");
}

#[test]
fn call_exit_codes_for_auth_start_and_reach() {
    let server = HttpServer::start(&["--defect", "require-token=s3cret"]);
    let r = run(&[
        "call",
        "tools/list",
        "--url",
        &server.url,
        "--timeout",
        "5s",
    ]);
    assert_eq!(r.code, 3, "{r:?}");
    assert_contains(&r.stderr, "requires authentication");

    let target = stdio_target(&["--defect", "exit-at-start"]);
    let r = run(&["call", "tools/list", "--stdio", &target, "--timeout", "5s"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert_contains(&r.stderr, "fatal: config file missing");

    let r = run(&[
        "call",
        "tools/list",
        "--stdio",
        "/nonexistent/mcpspec-no-such-server",
    ]);
    assert_eq!(r.code, 4, "{r:?}");
    assert_contains(&r.stderr, "cannot start");
}

#[test]
fn help_and_version_exit_0() {
    assert_eq!(run(&["--help"]).code, 0);
    assert_eq!(run(&["--version"]).code, 0);
}
