//! A run's outcome is the same however the target misbehaves around it: an HTTP server
//! that drops keep-alive connections unannounced gives no transport error and a stable
//! exit code; what concerns the target rather than one scenario (an era it refuses, an
//! endpoint that is not there, a target that cannot be reached) is said once; and the
//! console, JSON and JUnit reports count the same.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{
    HttpServer, Run, Tokens, assert_contains, jwt_server_flags, read_json, run, run_in,
    stdio_target,
};
use serde_json::Value;

/// `scenario@era:step` → status, for every step of a JSON report.
fn statuses(report: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for suite in report["suites"].as_array().expect("suites") {
        for step in suite["steps"].as_array().expect("steps") {
            out.insert(
                format!("{}:{}", suite["id"].as_str().unwrap(), step["name"]),
                step["outcome"]["status"].as_str().unwrap().to_string(),
            );
        }
    }
    out
}

/// Transcript notes of the whole report that contain `text`.
fn notes_with(report: &Value, text: &str) -> usize {
    report["suites"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["steps"].as_array().unwrap())
        .flat_map(|s| s["transcript"].as_array().unwrap())
        .filter(|t| t["direction"] == "note" && t["body"].as_str().unwrap().contains(text))
        .count()
}

/// `conformance` + `security` over HTTP against the JWT-protected example server.
fn both_packs(url: &str, tokens: &Tokens, json: &Path) -> Run {
    let dir = json.parent().unwrap();
    run_in(
        dir,
        &[
            "run",
            "conformance",
            "security",
            "--url",
            url,
            "--jobs",
            "4",
            "--timeout",
            "10s",
            "--bearer-env",
            "SEC_TOKEN",
            "--set",
            "wrong_audience_token=env:SEC_WRONG",
            "--set",
            "expired_token=env:SEC_EXPIRED",
            "--json",
            json.to_str().unwrap(),
        ],
        &[
            ("SEC_TOKEN", tokens.valid.as_str()),
            ("SEC_WRONG", tokens.wrong_audience.as_str()),
            ("SEC_EXPIRED", tokens.expired.as_str()),
        ],
    )
}

/// A server that closes every connection after its response, without `Connection:
/// close`: 20 runs of both packs give exactly what the same server gives when it keeps
/// its connections — no transport error, the same outcome for every step, the same exit
/// code — and the requests that met a closed connection say in their transcript that
/// they were sent again.
#[test]
fn server_closing_connections_unannounced_changes_nothing() {
    let tokens = Tokens::mint();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("r.json");
    let expected = {
        let server = HttpServer::start(&jwt_server_flags(&[]));
        let run = both_packs(&server.url, &tokens, &json);
        assert_eq!(run.code, 0, "the sound server: {run:?}");
        statuses(&read_json(&json))
    };
    assert!(expected.len() > 100, "{expected:?}");
    let server = HttpServer::start(&jwt_server_flags(&["--defect", "close-after-response"]));
    let mut resent = 0;
    for i in 0..20 {
        let run = both_packs(&server.url, &tokens, &json);
        let report = read_json(&json);
        assert!(!run.stdout.contains("transport error"), "run {i}: {run:?}");
        assert_eq!(report["summary"]["errors"], 0, "run {i}: {run:?}");
        assert_eq!(statuses(&report), expected, "run {i}: {run:?}");
        assert_eq!(run.code, 0, "run {i}: {run:?}");
        resent += notes_with(&report, "sent again once on a fresh connection");
    }
    assert!(resent > 0, "no request ever met a closed connection");
}

/// The counts of the console's one summary line.
fn console_counts(stdout: &str) -> BTreeMap<String, u64> {
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("Summary: "))
        .collect();
    assert_eq!(lines.len(), 1, "one summary line:\n{stdout}");
    // No second line restating the counts another way ("12 failed" after "12 errors").
    let restated = stdout.lines().find(|l| {
        l.split_once(" passed, ")
            .is_some_and(|(n, _)| n.parse::<u64>().is_ok())
    });
    assert!(
        restated.is_none(),
        "{restated:?} restates the summary:\n{stdout}"
    );
    // "Summary: 14 suites, 25 steps: 0 passed, 0 failed, 12 errors, … in 0.1s"
    let line = lines[0].strip_prefix("Summary: ").unwrap();
    let line = line.rsplit_once(" in ").unwrap().0;
    line.split([',', ':'])
        .filter_map(|part| {
            let (n, what) = part.trim().split_once(' ')?;
            Some((what.to_string(), n.parse().ok()?))
        })
        .collect()
}

/// The `<testsuites>` totals of a JUnit report.
fn junit_totals(xml: &str) -> BTreeMap<String, u64> {
    let head = xml
        .lines()
        .find(|l| l.trim_start().starts_with("<testsuites"))
        .expect("<testsuites>");
    ["tests", "failures", "errors", "skipped"]
        .into_iter()
        .map(|attr| {
            let value = head
                .split(&format!(" {attr}=\""))
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no {attr} in {head}"));
            (attr.to_string(), value)
        })
        .collect()
}

/// Console, JSON and JUnit say the same: steps, passed (+ warnings in JUnit), failed,
/// errors, skipped (+ expected failures in JUnit).
fn assert_same_counts(run: &Run, json: &Path, junit: &Path) {
    let console = console_counts(&run.stdout);
    let summary = &read_json(json)["summary"];
    let n = |k: &str| summary[k].as_u64().unwrap();
    for (word, key) in [
        ("suites", "suites"),
        ("steps", "steps"),
        ("passed", "passed"),
        ("failed", "failed"),
        ("errors", "errors"),
        ("warnings", "warnings"),
        ("skipped", "skipped"),
    ] {
        assert_eq!(console[word], n(key), "{word}: {summary}\n{run:?}");
    }
    common::assert_valid_junit(junit);
    let totals = junit_totals(&std::fs::read_to_string(junit).unwrap());
    assert_eq!(totals["tests"], n("steps"), "{totals:?} {summary}");
    assert_eq!(totals["failures"], n("failed"), "{totals:?} {summary}");
    assert_eq!(totals["errors"], n("errors"), "{totals:?} {summary}");
    assert_eq!(
        totals["skipped"],
        n("skipped") + n("expectedFailures"),
        "{totals:?} {summary}"
    );
}

/// `run conformance TARGET EXTRA --json --junit` in a temp dir.
fn run_conformance(target: &[&str], extra: &[&str]) -> (Run, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (json, junit) = (dir.path().join("r.json"), dir.path().join("r.xml"));
    let mut args = vec!["run", "conformance", "--timeout", "5s"];
    args.extend(target);
    args.extend(extra);
    args.extend(["--json", json.to_str().unwrap()]);
    args.extend(["--junit", junit.to_str().unwrap()]);
    let run = run(&args);
    (run, dir)
}

/// A legacy-only server asked for 2026-07-28: the refusal is printed once (every other
/// suite of the era says "the same setup error as above" on its one line), and the one
/// summary line counts what JSON and JUnit count.
#[test]
fn era_the_server_refuses_is_said_once_and_counted_alike() {
    let target = stdio_target(&["--defect", "legacy-only"]);
    let (run, dir) = run_conformance(&["--stdio", &target], &["--era", "2026-07-28"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout.matches("server/discover answered").count(),
        1,
        "{run:?}"
    );
    assert_contains(&run.stdout, "(the same setup error as above)");
    let report = read_json(&dir.path().join("r.json"));
    let refused = report["suites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["setupErrorKind"] == "protocol")
        .count();
    assert!(refused > 5, "{report:#}");
    assert_same_counts(&run, &dir.path().join("r.json"), &dir.path().join("r.xml"));
}

/// Counts agree on an ordinary run with failures and warnings too.
#[test]
fn counts_agree_on_a_run_with_failures() {
    let target = stdio_target(&["--defect", "no-ping", "--defect", "declare-logging"]);
    let (run, dir) = run_conformance(&["--stdio", &target], &[]);
    assert_eq!(run.code, 1, "{run:?}");
    let summary = &read_json(&dir.path().join("r.json"))["summary"];
    assert!(summary["failed"].as_u64().unwrap() > 0, "{summary}");
    assert_same_counts(&run, &dir.path().join("r.json"), &dir.path().join("r.xml"));
}

/// `--era auto` against a legacy-only server: why it fell back is on the console, once.
#[test]
fn auto_fallback_reason_is_printed_once() {
    let target = stdio_target(&["--defect", "legacy-only"]);
    let (run, _dir) = run_conformance(&["--stdio", &target], &["--era", "auto"]);
    assert_eq!(run.code, 0, "{run:?}");
    let notes: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("era: "))
        .collect();
    assert_eq!(
        notes,
        [
            "  era: auto: server/discover answered -32601 (Method not found: server/discover); fell back to legacy"
        ],
        "{run:?}"
    );
}

/// Every suite of the report is a setup error of `kind`, or skipped without connecting.
fn assert_all_setup(report: &Value, kind: &str) {
    for s in report["suites"].as_array().unwrap() {
        let skipped = s["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|st| st["outcome"]["status"] == "skipped");
        assert!(
            s["setupErrorKind"] == kind || (s["setupError"].is_null() && skipped),
            "{s:#}"
        );
    }
}

/// A mistyped endpoint path (HTTP 404 on the handshake): exit 4, one message that says
/// what was tried, no legacy-only hint.
#[test]
fn endpoint_404_is_exit_4_reported_once() {
    let server = HttpServer::start(&[]);
    let url = server.url.replace("/mcp", "/mpc");
    for era in ["auto", "2026-07-28", "legacy"] {
        let (run, dir) = run_conformance(&["--url", &url], &["--era", era]);
        assert_eq!(run.code, 4, "--era {era}: {run:?}");
        assert_eq!(
            run.stdout.matches("no MCP endpoint at").count(),
            1,
            "--era {era}: {run:?}"
        );
        assert_contains(&run.stdout, &format!("{url}: POST "));
        assert_contains(&run.stdout, "answered HTTP 404");
        assert!(!run.stdout.contains("legacy-only"), "--era {era}: {run:?}");
        assert_all_setup(&read_json(&dir.path().join("r.json")), "unreachable");
    }
}

/// Nothing listens: exit 4, the error once, not once per scenario@era.
#[test]
fn unreachable_target_is_exit_4_reported_once() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (run, dir) = run_conformance(&["--url", &url], &[]);
    assert_eq!(run.code, 4, "{run:?}");
    assert_eq!(run.stdout.matches("cannot reach").count(), 1, "{run:?}");
    assert_contains(&run.stdout, &format!("cannot reach {url} (POST "));
    assert_all_setup(&read_json(&dir.path().join("r.json")), "unreachable");
}
