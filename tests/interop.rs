//! Interop: the built-in conformance packs against pinned third-party MCP servers, each with a
//! committed expected-failures baseline (tests/interop/baselines/, every entry explained).
//!
//! - the official Python SDK (`mcp==2.3.0`, dual-era `MCPServer`, tests/interop/python/server.py)
//!   over stdio and Streamable HTTP, eras legacy and 2026-07-28;
//! - FastMCP 4.2.3 (on mcp 2.3.0, FastMCP's defaults, tests/interop/fastmcp/server.py) over stdio
//!   and Streamable HTTP, eras legacy and 2026-07-28;
//! - the npm reference server `@modelcontextprotocol/server-memory` 2026.8.31 (legacy-only) over
//!   stdio;
//! - the npm reference server `@modelcontextprotocol/server-everything` 2026.8.31 (legacy-only)
//!   over Streamable HTTP (`dist/index.js streamableHttp`, bound to 127.0.0.1 on a free port by
//!   tests/interop/everything-2026.8.31/listen-loopback.mjs); and its interactive tools carried
//!   to their results by the scripted client of tests/interop/everything-2026.8.31/scenarios,
//!   over stdio and HTTP;
//! - FastMCP's `ctx.elicit` (and its 2026-07-28 guard pattern) carried to its result by the
//!   scripted client of tests/interop/fastmcp/scenarios, over stdio and HTTP in both eras; and
//!   FastMCP 2.14.7's `ctx.elicit`, `ctx.sample` and `ctx.list_roots` by that of
//!   tests/interop/fastmcp/scenarios-2.14.7, over stdio and HTTP (legacy, the era it speaks);
//! - the QA trial of issue #38 (tests/interop/qa-trial): a FastMCP server answering JSON as
//!   text (orders.py), server-everything and server-memory under scenarios written from the
//!   book with no workaround (`json:`, `fromjson`, `each:` over what the server listed,
//!   templated bounds and JSONPath).
//!
//! Every run must end with exit 0, zero failures and zero errors, its expected failures exactly
//! the baseline's (an entry that no longer fails is stale: the run fails).
//!
//! `mcpspec init` against both servers writes a project that validates and passes with a bare
//! `mcpspec run` (init_npm_server_memory, init_python_sdk_both_eras).
//!
//! The servers are installed by `scripts/test` (a venv from each requirements.txt; `npm ci` from
//! each lockfile). A missing installation fails these tests with the step to run: never a silent pass.
// Unix only: the pinned Python servers run from .venv/bin.
#![cfg(unix)]

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
const FASTMCP_BASELINE: &str = "tests/interop/baselines/fastmcp.yaml";
const MEMORY_BASELINE: &str = "tests/interop/baselines/memory.yaml";
const EVERYTHING_BASELINE: &str = "tests/interop/baselines/everything.yaml";
/// Entries of the Python SDK's stdio transport (both Python servers), added to their own
/// baseline for stdio runs only ([`with_stdio_entries`]).
const PYTHON_SDK_STDIO_BASELINE: &str = "tests/interop/baselines/python-sdk-stdio.yaml";
const MEMORY_DIR: &str = "tests/interop/memory-2026.8.31";
const EVERYTHING_DIR: &str = "tests/interop/everything-2026.8.31";

/// Expected failures of the Python server on either transport (`suite@era:check`).
const PYTHON_XFAIL: &[&str] = &[
    "legacy-prompts@legacy:unknown_prompt_invalid_params",
    "legacy-tool-calls@legacy:structured_content_text_block",
    "modern-tool-calls@2026-07-28:structured_content_text_block",
    "legacy-tools@legacy:invalid_cursor_rejected",
    "legacy-tools@legacy:unknown_tool_protocol_error",
    "modern-prompts@2026-07-28:unknown_prompt_invalid_params",
    "modern-tools@2026-07-28:invalid_cursor_rejected",
    "modern-tools@2026-07-28:unknown_tool_protocol_error",
    "legacy-prompts@legacy:missing_argument_invalid_params",
    "modern-prompts@2026-07-28:missing_argument_invalid_params",
    "legacy-malformed@legacy:invalid_request_answered",
];
/// ... plus these over HTTP only (the steps need the HTTP transport).
const PYTHON_HTTP_ONLY_XFAIL: &[&str] = &[
    "modern-http@2026-07-28:version_header_mismatch_rejected",
    "legacy-http@legacy:sse_priming_event",
];
/// ... and these over stdio only, for both Python servers (python-sdk-stdio.yaml).
const PYTHON_SDK_STDIO_XFAIL: &[&str] = &[
    "legacy-malformed@legacy:parse_error_answered",
    "modern-malformed@2026-07-28:parse_error_answered",
    "modern-malformed@2026-07-28:invalid_request_answered",
];
/// Expected failures of the FastMCP server on either transport.
const FASTMCP_XFAIL: &[&str] = &[
    "legacy-tool-calls@legacy:structured_content_text_block",
    "legacy-tools@legacy:invalid_cursor_rejected",
    "legacy-tools@legacy:unknown_tool_protocol_error",
    "modern-discovery@2026-07-28:deprecated_logging_capability",
    "modern-tool-calls@2026-07-28:structured_content_text_block",
    "modern-tools@2026-07-28:invalid_cursor_rejected",
    "modern-tools@2026-07-28:unknown_tool_protocol_error",
    "legacy-malformed@legacy:invalid_request_answered",
];
/// ... plus these over HTTP only.
const FASTMCP_HTTP_ONLY_XFAIL: &[&str] = &[
    "legacy-http@legacy:foreign_host_rejected",
    "legacy-http@legacy:invalid_origin_rejected",
    "legacy-http@legacy:invalid_origin_refused",
    "modern-http@2026-07-28:foreign_host_rejected",
    "modern-http@2026-07-28:invalid_origin_rejected",
    "modern-http@2026-07-28:version_header_mismatch_rejected",
    "legacy-http@legacy:sse_priming_event",
];
const EVERYTHING_XFAIL: &[&str] = &[
    "legacy-http@legacy:foreign_host_rejected",
    "legacy-http@legacy:invalid_origin_rejected",
    "legacy-http@legacy:invalid_origin_refused",
    "legacy-sessions@legacy:terminated_session_not_found",
    "legacy-tools@legacy:invalid_cursor_rejected",
    "legacy-tools@legacy:unknown_tool_protocol_error",
    "legacy-tools@legacy:call_without_name_invalid_params",
    "legacy-malformed@legacy:invalid_request_answered",
    "legacy-utilities@legacy:set_level_invalid_level_invalid_params",
];
const MEMORY_XFAIL: &[&str] = &[
    "legacy-tools@legacy:invalid_cursor_rejected",
    "legacy-tools@legacy:unknown_tool_protocol_error",
    "legacy-tools@legacy:call_without_name_invalid_params",
    "legacy-malformed@legacy:parse_error_answered",
    "legacy-malformed@legacy:invalid_request_answered",
];

fn interop_dir() -> PathBuf {
    repo_root().join("tests/interop")
}

/// A path as one word of a `--stdio` command line.
fn word(path: &Path) -> String {
    format!("'{}'", path.display())
}

/// (venv python, server.py) of the pinned Python SDK server; fails when `scripts/test` has not
/// installed it, or installed another requirements.txt than the committed one.
fn python_server() -> (PathBuf, PathBuf) {
    venv_server("python", "Python SDK")
}

/// (venv python, server.py) of the pinned FastMCP server, like [`python_server`].
fn fastmcp_server() -> (PathBuf, PathBuf) {
    venv_server("fastmcp", "FastMCP")
}

/// (venv python, server.py) of the pinned Python server in tests/interop/`name`.
fn venv_server(name: &str, what: &str) -> (PathBuf, PathBuf) {
    let dir = interop_dir().join(name);
    let python = dir.join(".venv/bin/python");
    let installed = std::fs::read_to_string(dir.join(".venv/installed-requirements.txt")).ok();
    let wanted = std::fs::read_to_string(dir.join("requirements.txt")).expect("requirements.txt");
    assert!(
        python.exists() && installed.as_deref() == Some(wanted.as_str()),
        "the pinned {what} server is not installed (tests/interop/{name}/.venv is missing or \
         was not installed from the committed requirements.txt): run `scripts/test`, whose step \
         \"Pinned Python servers\" runs `python3 -m venv tests/interop/{name}/.venv` and \
         `pip install --no-deps --only-binary=:all: -r tests/interop/{name}/requirements.txt`"
    );
    (python, dir.join("server.py"))
}

/// The entry point of the pinned server-memory; fails when `scripts/test` has not installed it.
fn memory_server() -> PathBuf {
    npm_server(MEMORY_DIR, "server-memory")
}

/// The entry point of the pinned npm package `@modelcontextprotocol/<package>` installed in
/// `dir`; fails when `node` is missing or `.ci/run` has not installed it.
fn npm_server(dir: &str, package: &str) -> PathBuf {
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|o| o.status.success()),
        "`node` is not on PATH: the npm interop servers need Node.js (scripts/test installs them with `npm ci`)"
    );
    let entry = repo_root().join(dir).join(format!(
        "node_modules/@modelcontextprotocol/{package}/dist/index.js"
    ));
    assert!(
        entry.exists(),
        "the pinned @modelcontextprotocol/{package} is not installed: run `.ci/run`, whose \
         npm step runs `npm ci --prefix {dir} --ignore-scripts` from its package-lock.json"
    );
    entry
}

/// A server over Streamable HTTP on 127.0.0.1 (a free port), killed on drop.
struct HttpServer {
    child: Child,
    url: String,
    _logs: tempfile::TempDir,
}

impl HttpServer {
    /// The Python SDK server (`server.py --http 0`).
    fn python() -> HttpServer {
        let (python, server) = python_server();
        HttpServer::start(Command::new(python).arg(server).args(["--http", "0"]))
    }

    /// The FastMCP server (`server.py --http 0`).
    fn fastmcp() -> HttpServer {
        let (python, server) = fastmcp_server();
        HttpServer::start(Command::new(python).arg(server).args(["--http", "0"]))
    }

    /// server-everything over Streamable HTTP, on 127.0.0.1 and a free port (`PORT=0`, the
    /// preload binds and prints it).
    fn everything() -> HttpServer {
        let entry = npm_server(EVERYTHING_DIR, "server-everything");
        let preload = repo_root().join(EVERYTHING_DIR).join("listen-loopback.mjs");
        HttpServer::start(
            Command::new("node")
                .arg("--import")
                .arg(preload)
                .arg(entry)
                .arg("streamableHttp")
                .env("PORT", "0"),
        )
    }

    /// Start `cmd` and wait for the stdout line `listening on <URL>` (other lines before it
    /// are skipped).
    fn start(cmd: &mut Command) -> HttpServer {
        let logs = tempfile::tempdir().unwrap();
        let stderr_path = logs.path().join("stderr.log");
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .expect("the HTTP server starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if let Some(url) = line.trim().strip_prefix("listening on ") {
                    let _ = tx.send(url.to_string());
                    break;
                }
                line.clear();
            }
            // Keep draining, so a chatty server never blocks on a full pipe.
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let Ok(url) = rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the HTTP server did not print `listening on <URL>`; its stderr:\n{}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        };
        HttpServer {
            url,
            child,
            _logs: logs,
        }
    }
}

impl Drop for HttpServer {
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

    /// Every step of this suite (`scenario@era`) ran and passed, or is one of the expected
    /// failures [`Conformance::assert_clean`] pins: none skipped.
    fn assert_ran(&self, suite_id: &str) {
        let suite = self.report["suites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == suite_id)
            .unwrap_or_else(|| panic!("no suite {suite_id}\n{}", self.output));
        for step in suite["steps"].as_array().unwrap() {
            let status = step["outcome"]["status"].as_str().unwrap_or("");
            assert!(
                matches!(status, "passed" | "expectedFailure"),
                "{suite_id}:{} is {status}\n{}",
                step["name"],
                self.output
            );
        }
    }

    /// Exit 0 with no failure, warning or error, each listed check reported as an expected failure
    /// (no entry silently unused, none stale), and every suite connected in the expected
    /// revisions.
    fn assert_clean(&self, xfail: &[&str], revisions: &[&str]) {
        assert_eq!(self.code, 0, "{}", self.output);
        // A warning (SHOULD) outside the baseline is a finding nobody reviewed.
        for count in ["failed", "errors", "warnings"] {
            assert_eq!(self.report["summary"][count], 0, "{count}\n{}", self.output);
        }
        assert!(
            self.report["staleEntries"]
                .as_array()
                .is_none_or(|a| a.is_empty()),
            "stale baseline entries: {}\n{}",
            self.report["staleEntries"],
            self.output
        );
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

/// `baseline` with the entries of python-sdk-stdio.yaml added (a stdio run of a server on the
/// Python SDK), as a file in `dir`.
fn with_stdio_entries(baseline: &str, dir: &Path) -> String {
    let files = [baseline, PYTHON_SDK_STDIO_BASELINE].map(|f| repo_root().join(f));
    common::merged_baseline(&files, dir).display().to_string()
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
    let dir = tempfile::tempdir().unwrap();
    let r = conformance(
        &both_eras(&["--stdio", &cmd, "--tag", "not http"]),
        &with_stdio_entries(PYTHON_BASELINE, dir.path()),
    );
    r.assert_clean(
        &[PYTHON_XFAIL, PYTHON_SDK_STDIO_XFAIL].concat(),
        &["2025-11-25", "2026-07-28"],
    );
    r.assert_ran("modern-stdio@2026-07-28");
    r.assert_ran("legacy-stdio@legacy");
}

#[test]
fn python_sdk_http_both_eras() {
    let server = HttpServer::python();
    let r = conformance(&both_eras(&["--url", &server.url]), PYTHON_BASELINE);
    let xfail = [PYTHON_XFAIL, PYTHON_HTTP_ONLY_XFAIL].concat();
    r.assert_clean(&xfail, &["2025-11-25", "2026-07-28"]);
    // The legacy HTTP checks ran (the modern ones hold the HTTP-only XFAIL above).
    r.assert_ran("legacy-http@legacy");
}

#[test]
fn fastmcp_stdio_both_eras() {
    let (python, server) = fastmcp_server();
    let cmd = format!("{} {}", word(&python), word(&server));
    // Only the scenarios stdio runs (each scenario starts a server: ~1 s of imports).
    let dir = tempfile::tempdir().unwrap();
    let r = conformance(
        &both_eras(&["--stdio", &cmd, "--tag", "not http"]),
        &with_stdio_entries(FASTMCP_BASELINE, dir.path()),
    );
    r.assert_clean(
        &[FASTMCP_XFAIL, PYTHON_SDK_STDIO_XFAIL].concat(),
        &["2025-11-25", "2026-07-28"],
    );
    r.assert_ran("modern-stdio@2026-07-28");
    r.assert_ran("legacy-stdio@legacy");
}

#[test]
fn fastmcp_http_both_eras() {
    let server = HttpServer::fastmcp();
    let r = conformance(&both_eras(&["--url", &server.url]), FASTMCP_BASELINE);
    let mut xfail = FASTMCP_XFAIL.to_vec();
    xfail.extend(FASTMCP_HTTP_ONLY_XFAIL);
    r.assert_clean(&xfail, &["2025-11-25", "2026-07-28"]);
    r.assert_ran("legacy-sessions@legacy");
}

#[test]
fn npm_server_everything_http_legacy() {
    let server = HttpServer::everything();
    let r = conformance(
        &["--url", &server.url, "--era", "legacy"],
        EVERYTHING_BASELINE,
    );
    r.assert_clean(EVERYTHING_XFAIL, &["2025-11-25"]);
    r.assert_ran("legacy-tool-calls@legacy");
    r.assert_ran("legacy-handshake@legacy");
}

/// The security pack against server-everything, whose read-only
/// `trigger-long-running-operation` sleeps 10 s with its example arguments: it is skipped
/// within the per-call budget (once per run), not waited for by every check.
#[test]
fn npm_server_everything_security_pack_is_bounded() {
    let server = HttpServer::everything();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let started = std::time::Instant::now();
    let r = run(&[
        "run",
        "security",
        "--url",
        &server.url,
        "--era",
        "legacy",
        "--json",
        json.to_str().unwrap(),
    ]);
    let took = started.elapsed();
    let report = read_json(&json);
    assert_eq!(report["summary"]["errors"], 0, "{r:?}");
    // Two budgets at most (the call and its shared answer), far below 6 × 10 s.
    assert!(took < Duration::from_secs(25), "took {took:?}: {r:?}");
    let text = report.to_string();
    assert!(
        text.contains(
            r#"tool \"trigger-long-running-operation\" skipped: no answer to its example arguments within the 5s per-call budget"#
        ),
        "{r:?}"
    );
    let calls = text
        .matches(r#"\"name\":\"trigger-long-running-operation\",\"arguments\":{}"#)
        .count();
    assert!(
        calls <= 1,
        "called {calls} times with its example arguments"
    );
}

/// `mcpspec load` against server-everything over HTTP (legacy era: a session per
/// connection, opened in the warm-up): 2 iterations a second for 5 s of a list and two
/// calls, every answer judged (tests/load/everything.yaml). Nothing fails and every budget
/// holds. The count is the schedule's at most; the band below it is wide, since on a busy
/// machine a node server may leave iterations unfinished when the run ends (the fixed rate
/// held for 60 s is measured by bench/load-fixed-rate.sh, not here).
#[test]
fn npm_server_everything_under_load_http() {
    let server = HttpServer::everything();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("load.json");
    let junit = dir.path().join("load.xml");
    let scenario = repo_root().join("tests/load/everything.yaml");
    let r = run(&[
        "load",
        scenario.to_str().unwrap(),
        "--url",
        &server.url,
        "--era",
        "legacy",
        "--rate",
        "2",
        "--duration",
        "5s",
        "--warmup",
        "3s",
        "--jobs",
        "2",
        "--p99",
        "20s",
        "--max-error-rate",
        "0",
        "--json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let report = read_json(&json);
    assert_eq!(report["era"], "legacy", "{report:#}");
    assert_eq!(report["targetRate"], 2.0);
    assert_eq!(report["ended"]["early"], false, "{report:#}");
    let summary = &report["summary"];
    let iterations = summary["iterations"].as_u64().unwrap();
    assert!((1..=11).contains(&iterations), "{summary:#}");
    assert_eq!(summary["failedIterations"], 0, "{summary:#}");
    assert_eq!(summary["errors"], serde_json::json!({}), "{summary:#}");
    assert_eq!(summary["requests"].as_u64(), Some(3 * iterations));
    let steps = summary["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "{summary:#}");
    assert!(steps.iter().all(|s| s["errors"] == 0), "{summary:#}");
    let budgets = report["budgets"].as_array().unwrap();
    assert!(!budgets.is_empty());
    assert!(budgets.iter().all(|b| b["passed"] == true), "{report:#}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(!xml.contains("<failure"), "{xml}");
    assert!(r.stdout.contains("result: passed"), "{r:?}");
}

/// server-everything's scenarios of the client's half (tests/interop/everything-2026.8.31/scenarios,
/// written from docs/src/server-asks-back.md alone), run with `target`: the report.
fn everything_asks_back(target: &[&str]) -> (i32, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let scenarios = repo_root().join(EVERYTHING_DIR).join("scenarios");
    let mut args = vec!["run", scenarios.to_str().unwrap()];
    args.extend_from_slice(target);
    args.extend(["--era", "legacy", "--json", json.to_str().unwrap()]);
    let r = run(&args);
    assert!(json.exists(), "no JSON report: {r:?}");
    (r.code, r.all_output(), read_json(&json))
}

/// The status of every step of the report, as `scenario@era:step` → status.
fn step_statuses(report: &Value) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    for suite in report["suites"].as_array().unwrap() {
        for step in suite["steps"].as_array().unwrap() {
            out.insert(
                format!(
                    "{}:{}",
                    suite["id"].as_str().unwrap(),
                    step["name"].as_str().unwrap()
                ),
                step["outcome"]["status"].as_str().unwrap_or("").to_string(),
            );
        }
    }
    out
}

const EVERYTHING_ASKS_BACK_STEPS: &[&str] = &[
    "everything-asks-back@legacy:the interactive tools are listed",
    "everything-asks-back@legacy:sampling is answered from the script",
    "everything-asks-back@legacy:elicitation is accepted with the schema's defaults and the script's fields",
    "everything-asks-back@legacy:URL-mode elicitation is accepted without content",
    "everything-asks-back@legacy:the roots are the script's",
    "everything-no-client@legacy:the interactive tools are not listed",
    "everything-research-task@legacy:an ambiguous research task asks, is answered and completes",
    "everything-research-task@legacy:a plain research task completes without asking",
];

/// Every step of `report` passed, and they are exactly `steps`.
fn assert_all_passed(report: &Value, steps: &[&str], output: &str) {
    let statuses = step_statuses(report);
    for step in steps {
        assert_eq!(
            statuses.get(*step).map(String::as_str),
            Some("passed"),
            "{step}\n{output}"
        );
    }
    assert_eq!(statuses.len(), steps.len(), "{output}");
}

/// A client that declares roots, sampling and elicitation (form and URL) sees 17 tools (13
/// without) and carries `trigger-sampling-request`, `trigger-elicitation-request`,
/// `trigger-url-elicitation` and `get-roots-list` to their results, and runs the task tool
/// `simulate-research-query` through `input_required` (server-everything speaks only the
/// legacy era).
#[test]
fn npm_server_everything_asks_back_stdio() {
    let entry = npm_server(EVERYTHING_DIR, "server-everything");
    let cmd = format!("node {} stdio", word(&entry));
    let (code, output, report) = everything_asks_back(&["--stdio", &cmd]);
    assert_eq!(code, 0, "{output}");
    assert_all_passed(&report, EVERYTHING_ASKS_BACK_STEPS, &output);
}

/// The same scenarios over Streamable HTTP: sampling and elicitation are answered on the
/// call's SSE stream, `roots/list` on the session's GET stream (the server asks it tied to no
/// call).
#[test]
fn npm_server_everything_asks_back_http() {
    let server = HttpServer::everything();
    let (code, output, report) = everything_asks_back(&["--url", &server.url]);
    assert_eq!(code, 0, "{output}");
    assert_all_passed(&report, EVERYTHING_ASKS_BACK_STEPS, &output);
}

/// FastMCP's `confirm` (tests/interop/fastmcp/asks_back.py: `ctx.elicit` in the legacy era,
/// an `input_required` result in 2026-07-28) carried to its result by the scenario of
/// tests/interop/fastmcp/scenarios, the same YAML in both eras; the elicitation is asked once
/// in each (in 2026-07-28 as an input request, so it took an `input_required` round).
fn fastmcp_asks_back_both_eras(target: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let scenarios = interop_dir().join("fastmcp/scenarios");
    let mut args = vec!["run", scenarios.to_str().unwrap()];
    args.extend_from_slice(target);
    args.extend(["--json", json.to_str().unwrap()]);
    let r = run(&both_eras(&args));
    assert_eq!(r.code, 0, "{r:?}");
    let mut steps = Vec::new();
    for era in ["legacy", "2026-07-28"] {
        for step in [
            "the confirmation is accepted with the schema's default and the script's note",
            "a delete is declined",
        ] {
            steps.push(format!("fastmcp-asks-back@{era}:{step}"));
        }
    }
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    assert_all_passed(&read_json(&json), &steps, &r.all_output());
}

/// The server of asks_back.py with FastMCP `name`'s venv: its python and the script.
fn asks_back_server(name: &str, what: &str) -> (PathBuf, PathBuf) {
    let (python, _) = venv_server(name, what);
    (python, interop_dir().join("fastmcp/asks_back.py"))
}

#[test]
fn fastmcp_asks_back_stdio_both_eras() {
    let (python, server) = asks_back_server("fastmcp", "FastMCP");
    let cmd = format!("{} {}", word(&python), word(&server));
    fastmcp_asks_back_both_eras(&["--stdio", &cmd]);
}

#[test]
fn fastmcp_asks_back_http_both_eras() {
    let (python, server) = asks_back_server("fastmcp", "FastMCP");
    let server = HttpServer::start(Command::new(python).arg(server).args(["--http", "0"]));
    fastmcp_asks_back_both_eras(&["--url", &server.url]);
}

/// FastMCP 2.14.7 (on mcp 1.30.0, legacy only) has `ctx.sample()` and `ctx.list_roots()` too:
/// the scenario of tests/interop/fastmcp/scenarios-2.14.7 carries elicitation, sampling and
/// roots to their results over `target` (over HTTP mcp 1.30 asks `roots/list` on the
/// session's GET stream).
fn fastmcp_2_asks_back(target: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let scenarios = interop_dir().join("fastmcp/scenarios-2.14.7");
    let mut args = vec!["run", scenarios.to_str().unwrap()];
    args.extend_from_slice(target);
    args.extend(["--era", "legacy", "--json", json.to_str().unwrap()]);
    let r = run(&args);
    assert_eq!(r.code, 0, "{r:?}");
    let steps: Vec<String> = [
        "the confirmation is accepted with the schema's default and the script's note",
        "a delete is declined",
        "the summary comes from the script",
        "the roots are the script's",
    ]
    .iter()
    .map(|step| format!("fastmcp-2-asks-back@legacy:{step}"))
    .collect();
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    assert_all_passed(&read_json(&json), &steps, &r.all_output());
}

#[test]
fn fastmcp_2_asks_back_stdio() {
    let (python, server) = asks_back_server("fastmcp-2.14.7", "FastMCP 2.14.7");
    fastmcp_2_asks_back(&["--stdio", &format!("{} {}", word(&python), word(&server))]);
}

#[test]
fn fastmcp_2_asks_back_http() {
    let (python, server) = asks_back_server("fastmcp-2.14.7", "FastMCP 2.14.7");
    let server = HttpServer::start(Command::new(python).arg(server).args(["--http", "0"]));
    fastmcp_2_asks_back(&["--url", &server.url]);
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
    // Only the entries of the scenario that ran are expected failures.
    let want: BTreeSet<String> = MEMORY_XFAIL
        .iter()
        .filter(|s| s.starts_with("legacy-tools@"))
        .map(|s| s.to_string())
        .collect();
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

/// The steps of the QA trial's scenario run with `target` (tests/interop/qa-trial/`folder`):
/// exit 0, and every step of the report passed.
fn qa_trial(folder: &str, target: Vec<String>) -> BTreeSet<String> {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let scenarios = interop_dir().join("qa-trial").join(folder);
    let mut args = vec!["run".to_string(), scenarios.display().to_string()];
    args.extend(target);
    args.extend(["--json".to_string(), json.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run(&args);
    assert_eq!(r.code, 0, "{folder}: {r:?}");
    let statuses = step_statuses(&read_json(&json));
    let failed: Vec<_> = statuses.iter().filter(|(_, s)| *s != "passed").collect();
    assert!(
        failed.is_empty(),
        "{folder}: {failed:?}\n{}",
        r.all_output()
    );
    statuses.into_keys().collect()
}

/// The QA trial of #38 (a FastMCP server answering JSON as text, server-everything and
/// server-memory), its scenarios written from the book with no workaround: `json:` into
/// text results, `fromjson`, `each:` over the tools (resources, entities) the server
/// listed, templated bounds and templated JSONPath. Every step passes, and the rows of each
/// `each:` are what the server listed. The three servers run side by side.
#[test]
fn qa_trial_scenarios_pass_without_workarounds() {
    let (python, _) = fastmcp_server();
    let orders = format!(
        "{} {}",
        word(&python),
        word(&interop_dir().join("qa-trial/orders.py"))
    );
    let everything = format!(
        "node {} stdio",
        word(&npm_server(EVERYTHING_DIR, "server-everything"))
    );
    let data = tempfile::tempdir().unwrap();
    let (memory, memory_env, memory_cwd) = memory_target(data.path());
    let strings = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let runs: Vec<(&str, Vec<String>)> = vec![
        (
            "fastmcp",
            // One era: FastMCP's imports take seconds per process (the modern era here, the
            // npm servers speak the legacy one).
            strings(&["--stdio", &orders, "--era", "2026-07-28"]),
        ),
        ("everything", strings(&["--stdio", &everything])),
        (
            "memory",
            strings(&[
                "--stdio",
                &memory,
                "--env",
                &memory_env,
                "--cwd",
                &memory_cwd,
            ]),
        ),
    ];
    let steps: Vec<BTreeSet<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = runs
            .into_iter()
            .map(|(folder, target)| s.spawn(move || qa_trial(folder, target)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let has = |set: &BTreeSet<String>, step: &str| assert!(set.contains(step), "{step}: {set:#?}");
    for tool in ["list_orders", "get_order", "order_stats"] {
        has(
            &steps[0],
            &format!("orders-json-text@2026-07-28:listed tool[{tool}]"),
        );
    }
    has(
        &steps[0],
        "orders-json-text@2026-07-28:the first open order, read back by the id inside the text",
    );
    for tool in ["echo", "get-sum", "get-structured-content"] {
        has(
            &steps[1],
            &format!("everything-listed@legacy:listed tool[{tool}]"),
        );
    }
    has(
        &steps[1],
        "everything-listed@legacy:listed resource[features.md]",
    );
    has(
        &steps[1],
        "everything-listed@legacy:values taken out of the text",
    );
    for person in ["Ada Lovelace", "Charles Babbage"] {
        has(
            &steps[2],
            &format!("memory-graph@legacy:remembered entity[{person}]"),
        );
    }
    has(
        &steps[2],
        "memory-graph@legacy:the graph resource is JSON text too",
    );
}
