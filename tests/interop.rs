//! Interop: the built-in conformance packs against pinned third-party MCP servers, each with a
//! committed expected-failures baseline (tests/interop/baselines/, every entry explained).
//!
//! - the official Python SDK (`mcp==2.3.0`, dual-era `MCPServer`, tests/interop/python/server.py)
//!   over stdio and Streamable HTTP, eras legacy and 2026-07-28;
//! - the npm reference server `@modelcontextprotocol/server-memory` 2026.8.31 (legacy-only) over
//!   stdio.
//!
//! `mcpspec init` against both servers writes a project that validates and passes with a bare
//! `mcpspec run` (init_npm_server_memory, init_python_sdk_both_eras).
//!
//! The servers are installed by `.ci/run` (a venv from requirements.txt; `npm ci` from the
//! lockfile). A missing installation fails these tests with the step to run: never a silent pass.

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{read_json, repo_root, run};
use serde_json::Value;

const PYTHON_BASELINE: &str = "tests/interop/baselines/python.yaml";
const MEMORY_BASELINE: &str = "tests/interop/baselines/memory.yaml";
const MEMORY_DIR: &str = "tests/interop/memory-2026.8.31";

/// Expected failures of the Python server on either transport (`suite@era:check`).
const PYTHON_XFAIL: &[&str] = &[
    "legacy-prompts@legacy:unknown_prompt_invalid_params",
    "legacy-tools@legacy:invalid_cursor_rejected",
    "legacy-tools@legacy:unknown_tool_protocol_error",
    "modern-prompts@2026-07-28:unknown_prompt_invalid_params",
    "modern-tools@2026-07-28:invalid_cursor_rejected",
    "modern-tools@2026-07-28:unknown_tool_protocol_error",
];
/// ... plus this one over HTTP only (the step needs the HTTP transport).
const PYTHON_HTTP_ONLY_XFAIL: &str = "modern-http@2026-07-28:version_header_mismatch_rejected";
const MEMORY_XFAIL: &[&str] = &[
    "legacy-tools@legacy:invalid_cursor_rejected",
    "legacy-tools@legacy:unknown_tool_protocol_error",
];

fn interop_dir() -> PathBuf {
    repo_root().join("tests/interop")
}

/// A path as one word of a `--stdio` command line.
fn word(path: &Path) -> String {
    format!("'{}'", path.display())
}

/// (venv python, server.py) of the pinned Python SDK server; fails when `.ci/run` has not
/// installed it, or installed another requirements.txt than the committed one.
fn python_server() -> (PathBuf, PathBuf) {
    let dir = interop_dir().join("python");
    let python = dir.join(".venv/bin/python");
    let installed = std::fs::read_to_string(dir.join(".venv/installed-requirements.txt")).ok();
    let wanted = std::fs::read_to_string(dir.join("requirements.txt")).expect("requirements.txt");
    assert!(
        python.exists() && installed.as_deref() == Some(wanted.as_str()),
        "the pinned Python SDK server is not installed (tests/interop/python/.venv is missing or \
         was not installed from the committed requirements.txt): run `.ci/run`, whose step \
         \"Pinned Python SDK server\" runs `python3 -m venv tests/interop/python/.venv` and \
         `pip install --no-deps --only-binary=:all: -r tests/interop/python/requirements.txt`"
    );
    (python, dir.join("server.py"))
}

/// `node` and the entry point of the pinned server-memory; fails when `.ci/run` has not
/// installed it.
fn memory_server() -> PathBuf {
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|o| o.status.success()),
        "`node` is not on PATH: the npm interop servers need Node.js (.ci/run installs them with `npm ci`)"
    );
    let entry = repo_root()
        .join(MEMORY_DIR)
        .join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    assert!(
        entry.exists(),
        "the pinned @modelcontextprotocol/server-memory is not installed: run `.ci/run`, whose \
         npm step runs `npm ci --prefix {MEMORY_DIR} --ignore-scripts` from its package-lock.json"
    );
    entry
}

/// The Python server over Streamable HTTP on 127.0.0.1 (a free port), killed on drop.
struct PythonHttp {
    child: Child,
    url: String,
    _logs: tempfile::TempDir,
}

impl PythonHttp {
    fn start() -> PythonHttp {
        let (python, server) = python_server();
        let logs = tempfile::tempdir().unwrap();
        let stderr_path = logs.path().join("stderr.log");
        let mut child = Command::new(python)
            .arg(server)
            .args(["--http", "0"])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .expect("the Python server starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
        let Some(url) = line.trim().strip_prefix("listening on ") else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the Python HTTP server did not print `listening on <URL>` (got {line:?}); its stderr:\n{}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        };
        PythonHttp {
            url: url.to_string(),
            child,
            _logs: logs,
        }
    }
}

impl Drop for PythonHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The parts of one `mcpspec run conformance` that the tests check.
struct Conformance {
    code: i32,
    output: String,
    report: Value,
}

impl Conformance {
    /// `suite@era:check` of every expected failure.
    fn xfails(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for suite in self.report["suites"].as_array().unwrap() {
            for step in suite["steps"].as_array().unwrap() {
                if step["outcome"]["status"] == "expectedFailure" {
                    out.insert(format!(
                        "{}:{}",
                        suite["id"].as_str().unwrap(),
                        step["name"].as_str().unwrap()
                    ));
                }
            }
        }
        out
    }

    /// Negotiated revisions of the suites (every suite must have connected).
    fn negotiated(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for suite in self.report["suites"].as_array().unwrap() {
            assert!(
                suite["setupError"].is_null(),
                "{} did not connect: {}\n{}",
                suite["id"],
                suite["setupError"],
                self.output
            );
            // Scenarios for the other transport are skipped without connecting.
            let for_other_transport = suite["steps"].as_array().unwrap().iter().all(|s| {
                s["outcome"]["reason"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("needs the") && r.ends_with("transport"))
            });
            if for_other_transport {
                continue;
            }
            out.insert(
                suite["era"]["negotiated"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            );
        }
        out
    }

    /// Every step of this suite (`scenario@era`) ran and passed: none skipped.
    fn assert_ran(&self, suite_id: &str) {
        let suite = self.report["suites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == suite_id)
            .unwrap_or_else(|| panic!("no suite {suite_id}\n{}", self.output));
        for step in suite["steps"].as_array().unwrap() {
            assert_eq!(
                step["outcome"]["status"], "passed",
                "{suite_id}:{}\n{}",
                step["name"], self.output
            );
        }
    }

    /// Exit 0, each listed check reported as an expected failure (no entry silently unused),
    /// and every suite connected in the expected revisions.
    fn assert_clean(&self, xfail: &[&str], revisions: &[&str]) {
        assert_eq!(self.code, 0, "{}", self.output);
        let want: BTreeSet<String> = xfail.iter().map(|s| s.to_string()).collect();
        assert_eq!(self.xfails(), want, "expected failures\n{}", self.output);
        let want: BTreeSet<String> = revisions.iter().map(|s| s.to_string()).collect();
        assert_eq!(self.negotiated(), want, "negotiated revisions");
    }
}

/// `mcpspec run conformance <target...> --expected-failures <baseline> --json ...`.
fn conformance(target: &[&str], baseline: &str) -> Conformance {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let mut args = vec!["run", "conformance"];
    args.extend_from_slice(target);
    args.extend(["--expected-failures", baseline, "--json"]);
    args.push(json.to_str().unwrap());
    let r = run(&args);
    assert!(json.exists(), "no JSON report: {r:?}");
    Conformance {
        code: r.code,
        output: r.all_output(),
        report: read_json(&json),
    }
}

fn both_eras<'a>(target: &[&'a str]) -> Vec<&'a str> {
    let mut v = target.to_vec();
    v.extend(["--era", "legacy", "--era", "2026-07-28"]);
    v
}

#[test]
fn python_sdk_stdio_both_eras() {
    let (python, server) = python_server();
    let cmd = format!("{} {}", word(&python), word(&server));
    // Every scenario gets a fresh server process (~1 s of imports each for this SDK); the
    // HTTP-tagged ones would only start one to skip all their steps on stdio.
    let r = conformance(
        &both_eras(&["--stdio", &cmd, "--tag", "not http"]),
        PYTHON_BASELINE,
    );
    r.assert_clean(PYTHON_XFAIL, &["2025-11-25", "2026-07-28"]);
    r.assert_ran("modern-stdio@2026-07-28");
    r.assert_ran("legacy-stdio@legacy");
}

#[test]
fn python_sdk_http_both_eras() {
    let server = PythonHttp::start();
    let r = conformance(&both_eras(&["--url", &server.url]), PYTHON_BASELINE);
    let mut xfail = PYTHON_XFAIL.to_vec();
    xfail.push(PYTHON_HTTP_ONLY_XFAIL);
    r.assert_clean(&xfail, &["2025-11-25", "2026-07-28"]);
    // The legacy HTTP checks ran (the modern ones hold the HTTP-only XFAIL above).
    r.assert_ran("legacy-http@legacy");
}

fn memory_target(data: &Path) -> (String, String, String) {
    let entry = memory_server();
    (
        format!("node {}", word(&entry)),
        format!("MEMORY_FILE_PATH={}", data.join("memory.jsonl").display()),
        data.display().to_string(),
    )
}

#[test]
fn npm_server_memory_stdio_legacy() {
    let data = tempfile::tempdir().unwrap();
    let (cmd, env, cwd) = memory_target(data.path());
    let r = conformance(
        &[
            "--stdio", &cmd, "--env", &env, "--cwd", &cwd, "--era", "legacy",
        ],
        MEMORY_BASELINE,
    );
    r.assert_clean(MEMORY_XFAIL, &["2025-11-25"]);
    r.assert_ran("legacy-stdio@legacy");
}

/// A committed baseline plus one entry for a check that passes: the run fails (exit 1) and
/// names the stale entry with its line, while the real entries still match.
#[test]
fn stale_baseline_entry_fails_the_run() {
    let data = tempfile::tempdir().unwrap();
    let (cmd, env, cwd) = memory_target(data.path());
    let committed = std::fs::read_to_string(repo_root().join(MEMORY_BASELINE)).unwrap();
    assert_eq!(committed.matches("\nclient: []").count(), 1);
    let stale = "legacy-tools:tool_names_unique";
    let text = committed.replace("\nclient: []", &format!("\n  - {stale}\nclient: []"));
    let line = text.lines().position(|l| l.contains(stale)).unwrap() + 1;
    let baseline = data.path().join("stale.yaml");
    std::fs::write(&baseline, text).unwrap();
    let r = conformance(
        &[
            "--stdio",
            &cmd,
            "--env",
            &env,
            "--cwd",
            &cwd,
            "--era",
            "legacy",
            // Only the scenario of the baseline's entries (each scenario costs a server process).
            "--filter",
            "legacy-tools",
        ],
        baseline.to_str().unwrap(),
    );
    assert_eq!(r.code, 1, "{}", r.output);
    assert!(
        r.output
            .contains(&format!("`{stale}` passes now: remove line {line} of")),
        "{}",
        r.output
    );
    assert!(
        r.output
            .contains(&format!("{}:{line}:", baseline.display())),
        "{}",
        r.output
    );
    // The stale entry is the only reason for the exit code.
    let stale_entries: Vec<&str> = r.report["staleEntries"]
        .as_array()
        .expect("staleEntries in the JSON report")
        .iter()
        .map(|e| e["entry"].as_str().unwrap())
        .collect();
    assert_eq!(stale_entries, [stale]);
    assert_eq!(r.report["summary"]["failed"], 0, "{}", r.output);
    assert_eq!(r.report["summary"]["errors"], 0, "{}", r.output);
    let want: BTreeSet<String> = MEMORY_XFAIL.iter().map(|s| s.to_string()).collect();
    assert_eq!(r.xfails(), want, "{}", r.output);
}

/// `mcpspec init` against a third-party server, then `mcpspec validate` and `mcpspec run` in
/// the generated project with no flags: everything passes, in the eras init found.
fn init_then_run(target: &[&str], eras: &str) -> (tempfile::TempDir, Value) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let mut args = vec!["init", project.to_str().unwrap()];
    args.extend_from_slice(target);
    let r = run(&args);
    assert_eq!(r.code, 0, "init: {r:?}");
    let config = std::fs::read_to_string(project.join("mcpspec.yaml")).unwrap();
    assert!(config.contains(&format!("eras: [{eras}]")), "{config}");
    let v = common::run_in(&project, &["validate", "tests/mcp"], &[]);
    assert_eq!(v.code, 0, "validate: {v:?}");
    let r = common::run_in(&project, &["run"], &[]);
    assert_eq!(r.code, 0, "run: {r:?}");
    let report = read_json(&project.join("reports/results.json"));
    assert_eq!(report["summary"]["failed"], 0, "{r:?}");
    (dir, report)
}

/// The `passed` steps of the report, as `scenario@era:step`.
fn passed_steps(report: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for suite in report["suites"].as_array().unwrap() {
        for step in suite["steps"].as_array().unwrap() {
            if step["outcome"]["status"] == "passed" {
                out.insert(format!(
                    "{}:{}",
                    suite["id"].as_str().unwrap(),
                    step["name"].as_str().unwrap()
                ));
            }
        }
    }
    out
}

#[test]
fn init_npm_server_memory() {
    let data = tempfile::tempdir().unwrap();
    let (cmd, env, cwd) = memory_target(data.path());
    // No --era: init probes, finds a legacy-only server and writes only that era.
    let (_dir, report) = init_then_run(&["--stdio", &cmd, "--env", &env, "--cwd", &cwd], "legacy");
    let passed = passed_steps(&report);
    for step in [
        // Read-only tools are called; the nested capability flags (tools.listChanged,
        // resources.subscribe) of the baseline match the live server.
        "tool-read-graph@legacy:called with example arguments",
        "tool-search-nodes@legacy:called with example arguments",
        "resource-knowledge-graph@legacy:read",
        "contract@legacy:no breaking change (legacy)",
    ] {
        assert!(passed.contains(step), "{step} did not pass: {passed:?}");
    }
    // Tools that write the graph are listed, never called.
    assert!(
        !passed
            .iter()
            .any(|s| s.starts_with("tool-create-entities@legacy:called"))
    );
}

#[test]
fn init_python_sdk_both_eras() {
    let (python, server) = python_server();
    let cmd = format!("{} {}", word(&python), word(&server));
    let (_dir, report) = init_then_run(&["--stdio", &cmd], "legacy, 2026-07-28");
    let passed = passed_steps(&report);
    for era in ["legacy", "2026-07-28"] {
        let contract = format!("contract@{era}:no breaking change ({era})");
        assert!(passed.contains(&contract), "{contract}: {passed:?}");
        assert!(
            passed
                .iter()
                .any(|s| s.contains(&format!("@{era}:called with example arguments"))),
            "no tool was called in {era}: {passed:?}"
        );
    }
}
