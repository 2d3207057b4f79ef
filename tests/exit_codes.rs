//! Exit codes of `mcpspec run` and `mcpspec call`: 0 passed (warnings allowed), 1 a test
//! failed, 2 invalid input, 3 authentication required, 4 server not started / reached.

mod common;

use std::path::Path;

use common::{HttpServer, Run, assert_contains, run, stdio_target};
use serde_json::Value;

// The exit codes of single runs are cases (tests/cases/exit-*/); the tests below run
// their scenarios with more Rust around them.
const PASSES: &str = "tests/cases/exit-2-bad-flags/passes.yaml";
const FAILS: &str = "tests/cases/exit-1-failed-expectation/fails.yaml";
const INVALID: &str = "tests/cases/exit-2-invalid-scenario/invalid.yaml";

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn run_stdio(scenario: &str, server_flags: &[&str], extra: &[&str]) -> Run {
    let target = stdio_target(server_flags);
    let mut args = vec!["run", scenario, "--stdio", &target, "--timeout", "5s"];
    args.extend(extra);
    run(&args)
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

/// Run mcpspec with stdout (and, with `close_stderr`, stderr) a pipe whose reader is
/// already gone, as `mcpspec … | head -0` leaves it; stderr is captured otherwise.
fn run_into_closed_pipe(args: &[&str], close_stderr: bool) -> (Option<i32>, String) {
    use std::process::{Command, Stdio};
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut cmd = Command::new(common::mcpspec());
    cmd.args(args)
        .current_dir(common::repo_root())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(writer);
    if close_stderr {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        cmd.stderr(writer);
    } else {
        cmd.stderr(Stdio::piped());
    }
    let out = cmd.output().expect("mcpspec runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A reader that stops early (`| head`) ends every command quietly with the command's
/// own exit code: no panic (exit 101), no message about the pipe.
#[test]
fn a_closed_stdout_or_stderr_ends_quietly_with_the_commands_own_code() {
    let target = stdio_target(&[]);
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["validate", "nonexistent"], 2),
        (vec!["validate", PASSES], 0),
        (vec!["validate", "--format", "json", "nonexistent"], 2),
        (vec!["list"], 0),
        (vec!["list", "conformance"], 0),
        (vec!["list", "--format", "json", "conformance"], 0),
        (vec!["schema"], 0),
        (vec!["--help"], 0),
        (vec!["run", "nonexistent"], 2),
        (vec!["run", PASSES, "--stdio", &target], 0),
        (vec!["run", FAILS, "--stdio", &target, "-v"], 1),
        (vec!["run", PASSES, "--stdio", &target, "--json", "-"], 0),
        (vec!["call", "tools/list", "--stdio", &target], 0),
    ];
    for (args, want) in &cases {
        let (code, stderr) = run_into_closed_pipe(args, false);
        assert_eq!(code, Some(*want), "stdout closed: {args:?}\n{stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "stdout closed: {args:?}\n{stderr}"
        );
        let (code, _) = run_into_closed_pipe(args, true);
        assert_eq!(code, Some(*want), "stdout and stderr closed: {args:?}");
    }
}

/// Console writes go through `src/ground/output.rs` (`outln!`, `errln!`, …): `print!` and
/// friends panic on a closed pipe.
#[test]
fn no_panicking_print_macros_in_the_sources() {
    let mut offenders = Vec::new();
    let mut dirs = vec![common::repo_root().join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.ends_with("output.rs") || path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source");
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if ["println!", "print!(", "eprintln!", "eprint!("]
                    .iter()
                    .any(|m| code.contains(m))
                {
                    offenders.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "use outln!/errln!:\n{}",
        offenders.join("\n")
    );
}

/// `--json -`: the JSON result alone on stdout (parseable, per-step durations included),
/// the console report on stderr; the exit code is the run's.
#[test]
fn json_to_stdout_moves_the_console_report_to_stderr() {
    for (yaml, want) in [(PASSES, 0), (FAILS, 1)] {
        let r = run_stdio(yaml, &[], &["--json", "-", "-v"]);
        assert_eq!(r.code, want, "{r:?}");
        let result: Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {r:?}"));
        let step = &result["suites"][0]["steps"][0];
        assert!(step["duration"].is_number(), "{step}");
        assert_contains(&r.stderr, if want == 0 { "PASS" } else { "FAIL" });
        assert_contains(&r.stderr, "Summary: 1 suites");
    }
    // `report merge --json -` too.
    let out = tempfile::tempdir().expect("tempdir");
    let file = out.path().join("result.json");
    let r = run_stdio(PASSES, &[], &["--json", path_str(&file)]);
    assert_eq!(r.code, 0, "{r:?}");
    let merged = run(&["report", "merge", path_str(&file), "--json", "-"]);
    assert_eq!(merged.code, 0, "{merged:?}");
    let result: Value = serde_json::from_str(&merged.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {merged:?}"));
    assert_eq!(result["summary"]["passed"], 1, "{result}");
    assert_contains(&merged.stderr, "Summary: 1 suites");
}

/// `validate --format json` and `list --format json` print one JSON document on stdout,
/// errors included; exit codes are those of the text output.
#[test]
fn validate_and_list_print_json() {
    let json = |r: &Run| -> Value {
        serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {r:?}"))
    };

    let ok = run(&["validate", "--format", "json", PASSES]);
    assert_eq!(ok.code, 0, "{ok:?}");
    let doc = json(&ok);
    assert_eq!(doc["ok"], true, "{doc}");
    assert_eq!(doc["scenarios"], 1, "{doc}");
    assert_eq!(doc["steps"], 1, "{doc}");

    let bad = run(&["validate", "--format", "json", INVALID]);
    assert_eq!(bad.code, 2, "{bad:?}");
    let doc = json(&bad);
    assert_eq!(doc["ok"], false, "{doc}");
    let error = &doc["errors"][0];
    assert_eq!(error["line"], 5, "{doc}");
    assert_eq!(error["column"], 5, "{doc}");
    assert!(
        error["file"].as_str().unwrap().ends_with("invalid.yaml"),
        "{doc}"
    );
    assert_contains(error["message"].as_str().unwrap(), "unknown key `requestt`");
    assert_eq!(bad.stderr, "", "errors go in the document");

    let listed = run(&["list", "--format", "json", PASSES]);
    assert_eq!(listed.code, 0, "{listed:?}");
    let doc = json(&listed);
    assert_eq!(doc["scenarios"][0]["id"], "passes", "{doc}");
    assert_eq!(
        doc["scenarios"][0]["steps"][0]["id"], "passes:lists tools",
        "{doc}"
    );
    assert_eq!(doc["scenarios"][0]["steps"][0]["level"], "must", "{doc}");

    let packs = run(&["list", "--format", "json", "conformance"]);
    assert_eq!(packs.code, 0, "{packs:?}");
    let doc = json(&packs);
    assert!(
        doc["packs"].as_array().is_some_and(|p| !p.is_empty()),
        "{doc}"
    );

    let builtins = run(&["list", "--format", "json"]);
    assert_eq!(builtins.code, 0, "{builtins:?}");
    let doc = json(&builtins);
    assert!(
        doc["builtinPacks"]
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p["name"] == "conformance-2025-11-25")),
        "{doc}"
    );
    assert!(doc["aliases"]["conformance"].is_array(), "{doc}");

    let bad_list = run(&["list", "--format", "json", INVALID]);
    assert_eq!(bad_list.code, 2, "{bad_list:?}");
    assert_eq!(json(&bad_list)["ok"], false);
}
