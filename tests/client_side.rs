//! The client's half of MCP, end to end against the example server's `--interactive`
//! tools: a scenario declares client capabilities and scripts its answers (roots,
//! elicitation, sampling); the same file passes in the legacy era (server-to-client
//! requests answered inline) and in 2026-07-28 (`input_required` rounds carried), over
//! stdio and HTTP. Data: `tests/client_side/`.

mod common;

use common::{
    HttpServer, Run, assert_contains, read_json, repo_root, run, stdio_target, step, suite,
};
use serde_json::Value;

const ERAS: [&str; 2] = ["legacy", "2026-07-28"];

fn data(name: &str) -> String {
    repo_root()
        .join("tests/client_side")
        .join(name)
        .display()
        .to_string()
}

/// `mcpspec run FILE --era legacy --era 2026-07-28 TARGET --json …` of a file of
/// `tests/client_side/`: the run and its report.
fn run_both_eras(file: &str, target: &[String], eras: &[&str]) -> (Run, Value) {
    run_path(&data(file), target, eras)
}

/// `mcpspec run PATH --era … TARGET --json …` (`target`: the target's arguments and any
/// others): the run and its report.
fn run_path(path: &str, target: &[String], eras: &[&str]) -> (Run, Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("result.json");
    let mut args: Vec<&str> = vec!["run", path, "--timeout", "10s"];
    args.extend(target.iter().map(String::as_str));
    for era in eras {
        args.extend(["--era", era]);
    }
    args.extend(["--json", json.to_str().expect("utf-8 path")]);
    let run = run(&args);
    assert!(json.exists(), "no report: {run:?}");
    let report = read_json(&json);
    (run, report)
}

fn stdio(flags: &[&str]) -> Vec<String> {
    vec!["--stdio".into(), stdio_target(flags)]
}

/// The bodies of a step's transcript entries in `direction`.
fn bodies(step: &Value, direction: &str) -> Vec<Value> {
    step["transcript"]
        .as_array()
        .expect("transcript")
        .iter()
        .filter(|e| e["direction"] == direction)
        .filter_map(|e| serde_json::from_str(e["body"].as_str()?).ok())
        .collect()
}

fn notes(step: &Value) -> String {
    step["transcript"]
        .as_array()
        .expect("transcript")
        .iter()
        .filter(|e| e["direction"] == "note")
        .filter_map(|e| e["body"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_same_scenarios_pass_in_both_eras_over_stdio_and_http() {
    for file in ["interactive.yaml", "refusals.yaml", "sampling-tools.yaml"] {
        let (run, report) = run_both_eras(file, &stdio(&["--interactive"]), &ERAS);
        assert_eq!(run.code, 0, "{file} over stdio: {run:?}");
        assert_eq!(report["suites"].as_array().map(Vec::len), Some(2), "{file}");
        let server = HttpServer::start(&["--interactive"]);
        let target = vec!["--url".to_string(), server.url.clone()];
        let (run, _) = run_both_eras(file, &target, &ERAS);
        assert_eq!(run.code, 0, "{file} over HTTP: {run:?}");
    }
}

/// Over HTTP, a legacy server may send its requests on the session's GET stream rather than
/// on the call's response stream (`--ask-on-session-stream`, as server-everything's
/// `roots/list`): mcpspec opens that stream after `initialize` when the scenario declares a
/// client, answers them there, and each step still sees what it was asked. Without the
/// stream (the server's own requests then wait out its 10 s timeout) the tools fail.
#[test]
fn a_legacy_http_session_answers_on_its_get_stream() {
    let server = HttpServer::start(&["--interactive", "--ask-on-session-stream"]);
    let target = vec!["--url".to_string(), server.url.clone()];
    let (run, report) = run_both_eras("interactive.yaml", &target, &["legacy"]);
    assert_eq!(run.code, 0, "{run:?}");
    let step = step(
        suite(&report, "interactive-tools@legacy"),
        "roots rendered from the template",
    );
    assert!(
        bodies(step, "received")
            .iter()
            .any(|b| b["method"] == "roots/list"),
        "the roots/list of the GET stream in the step's transcript: {step:#}"
    );
    assert_contains(&notes(step), "came on the session's GET stream");
    assert_contains(&notes(step), "`roots/list`: answered from the script");
}

/// A GET stream that sends something other than JSON-RPC (`--defect get-stream-garbage`)
/// fails one step with the reason, once; the stream is closed and the other steps go on.
#[test]
fn a_get_stream_that_sends_garbage_fails_a_step_clearly() {
    let server = HttpServer::start(&["--interactive", "--defect", "get-stream-garbage"]);
    let target = vec!["--url".to_string(), server.url.clone()];
    let (run, report) = run_both_eras("interactive.yaml", &target, &["legacy"]);
    assert_ne!(run.code, 0, "{run:?}");
    let steps = suite(&report, "interactive-tools@legacy")["steps"]
        .as_array()
        .expect("steps")
        .clone();
    let errors: Vec<&Value> = steps
        .iter()
        .filter(|s| s["outcome"]["status"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "one step errors: {steps:#?}");
    assert_contains(
        &errors[0]["outcome"].to_string(),
        "the session's GET stream failed: an event that is not a JSON-RPC message: this is not JSON-RPC",
    );
    let passed = steps
        .iter()
        .filter(|s| s["outcome"]["status"] == "passed")
        .count();
    assert_eq!(passed, steps.len() - 1, "{steps:#?}");
}

#[test]
fn a_modern_retry_is_a_new_request_with_the_answers_and_the_exact_state() {
    let (run, report) = run_both_eras(
        "interactive.yaml",
        &stdio(&["--interactive"]),
        &["2026-07-28"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let step = step(
        suite(&report, "interactive-tools@2026-07-28"),
        "confirm accepted with the schema's defaults",
    );
    let calls: Vec<Value> = bodies(step, "sent")
        .into_iter()
        .filter(|b| b["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 2, "the call and one retry: {calls:#?}");
    let (first, retry) = (&calls[0], &calls[1]);
    assert_ne!(first["id"], retry["id"], "a retry has a new id");
    let caps = &first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert_eq!(
        caps["elicitation"],
        serde_json::json!({"form": {}}),
        "{caps}"
    );
    assert_eq!(
        caps["roots"],
        serde_json::json!({"listChanged": true}),
        "{caps}"
    );
    assert_eq!(retry["params"]["name"], first["params"]["name"]);
    assert_eq!(retry["params"]["arguments"], first["params"]["arguments"]);
    assert_eq!(retry["params"]["requestState"], "ask_confirmation-v1");
    assert_eq!(
        retry["params"]["inputResponses"]["ask_confirmation"],
        serde_json::json!({"action": "accept", "content": {"confirm": true, "note": "looks good"}}),
        "the schema's default, then the scripted field (SEP-1034)"
    );
    assert!(
        first["params"].get("requestState").is_none(),
        "no state before one came"
    );
}

#[test]
fn a_legacy_server_request_is_answered_inline_and_noted() {
    let (run, report) = run_both_eras("interactive.yaml", &stdio(&["--interactive"]), &["legacy"]);
    assert_eq!(run.code, 0, "{run:?}");
    let step = step(
        suite(&report, "interactive-tools@legacy"),
        "sampling answered from the script",
    );
    let asked = bodies(step, "received")
        .into_iter()
        .find(|b| b["method"] == "sampling/createMessage")
        .expect("the server's sampling request in the transcript");
    assert_eq!(asked["params"]["maxTokens"], 100);
    assert_contains(
        &notes(step),
        "`sampling/createMessage`: answered from the script",
    );
}

#[test]
fn a_server_that_asks_forever_fails_at_max_rounds_with_the_rounds_shown() {
    let target = stdio(&["--interactive", "--defect", "asks-forever"]);
    let (run, report) = run_both_eras("forever.yaml", &target, &["2026-07-28"]);
    assert_ne!(run.code, 0, "{run:?}");
    let step = step(suite(&report, "asks-forever@2026-07-28"), "confirm");
    let outcome = step["outcome"].to_string();
    assert_contains(&outcome, "more than maxRounds (3)");
    assert_contains(&outcome, "round 4: [ask_confirmation]");
    let calls = bodies(step, "sent")
        .into_iter()
        .filter(|b| b["method"] == "tools/call")
        .count();
    assert_eq!(calls, 4, "the call and maxRounds retries, no more");
}

#[test]
fn declaring_a_capability_without_an_answer_is_a_validate_error_at_its_position() {
    let (_dir, path) = common::scenario_file(
        "declared.yaml",
        "scenario: declared\nclient:\n  capabilities:\n    roots: {}\n    sampling: {}\n  roots:\n    - uri: file:///tmp\nsteps:\n  - name: list\n    request: {method: tools/list}\n",
    );
    let path = path.display().to_string();
    let out = run(&["validate", &path]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_contains(
        &out.all_output(),
        "the client declares `sampling` but has no answer for it",
    );
    assert_contains(&out.all_output(), "declared.yaml:5:15");
}

#[test]
fn a_model_profile_answer_with_scripted_fields_is_a_validate_error_at_its_position() {
    let (_dir, path) = common::scenario_file(
        "profiled.yaml",
        "scenario: profiled\nclient:\n  capabilities:\n    sampling: {}\n  sampling:\n    - profile: local\n      toolUse: {name: get_weather}\nsteps:\n  - name: list\n    request: {method: tools/list}\n",
    );
    let path = path.display().to_string();
    let out = run(&["validate", &path]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_contains(
        &out.all_output(),
        "a sampling answer from a model `profile` takes no `toolUse`",
    );
    assert_contains(&out.all_output(), "profiled.yaml:6:7");
}

#[test]
fn without_a_client_nothing_is_declared_and_every_ask_is_refused() {
    let (_dir, path) = common::scenario_file(
        "plain.yaml",
        "scenario: plain\nsteps:\n  - name: confirm\n    request:\n      method: tools/call\n      params: {name: ask_confirmation, arguments: {action: deploy}}\n    expect:\n      - asked: elicitation/create\n        count: 1\n",
    );
    let path = path.display().to_string();
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("r.json");
    let target = stdio_target(&["--interactive", "--defect", "asks-undeclared"]);
    let out = run(&[
        "run",
        &path,
        "--era",
        "legacy",
        "--stdio",
        &target,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let report = read_json(&json);
    let step = step(suite(&report, "plain@legacy"), "confirm");
    assert_contains(
        &notes(step),
        "answered -32601 (mcpspec declares no client capabilities and does not serve `elicitation/create`)",
    );
}

#[test]
fn the_project_file_declares_the_client_of_a_scenario_without_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = format!(
        "targets:\n  example:\n    stdio: \"{}\"\nclient:\n  capabilities:\n    roots: {{}}\n  roots:\n    - uri: file:///from/config\n",
        stdio_target(&["--interactive"])
    );
    std::fs::write(dir.path().join("mcpspec.yaml"), config).unwrap();
    std::fs::write(
        dir.path().join("roots.yaml"),
        "scenario: roots\nsteps:\n  - name: roots\n    request:\n      method: tools/call\n      params: {name: client_roots, arguments: {}}\n    expect:\n      - path: \"$.content[0].text\"\n        equals: \"roots: file:///from/config\"\n",
    )
    .unwrap();
    for era in ERAS {
        let out = common::run_in(dir.path(), &["run", "roots.yaml", "--era", era], &[]);
        assert_eq!(out.code, 0, "{era}: {out:?}");
    }
}

#[test]
fn a_pack_declares_the_client_of_its_scenarios() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("pack.yaml"),
        "name: asks\nversion: 1.0.0\nclient:\n  capabilities:\n    sampling: {}\n  sampling:\n    - text: from the pack\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("summary.yaml"),
        "scenario: summary\nsteps:\n  - name: summary\n    request:\n      method: tools/call\n      params: {name: summarize, arguments: {text: x}}\n    expect:\n      - path: \"$.content[0].text\"\n        equals: \"summary by mcpspec-scripted: from the pack\"\n",
    )
    .unwrap();
    let pack = dir.path().display().to_string();
    let target = stdio_target(&["--interactive"]);
    for era in ERAS {
        let out = run(&["run", &pack, "--era", era, "--stdio", &target]);
        assert_eq!(out.code, 0, "{era}: {out:?}");
    }
}

#[test]
fn max_rounds_out_of_range_is_a_validate_error() {
    let (_dir, path) = common::scenario_file(
        "rounds.yaml",
        "scenario: rounds\nclient:\n  maxRounds: 0\nsteps:\n  - name: list\n    request: {method: tools/list}\n",
    );
    let out = run(&["validate", &path.display().to_string()]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_contains(&out.all_output(), "`maxRounds` is 1 to 64");
    assert_contains(&out.all_output(), "rounds.yaml:3:14");
}

#[test]
fn an_oversized_elicitation_schema_stops_at_the_message_size_limit() {
    let flags = ["--interactive", "--defect", "asks-huge-schema"];
    let server = HttpServer::start(&flags);
    let targets = [stdio(&flags), vec!["--url".to_string(), server.url.clone()]];
    for target in targets {
        let started = std::time::Instant::now();
        let dir = tempfile::tempdir().expect("tempdir");
        let json = dir.path().join("r.json");
        let path = data("interactive.yaml");
        let mut args: Vec<&str> = vec!["run", &path, "--max-message-size", "65536"];
        args.extend(target.iter().map(String::as_str));
        args.extend(["--era", "legacy", "--era", "2026-07-28"]);
        args.extend(["--json", json.to_str().unwrap()]);
        let out = run(&args);
        assert_ne!(out.code, 0, "{target:?}: {out:?}");
        assert_contains(&out.stdout, "larger than 65536 bytes");
        assert!(json.exists(), "{target:?}: the report is written");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{target:?}: bounded"
        );
    }
}

#[test]
fn the_project_file_client_is_validated_at_its_position() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("mcpspec.yaml"),
        "paths: [s.yaml]\nclient:\n  capabilities:\n    elicitation: {}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("s.yaml"),
        "scenario: s\nsteps:\n  - name: list\n    request: {method: tools/list}\n",
    )
    .unwrap();
    let out = common::run_in(dir.path(), &["validate"], &[]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_contains(
        &out.all_output(),
        "the client declares `elicitation` but has no answer for it",
    );
    assert_contains(&out.all_output(), "mcpspec.yaml:4:18");
}

#[test]
fn asked_and_rounds_fail_with_what_was_seen() {
    let (run, report) = run_both_eras("asked-fails.yaml", &stdio(&["--interactive"]), &ERAS);
    assert_ne!(run.code, 0, "{run:?}");
    for (era, rounds) in [("legacy", 0), ("2026-07-28", 1)] {
        let suite = suite(&report, &format!("asked-fails@{era}"));
        for s in suite["steps"].as_array().expect("steps") {
            let name = s["name"].as_str().expect("name");
            assert_eq!(s["outcome"]["status"], "failed", "{era} {name}: {s:#}");
            let failure = &s["outcome"]["failures"][0];
            let kind = name.split(':').next().expect("kind");
            assert_eq!(failure["kind"], kind, "{era} {name}: {failure:#}");
        }
        let rounds_failure = &step(suite, "rounds: more than there were")["outcome"]["failures"][0];
        assert_eq!(rounds_failure["actual"], rounds.to_string(), "{era}");
        let none = &step(suite, "asked: nothing was asked of sampling")["outcome"]["failures"][0];
        assert_contains(
            none["message"].as_str().unwrap_or_default(),
            "received 0 `sampling/createMessage` server request(s)",
        );
    }
}

#[test]
fn the_step_timeout_bounds_every_round() {
    let (_dir, path) = common::scenario_file(
        "slow-rounds.yaml",
        "scenario: slow-rounds\neras: [2026-07-28]\nclient:\n  capabilities: {elicitation: {}}\n  elicitation: [{action: accept}]\n  maxRounds: 64\nsteps:\n  - name: confirm\n    timeout: 2s\n    request:\n      method: tools/call\n      params: {name: ask_confirmation, arguments: {action: deploy}}\n",
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("r.json");
    let target = stdio_target(&["--interactive", "--defect", "asks-forever"]);
    let started = std::time::Instant::now();
    let out = run(&[
        "run",
        &path.display().to_string(),
        "--era",
        "2026-07-28",
        "--stdio",
        &target,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_ne!(out.code, 0, "{out:?}");
    // 64 rounds of 50 ms take 3.2 s at least; the step's 2 s stops them before.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "bounded: {out:?}"
    );
    let report = read_json(&json);
    let step = step(suite(&report, "slow-rounds@2026-07-28"), "confirm");
    assert_eq!(step["outcome"]["status"], "error", "{step:#}");
    assert_contains(
        &step["outcome"].to_string(),
        "the step's timeout (2s) ran out during the `input_required` rounds: round 1: [ask_confirmation]",
    );
    let calls = bodies(step, "sent")
        .into_iter()
        .filter(|b| b["method"] == "tools/call")
        .count();
    assert!(
        calls < 64,
        "the rounds stop at the step's timeout: {calls} calls"
    );
}

/// In the modern era a scenario with a `client:` shares the era's warm process (its
/// capabilities travel with each request), and the scenario after it on that process
/// declares nothing and answers nothing: the client goes with the scenario, not the process.
#[test]
fn a_modern_client_shares_the_warm_process_and_leaves_nothing_to_the_next_scenario() {
    let dir = tempfile::tempdir().expect("tempdir");
    let call = "    request:\n      method: tools/call\n      params: {name: ask_confirmation, arguments: {action: deploy}}\n";
    std::fs::write(
        dir.path().join("a-client.yaml"),
        format!(
            "scenario: a-client\nfresh: false\nclient:\n  capabilities: {{elicitation: {{form: true}}}}\n  elicitation:\n    - action: accept\n      content: {{note: ok}}\nsteps:\n  - name: confirm\n{call}    expect:\n      - isError: false\n      - rounds: 1\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b-plain.yaml"),
        format!("scenario: b-plain\nfresh: false\nsteps:\n  - name: confirm\n{call}"),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let target = stdio_target(&["--interactive", "--defect", "asks-undeclared"]);
    let out = run(&[
        "run",
        dir.path().to_str().unwrap(),
        "--era",
        "2026-07-28",
        "--jobs",
        "1",
        "--stdio",
        &target,
        "--json",
        json.to_str().unwrap(),
    ]);
    let report = read_json(&json);
    assert_eq!(
        report["servers"]["started"], 1,
        "one warm process for both: {out:?}"
    );
    let caps = |scenario: &str| {
        let step = step(suite(&report, &format!("{scenario}@2026-07-28")), "confirm");
        let first = bodies(step, "sent")
            .into_iter()
            .find(|b| b["method"] == "tools/call")
            .expect("the call was sent");
        first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].clone()
    };
    assert_eq!(
        caps("a-client")["elicitation"],
        serde_json::json!({"form": {}})
    );
    assert!(
        caps("b-plain").get("elicitation").is_none(),
        "the next scenario declares nothing: {}",
        caps("b-plain")
    );
    let b = step(suite(&report, "b-plain@2026-07-28"), "confirm");
    assert!(
        !serde_json::to_string(b).unwrap().contains("\"accept\""),
        "the next scenario answers nothing: {b}"
    );
}

/// The elicitation scenarios of both conformance packs pass against the clean
/// `--interactive` server, every check judged (none skipped): the tools that ask are there.
/// Their seeded defects fail them (tests/defects/conformance.tsv).
#[test]
fn the_elicitation_checks_pass_against_the_clean_interactive_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("r.json");
    let target = stdio_target(&["--interactive"]);
    let out = run(&[
        "run",
        "conformance",
        "--filter",
        "modern-elicitation",
        "--filter",
        "legacy-elicitation",
        "--era",
        "legacy",
        "--era",
        "2026-07-28",
        "--timeout",
        "10s",
        "--stdio",
        &target,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let report = read_json(&json);
    let modern = suite(&report, "modern-elicitation@2026-07-28");
    for check in [
        "elicitation_schema_restricted",
        "declined_elicitation_answered",
        "extra_responses_ignored",
        "request_state_tampered_refused",
    ] {
        assert_eq!(
            step(modern, check)["outcome"]["status"],
            "passed",
            "{check}: {out:?}"
        );
    }
    let legacy = suite(&report, "legacy-elicitation@legacy");
    for check in [
        "elicitation_schema_restricted",
        "declined_elicitation_answered",
    ] {
        assert_eq!(
            step(legacy, check)["outcome"]["status"],
            "passed",
            "{check}: {out:?}"
        );
    }
}

/// `capture: {asked, path}` takes the first match among the requests the server asked, in
/// both eras; one that matches nothing fails the step with what was asked shown.
#[test]
fn a_capture_from_what_was_asked_fails_with_the_requests_shown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("capture.yaml");
    std::fs::write(
        &file,
        r#"scenario: capture-misses
client:
  capabilities:
    elicitation: {}
  elicitation:
    - action: accept
steps:
  - name: captures
    request:
      method: tools/call
      params: {name: ask_confirmation, arguments: {action: deploy}}
    capture:
      question: {asked: elicitation/create, path: "$.params.message"}
      nothing: {asked: elicitation/create, path: "$.params.noSuchField"}
"#,
    )
    .unwrap();
    let target = stdio(&["--interactive"]);
    let (out, report) = run_path(file.to_str().unwrap(), &target, &ERAS);
    assert_eq!(out.code, 1, "{out:?}");
    for era in ERAS {
        let s = step(suite(&report, &format!("capture-misses@{era}")), "captures");
        let failure = &s["outcome"]["failures"][0];
        assert_contains(
            failure["message"].as_str().unwrap(),
            "capture `nothing`: `$.params.noSuchField` matched nothing",
        );
        assert_contains(failure["actual"].as_str().unwrap(), "Confirm deploy?");
        assert_contains(
            failure["expected"].as_str().unwrap(),
            "in the `elicitation/create` requests the server asked",
        );
    }
}

/// A `roots` step replaces the client's roots for the rest of the scenario: the next
/// `client_roots` call gets the new list in both eras, over stdio and HTTP. Legacy, with
/// `listChanged` declared, the step sends `notifications/roots/list_changed`; 2026-07-28
/// has no notification, the next roots input request carries the list.
#[test]
fn a_roots_step_changes_what_later_roots_requests_get() {
    let (run, report) = run_both_eras("roots-change.yaml", &stdio(&["--interactive"]), &ERAS);
    assert_eq!(run.code, 0, "{run:?}");
    let legacy = step(suite(&report, "roots-change@legacy"), "change the roots");
    let sent = bodies(legacy, "sent");
    assert!(
        sent.iter()
            .any(|b| b["method"] == "notifications/roots/list_changed" && b.get("id").is_none()),
        "the legacy step notifies: {sent:?}"
    );
    assert_contains(
        &notes(legacy),
        "the client's roots are now [file:///work/demo/src, file:///tmp]",
    );
    let modern = step(
        suite(&report, "roots-change@2026-07-28"),
        "change the roots",
    );
    assert!(
        bodies(modern, "sent").is_empty(),
        "nothing is sent in 2026-07-28: {modern}"
    );
    assert_contains(
        &notes(modern),
        "the next roots input request is answered with them",
    );
    let server = HttpServer::start(&["--interactive"]);
    let target = vec!["--url".to_string(), server.url.clone()];
    let (run, _) = run_both_eras("roots-change.yaml", &target, &ERAS);
    assert_eq!(run.code, 0, "over HTTP: {run:?}");
}

/// Without `listChanged` declared, a legacy `roots` step sends nothing and says so; the
/// later `roots/list` still gets the new list.
#[test]
fn without_list_changed_the_roots_change_but_nothing_is_notified() {
    let text = std::fs::read_to_string(data("roots-change.yaml"))
        .unwrap()
        .replace("{listChanged: true}", "{}");
    let (_dir, path) = common::scenario_file("quiet.yaml", &text);
    let target = stdio(&["--interactive"]);
    let (out, report) = run_path(path.to_str().unwrap(), &target, &["legacy"]);
    assert_eq!(out.code, 0, "{out:?}");
    let change = step(suite(&report, "roots-change@legacy"), "change the roots");
    assert!(
        bodies(change, "sent").is_empty(),
        "no notification: {change}"
    );
    assert_contains(
        &notes(change),
        "no `notifications/roots/list_changed` sent: the client does not declare `roots.listChanged`",
    );
}

/// A `roots` step needs a client that declares `roots`: `validate` points at the step
/// when the scenario's client does not, and `run` when no client declares one at all.
#[test]
fn a_roots_step_without_declared_roots_is_invalid_at_its_position() {
    let steps = "steps:\n  - name: change\n    roots:\n      - uri: file:///tmp\n";
    let (_dir, path) = common::scenario_file(
        "undeclared.yaml",
        &format!(
            "scenario: undeclared\nclient:\n  capabilities: {{elicitation: {{}}}}\n  elicitation: [{{action: decline}}]\n{steps}"
        ),
    );
    let path = path.display().to_string();
    let out = run(&["validate", &path]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_contains(
        &out.all_output(),
        "a `roots` step, but the scenario's client does not declare `roots`",
    );
    assert_contains(&out.all_output(), "undeclared.yaml:6:11");
    let (_dir, path) =
        common::scenario_file("no-client.yaml", &format!("scenario: no-client\n{steps}"));
    let path = path.display().to_string();
    let target = stdio_target(&["--interactive"]);
    let out = run(&["run", &path, "--stdio", &target]);
    assert_eq!(out.code, 2, "{out:?}");
    assert_contains(
        &out.all_output(),
        "a `roots` step, but the scenario declares no client",
    );
    assert_contains(&out.all_output(), "no-client.yaml:3:11");
}

/// The change is the scenario's own: the next scenario on the same warm 2026-07-28
/// process answers with its own roots.
#[test]
fn a_roots_change_ends_with_its_scenario() {
    let dir = tempfile::tempdir().expect("tempdir");
    let call = "    request:\n      method: tools/call\n      params: {name: client_roots, arguments: {}}\n";
    let client = |uri: &str| {
        format!("client:\n  capabilities: {{roots: {{}}}}\n  roots: [{{uri: \"{uri}\"}}]\n")
    };
    std::fs::write(
        dir.path().join("a-changes.yaml"),
        format!(
            "scenario: a-changes\nfresh: false\n{}steps:\n  - name: change\n    roots: [{{uri: file:///changed}}]\n  - name: list\n{call}    expect:\n      - path: \"$.content[0].text\"\n        equals: \"roots: file:///changed\"\n",
            client("file:///a")
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b-own.yaml"),
        format!(
            "scenario: b-own\nfresh: false\n{}steps:\n  - name: list\n{call}    expect:\n      - path: \"$.content[0].text\"\n        equals: \"roots: file:///b\"\n",
            client("file:///b")
        ),
    )
    .unwrap();
    let mut target = stdio(&["--interactive"]);
    target.extend(["--jobs".to_string(), "1".to_string()]);
    let (out, report) = run_path(dir.path().to_str().unwrap(), &target, &["2026-07-28"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        report["servers"]["started"], 1,
        "one warm process for both: {out:?}"
    );
}

/// A 2026-07-28 `input_required` with neither `inputRequests` nor `requestState` (the
/// `--utilities` server's `confirm` under `input-required-empty`) errors the step at once,
/// saying so, instead of retrying it up to `maxRounds`.
#[test]
fn an_input_required_with_neither_field_errors_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty.yaml");
    std::fs::write(
        &file,
        "scenario: empty-ir\nclient:\n  capabilities: {elicitation: {form: true}}\n  elicitation: [{action: accept}]\nsteps:\n  - name: confirm\n    request: {method: tools/call, params: {name: confirm, arguments: {action: deploy}}}\n",
    )
    .unwrap();
    let target = stdio_target(&["--utilities", "--defect", "input-required-empty"]);
    let out = run(&[
        "run",
        file.to_str().unwrap(),
        "--stdio",
        &target,
        "--era",
        "2026-07-28",
    ]);
    assert_ne!(out.code, 0, "{out:?}");
    assert_contains(
        &out.all_output(),
        "with neither `inputRequests` nor `requestState` (at least one MUST be present), so there is nothing to answer or echo: round 1: []",
    );
}
