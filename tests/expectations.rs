//! Every expectation kind is shown passing on a good response and failing on a bad one,
//! as data: `tests/expectations/pass.yaml` (every step holds) and
//! `tests/expectations/fail.yaml` (every step's one expectation fails, and the step name
//! `<kind>: <what>` says which kind must be reported). Both run against the clean example
//! server with `--page-size 2`, over stdio and HTTP, in the legacy and modern eras, and
//! are judged from the `--json` result.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{HttpServer, Run, read_json, repo_root, run, stdio_target, step};
use serde_json::Value;

const PASS: &str = "tests/expectations/pass.yaml";
const FAIL: &str = "tests/expectations/fail.yaml";
const SHOULD: &str = "tests/expectations/should.yaml";

/// Server flags: pagination is part of what pass.yaml checks.
const SERVER_FLAGS: &[&str] = &["--page-size", "2"];

/// (era label as passed to `--era`, revision it negotiates, era kind).
const ERAS: &[(&str, &str, &str)] = &[
    ("legacy", "2025-11-25", "legacy"),
    ("2026-07-28", "2026-07-28", "modern"),
];

/// Keys of an `expect` item that the two files do not show, each with where it is
/// covered instead. Every other key of the DSL's expectation type must appear in both.
const SHOWN_ELSEWHERE: &[(&str, &str)] = &[
    (
        "path",
        "the subject of the predicates, not a kind of its own: on every path item",
    ),
    (
        "unique",
        "list predicates: the conformance packs (specs/) and tests/golden/init",
    ),
    (
        "increasing",
        "list predicates: the conformance packs (specs/) and tests/golden/init",
    ),
    (
        "validSchema",
        "list predicates: the conformance packs (specs/) and tests/golden/init",
    ),
    (
        "within",
        "late notifications: tests/expectations/notifications-within.yaml",
    ),
    (
        "snapshot",
        "golden responses write files: tests/snapshots.rs",
    ),
    (
        "asked",
        "the server's requests need a client that answers: tests/client_side.rs (holding and failing)",
    ),
    (
        "rounds",
        "input_required rounds need a client that answers: tests/client_side.rs (holding and failing)",
    ),
    (
        "taskStatus",
        "a task needs the interactive server's slow_job, over stdio: tests/tasks.rs (holding and failing)",
    ),
    ("sanitize", "a setting of `snapshot`: tests/snapshots.rs"),
    ("perEra", "a setting of `snapshot`: tests/snapshots.rs"),
];

/// Every kind and predicate both files must show: the keys of an `expect` item as the
/// DSL's types declare them (its published schema), less [`SHOWN_ELSEWHERE`].
fn all_keys() -> Vec<String> {
    let schema = mcpspec::language::dsl::scenario_schema();
    let properties = schema["$defs"]["Expectation"]["properties"]
        .as_object()
        .expect("the DSL schema declares the expectation's keys");
    for (key, _) in SHOWN_ELSEWHERE {
        assert!(
            properties.contains_key(*key),
            "`{key}` is no expectation key any more: remove it from SHOWN_ELSEWHERE"
        );
    }
    properties
        .keys()
        .filter(|k| !SHOWN_ELSEWHERE.iter().any(|(s, _)| s == k))
        .cloned()
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Transport {
    Stdio,
    Http,
}

/// Run one scenario file over `target` in both eras and return the run and its JSON result.
fn run_file(file: &str, target: &[String]) -> (Run, Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let json_arg = json.display().to_string();
    let mut args: Vec<&str> = vec!["run", file];
    args.extend(target.iter().map(String::as_str));
    args.extend([
        "--era",
        "legacy",
        "--era",
        "2026-07-28",
        "--timeout",
        "5s",
        "--json",
        &json_arg,
    ]);
    let out = run(&args);
    assert!(json.exists(), "no JSON result written for {file}: {out:?}");
    let value = read_json(&json);
    assert!(!out.all_output().contains("panicked"), "{out:?}");
    assert_eq!(
        value["suites"].as_array().map(Vec::len),
        Some(2),
        "one suite per era: {out:?}"
    );
    (out, value)
}

fn stdio_args() -> Vec<String> {
    vec!["--stdio".into(), stdio_target(SERVER_FLAGS)]
}

fn http_args(server: &HttpServer) -> Vec<String> {
    vec!["--url".into(), server.url.clone()]
}

/// The scenario file parsed as plain YAML.
fn yaml(file: &str) -> Value {
    let text = std::fs::read_to_string(repo_root().join(file)).expect("scenario file");
    serde_saphyr::from_str::<Value>(&text).expect("scenario file is YAML")
}

fn step_names(doc: &Value) -> Vec<String> {
    doc["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["name"].as_str().expect("step name").to_string())
        .collect()
}

/// The suite `scenario@era`, checked to have negotiated the era's revision and to list
/// exactly the file's steps, in order.
fn checked_suite<'a>(
    result: &'a Value,
    scenario: &str,
    era: (&str, &str, &str),
    names: &[String],
) -> &'a Value {
    let (label, revision, kind) = era;
    let id = format!("{scenario}@{label}");
    let suite = common::suite(result, &id);
    assert_eq!(suite["setupError"], Value::Null, "{id}: setup error");
    assert_eq!(suite["era"]["negotiated"], revision, "{id}");
    assert_eq!(suite["era"]["era"], kind, "{id}");
    let got: Vec<&str> = suite["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        got, names,
        "{id}: the result lists every step of the file, in order"
    );
    suite
}

/// Bodies (and HTTP lines) of the messages a step sent.
fn sent(step: &Value) -> Vec<(String, String)> {
    step["transcript"]
        .as_array()
        .expect("transcript")
        .iter()
        .filter(|e| e["direction"] == "sent")
        .map(|e| {
            (
                e["body"].as_str().unwrap_or_default().to_string(),
                e["http"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

const NOT_HTTP: &str = "`http` expectations apply only over HTTP";
const ONLY_HTTP: &str = "step applies to the HTTP transport";
const ONLY_STDIO: &str = "step applies to the stdio transport";

/// The steps of pass.yaml that do not apply to a transport × era, with the exact reason.
fn expected_pass_skips(
    transport: Transport,
    era: (&str, &str, &str),
) -> BTreeMap<&'static str, String> {
    let (_, revision, kind) = era;
    let wrong_era = |selectors: &str| {
        format!("step applies to eras [{selectors}]; the connection speaks {kind} ({revision})")
    };
    let mut skips = BTreeMap::new();
    match transport {
        Transport::Stdio => {
            skips.insert("http: status and headers (HTTP only)", NOT_HTTP.to_string());
            skips.insert("transport: an HTTP-only step", ONLY_HTTP.to_string());
            // Transport is decided before era.
            skips.insert(
                "headers: a value replaces the engine's (modern)",
                ONLY_HTTP.to_string(),
            );
            skips.insert(
                "headers: null drops the engine's (legacy)",
                ONLY_HTTP.to_string(),
            );
        }
        Transport::Http => {
            skips.insert("transport: a stdio-only step", ONLY_STDIO.to_string());
        }
    }
    if kind == "legacy" {
        skips.insert("meta: a value replaces the engine's", wrong_era("modern"));
        skips.insert("meta: null removes a key", wrong_era("2026-07-28"));
        skips.insert("eras: a modern-only step", wrong_era("modern"));
        if transport == Transport::Http {
            skips.insert(
                "headers: a value replaces the engine's (modern)",
                wrong_era("modern"),
            );
        }
    } else {
        skips.insert("eras: a legacy-only step", wrong_era("legacy"));
        if transport == Transport::Http {
            skips.insert(
                "headers: null drops the engine's (legacy)",
                wrong_era("legacy"),
            );
        }
    }
    skips
}

fn check_pass(transport: Transport, target: &[String]) {
    let names = step_names(&yaml(PASS));
    let (out, result) = run_file(PASS, target);
    assert_eq!(
        result["transport"],
        if transport == Transport::Http {
            "http"
        } else {
            "stdio"
        }
    );
    let mut total_skips = 0;
    for &era in ERAS {
        let suite = checked_suite(&result, "expectations-pass", era, &names);
        let skips = expected_pass_skips(transport, era);
        for name in &names {
            let s = step(suite, name);
            let outcome = &s["outcome"];
            match skips.get(name.as_str()) {
                Some(reason) => {
                    assert_eq!(
                        outcome["status"], "skipped",
                        "{transport:?} {}: {name}: {outcome}",
                        era.0
                    );
                    assert_eq!(
                        outcome["reason"],
                        reason.as_str(),
                        "{transport:?} {}: {name}",
                        era.0
                    );
                }
                None => assert_eq!(
                    outcome["status"], "passed",
                    "{transport:?} {}: {name}: {outcome:#}",
                    era.0
                ),
            }
        }
        total_skips += skips.len();
        check_pass_transcripts(transport, era, suite);
    }
    let summary = &result["summary"];
    assert_eq!(summary["steps"], 2 * names.len());
    assert_eq!(summary["skipped"], total_skips);
    assert_eq!(summary["passed"], 2 * names.len() - total_skips);
    assert_eq!(summary["failed"], 0);
    assert_eq!(summary["errors"], 0);
    assert_eq!(summary["warnings"], 0);
    assert_eq!(out.code, 0, "every step of {PASS} passes: {out:?}");
}

/// What went over the wire for the steps whose point is what is sent.
fn check_pass_transcripts(transport: Transport, era: (&str, &str, &str), suite: &Value) {
    let (label, revision, kind) = era;
    let ctx = format!("{transport:?} {label}");

    // A sole `{{ expr }}` keeps its type: numbers go out as numbers.
    let typed = sent(step(suite, "templates: a sole {{ expr }} keeps its type"));
    assert_eq!(typed.len(), 1, "{ctx}");
    let body: Value = serde_json::from_str(&typed[0].0).expect("JSON request");
    assert_eq!(
        body["params"]["arguments"],
        serde_json::json!({"a": 2, "b": 3}),
        "{ctx}"
    );

    // Captured values feed later requests.
    let fed = sent(step(suite, "capture: a captured number feeds a tool call"));
    let body: Value = serde_json::from_str(&fed[0].0).expect("JSON request");
    assert_eq!(
        body["params"]["arguments"],
        serde_json::json!({"a": 5, "b": 10}),
        "{ctx}"
    );
    let fed = sent(step(suite, "templates: built-in era and revision"));
    let body: Value = serde_json::from_str(&fed[0].0).expect("JSON request");
    assert_eq!(
        body["params"]["arguments"]["text"],
        format!("{kind}/{revision}"),
        "{ctx}"
    );

    // A raw string body goes out byte for byte; a mapping exactly as written.
    // A step that expects only an error answered at once (-32700) sends the era's harmless
    // request just before, to bound its wait by the server's speed (docs/src/reliability.md).
    let raw = sent(step(suite, "raw: a string body is sent byte for byte"));
    let (last, before) = raw.split_last().expect("a message sent");
    assert_eq!(last.0, "this is not json", "{ctx}");
    for (body, _) in before {
        let body: Value = serde_json::from_str(body).expect("JSON request");
        assert!(
            ["ping", "server/discover"].contains(&body["method"].as_str().unwrap_or("")),
            "{ctx}: only the liveness request goes before the raw body: {body}"
        );
    }
    assert!(before.len() <= 1, "{ctx}: {raw:?}");
    let raw = sent(step(
        suite,
        "raw: a mapping body is sent as JSON, as written",
    ));
    let body: Value = serde_json::from_str(&raw[0].0).expect("JSON body");
    assert_eq!(
        body,
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": "raw-1",
            "method": "tools/list",
            "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": revision,
                "io.modelcontextprotocol/clientCapabilities": {}
            }}
        }),
        "{ctx}: nothing is added to a raw body"
    );

    // Pagination follows the cursors: 6 tools in pages of 2.
    let pages = sent(step(
        suite,
        "paginate: follows nextCursor and merges every page",
    ));
    let cursors: Vec<Value> = pages
        .iter()
        .map(|(b, _)| serde_json::from_str::<Value>(b).expect("JSON")["params"]["cursor"].clone())
        .collect();
    assert_eq!(
        cursors,
        vec![Value::Null, "offset:2".into(), "offset:4".into()],
        "{ctx}: three pages requested"
    );

    if kind == "modern" {
        let meta = sent(step(suite, "meta: a value replaces the engine's"));
        // The last message: a step expecting only an error answered at once is preceded by
        // the era's liveness request (docs/src/reliability.md).
        let body: Value = serde_json::from_str(&meta.last().expect("sent").0).expect("JSON");
        assert_eq!(
            body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "1900-01-01",
            "{ctx}"
        );
        let meta = sent(step(suite, "meta: null removes a key"));
        // The last message: a step expecting only an error answered at once is preceded by
        // the era's liveness request (docs/src/reliability.md).
        let body: Value = serde_json::from_str(&meta.last().expect("sent").0).expect("JSON");
        let keys: Vec<&String> = body["params"]["_meta"]
            .as_object()
            .expect("_meta")
            .keys()
            .collect();
        assert_eq!(
            keys,
            [
                "io.modelcontextprotocol/protocolVersion",
                "io.modelcontextprotocol/clientInfo"
            ],
            "{ctx}"
        );
    }
    if transport == Transport::Http {
        if kind == "modern" {
            let h = sent(step(
                suite,
                "headers: a value replaces the engine's (modern)",
            ));
            assert!(
                h[0].1.contains("Mcp-Method: prompts/list"),
                "{ctx}: {}",
                h[0].1
            );
            assert!(
                !h[0].1.contains("Mcp-Method: tools/list"),
                "{ctx}: {}",
                h[0].1
            );
        } else {
            let h = sent(step(suite, "headers: null drops the engine's (legacy)"));
            assert!(!h[0].1.contains("Mcp-Session-Id"), "{ctx}: {}", h[0].1);
            let normal = sent(step(suite, "eras: a legacy-only step"));
            assert!(
                normal[0].1.contains("Mcp-Session-Id: "),
                "{ctx}: {}",
                normal[0].1
            );
        }
    }
}

fn check_fail(transport: Transport, target: &[String]) {
    let doc = yaml(FAIL);
    let names = step_names(&doc);
    let (out, result) = run_file(FAIL, target);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for &era in ERAS {
        let suite = checked_suite(&result, "expectations-fail", era, &names);
        for (i, name) in names.iter().enumerate() {
            let ctx = format!("{transport:?} {}: {name}", era.0);
            let kind = name.split(':').next().expect("`<kind>: <what>`");
            let s = step(suite, name);
            let outcome = &s["outcome"];
            let status = outcome["status"].as_str().expect("status");
            if kind == "http" && transport == Transport::Stdio {
                assert_eq!(status, "skipped", "{ctx}: {outcome}");
                assert_eq!(outcome["reason"], NOT_HTTP, "{ctx}");
                *counts.entry("skipped").or_default() += 1;
                continue;
            }
            let should = doc["steps"][i]["level"] == "should";
            let want = if should { "warning" } else { "failed" };
            assert_eq!(status, want, "{ctx}: {outcome:#}");
            assert_eq!(s["level"], if should { "should" } else { "must" }, "{ctx}");
            *counts
                .entry(if should { "warnings" } else { "failed" })
                .or_default() += 1;
            let failures = outcome["failures"].as_array().expect("failures");
            assert_eq!(failures.len(), 1, "{ctx}: exactly one failure: {outcome:#}");
            let f = &failures[0];
            assert_eq!(f["kind"], kind, "{ctx}: {f:#}");
            assert!(!f["message"].as_str().unwrap_or("").is_empty(), "{ctx}");
            assert_eq!(f["file"], FAIL, "{ctx}");
            // The failure points into the step: at its name (`response`) or below it.
            let line = f["line"].as_u64().expect("line");
            let step_line = s["line"].as_u64().expect("line");
            if kind == "response" {
                assert_eq!(line, step_line, "{ctx}");
            } else {
                assert!(
                    line > step_line,
                    "{ctx}: failure at line {line}, step at {step_line}"
                );
            }
            let snippet = f["snippet"].as_str().expect("snippet");
            assert!(
                snippet.contains(&format!("{FAIL}:{line}:")),
                "{ctx}: snippet points at the failure: {snippet}"
            );
        }
    }
    let summary = &result["summary"];
    for (key, n) in [
        ("failed", counts.get("failed")),
        ("warnings", counts.get("warnings")),
        ("skipped", counts.get("skipped")),
    ] {
        assert_eq!(summary[key], *n.unwrap_or(&0), "summary {key}: {summary}");
    }
    assert_eq!(summary["passed"], 0);
    assert_eq!(summary["errors"], 0);
    assert_eq!(out.code, 1, "{FAIL} fails: {out:?}");
}

/// `within` waits for notifications sent after the reply; without it they are not seen.
#[test]
fn within_waits_for_late_notifications() {
    let file = "tests/expectations/notifications-within.yaml";
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let json_arg = json.display().to_string();
    let target = stdio_target(&["--utilities"]);
    let out = run(&[
        "run", file, "--stdio", &target, "--era", "legacy", "--json", &json_arg,
    ]);
    assert_eq!(out.code, 1, "the second step fails: {out:?}");
    let result = read_json(&json);
    let suite = &result["suites"][0];
    let waited = step(
        suite,
        "within: waits for a notification sent after the reply",
    );
    assert_eq!(waited["outcome"]["status"], "passed", "{waited:#}");
    let late = step(
        suite,
        "notifications: without within, a late one is not seen",
    );
    assert_eq!(late["outcome"]["status"], "failed", "{late:#}");
    let failure = &late["outcome"]["failures"][0];
    assert_eq!(failure["kind"], "notifications", "{failure:#}");
    assert!(
        failure["message"]
            .as_str()
            .is_some_and(|m| m.contains("received 0 `notifications/resources/updated`")),
        "{failure:#}"
    );
}

#[test]
fn passing_file_passes_over_stdio() {
    check_pass(Transport::Stdio, &stdio_args());
}

#[test]
fn passing_file_passes_over_http() {
    let server = HttpServer::start(SERVER_FLAGS);
    check_pass(Transport::Http, &http_args(&server));
}

#[test]
fn failing_file_fails_over_stdio() {
    check_fail(Transport::Stdio, &stdio_args());
}

#[test]
fn failing_file_fails_over_http() {
    let server = HttpServer::start(SERVER_FLAGS);
    check_fail(Transport::Http, &http_args(&server));
}

/// Both files keep showing every kind and predicate, and the failing file keeps one
/// expectation per step with names that say the kind.
#[test]
fn both_files_cover_every_kind_and_predicate() {
    for file in [PASS, FAIL] {
        let doc = yaml(file);
        let mut keys = BTreeSet::new();
        for step in doc["steps"].as_array().expect("steps") {
            for e in step["expect"].as_array().into_iter().flatten() {
                keys.extend(e.as_object().expect("expectation mapping").keys().cloned());
            }
        }
        for key in all_keys() {
            assert!(keys.contains(&key), "{file} shows no `{key}` expectation");
        }
    }
    let doc = yaml(FAIL);
    let mut kinds = BTreeSet::new();
    for step in doc["steps"].as_array().expect("steps") {
        let name = step["name"].as_str().expect("name");
        let kind = name.split(':').next().expect("kind");
        let expects = step["expect"].as_array().map_or(0, Vec::len);
        match kind {
            "response" | "capture" => assert_eq!(expects, 0, "{name}: no expectation"),
            _ => assert_eq!(expects, 1, "{name}: exactly one expectation"),
        }
        kinds.insert(kind.to_string());
    }
    let want: BTreeSet<String> = [
        "path",
        "schema",
        "json",
        "error",
        "isError",
        "outputSchema",
        "http",
        "noResponse",
        "notifications",
        "duration",
        "response",
        "capture",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(kinds, want, "failure kinds named by {FAIL}");
    assert!(
        Path::new(&repo_root().join("tests/expectations/tools-list.schema.json")).exists(),
        "the schemaFile the scenarios use"
    );
}

/// Failed `should` steps are warnings: reported, but the run exits 0.
#[test]
fn should_level_failures_warn_without_failing_the_run() {
    let (out, result) = run_file(SHOULD, &stdio_args());
    assert_eq!(out.code, 0, "warnings alone do not fail the run: {out:?}");
    let summary = &result["summary"];
    assert_eq!(summary["warnings"], 4, "{summary}");
    assert_eq!(summary["passed"], 2, "{summary}");
    assert_eq!(summary["failed"], 0, "{summary}");
    for suite in result["suites"].as_array().expect("suites") {
        for s in suite["steps"].as_array().expect("steps") {
            let name = s["name"].as_str().expect("name");
            if s["level"] == "should" {
                assert_eq!(s["outcome"]["status"], "warning", "{name}");
                let kind = name.split(':').next().expect("kind");
                assert_eq!(s["outcome"]["failures"][0]["kind"], kind, "{name}");
            } else {
                assert_eq!(s["outcome"]["status"], "passed", "{name}");
            }
        }
    }
    assert!(
        out.stdout.contains("WARN  expectations-should@legacy"),
        "{out:?}"
    );
    assert!(out.stdout.contains("0 failed"), "{out:?}");
}

// ---- regressions: engine bugs found by these tests, fixed in 712c168 ----

/// One scenario over one target in one era; the JSON result's only suite.
fn run_one(file: &str, target: &[String], era: &str) -> (Run, Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let json_arg = json.display().to_string();
    let mut args: Vec<&str> = vec!["run", file];
    args.extend(target.iter().map(String::as_str));
    args.extend(["--era", era, "--timeout", "5s", "--json", &json_arg]);
    let out = run(&args);
    let value = read_json(&json);
    (out, value["suites"][0].clone())
}

#[test]
fn paginated_tools_list_keeps_the_known_tools_whole() {
    let file = "tests/expectations/regression-paginate-tools-cache.yaml";
    for era in ["legacy", "2026-07-28"] {
        let (out, suite) = run_one(file, &stdio_args(), era);
        let second = &suite["steps"][1];
        assert_eq!(
            second["outcome"]["status"], "passed",
            "{era}: {:#}",
            second["outcome"]
        );
        assert_eq!(out.code, 0, "{out:?}");
    }
}

#[test]
fn paginated_requests_keep_numeric_header_overrides() {
    let server = HttpServer::start(SERVER_FLAGS);
    let file = "tests/expectations/regression-paginate-numeric-header.yaml";
    for era in ["legacy", "2026-07-28"] {
        let (_, suite) = run_one(file, &http_args(&server), era);
        let pages = sent(&suite["steps"][0]);
        assert_eq!(pages.len(), 3, "{era}: three pages of two tools");
        for (i, (_, http)) in pages.iter().enumerate() {
            assert!(http.contains("X-Trace: 7"), "{era}: page {}: {http}", i + 1);
        }
    }
}

#[test]
fn late_reply_to_a_timed_out_request_is_not_blamed_on_the_next_step() {
    let file = "tests/expectations/regression-late-reply.yaml";
    let (_, suite) = run_one(file, &stdio_args(), "legacy");
    let first = &suite["steps"][0]["outcome"];
    assert_eq!(first["status"], "error", "{first:#}");
    assert!(
        first["message"]
            .as_str()
            .unwrap_or("")
            .contains("timed out"),
        "{first:#}"
    );
    let second = &suite["steps"][1]["outcome"];
    assert_eq!(second["status"], "passed", "{second:#}");
}

/// `duration` judges the server, not the scenario: the same step passes against the clean
/// server and fails against one whose `slow` tool lags (`--defect slow-read-tool=1`), with
/// the measured time; per-step durations are in the JSON result.
#[test]
fn duration_fails_only_against_a_slow_server() {
    const LATENCY: &str = r#"
scenario: latency
steps:
  - name: answers quickly
    request: { method: tools/call, params: { name: slow, arguments: { ms: 0 } } }
    expect:
      - { duration: { lt: 700ms } }
"#;
    let (dir, path) = common::scenario_file("latency.yaml", LATENCY);
    let json = dir.path().join("result.json");
    for (flags, want) in [
        (&[][..], "passed"),
        (&["--defect", "slow-read-tool=1"][..], "failed"),
    ] {
        let target = stdio_target(flags);
        let out = run(&[
            "run",
            path.to_str().unwrap(),
            "--stdio",
            &target,
            "--json",
            json.to_str().unwrap(),
        ]);
        let result = read_json(&json);
        let step = &result["suites"][0]["steps"][0];
        assert_eq!(step["outcome"]["status"], want, "{flags:?}: {out:?}");
        let took = step["duration"].as_f64().expect("step duration");
        if want == "failed" {
            assert!(took >= 1.0, "the step's duration is its time: {step}");
            let failure = &step["outcome"]["failures"][0];
            assert_eq!(failure["kind"], "duration", "{failure}");
            assert_eq!(failure["expected"], "< 700ms", "{failure}");
            let message = failure["message"].as_str().unwrap();
            assert!(message.starts_with("the response took 1"), "{message}");
        }
    }
}

// A pass over nothing is noted in every report: tests/cases/pass-over-nothing-is-noted/.
