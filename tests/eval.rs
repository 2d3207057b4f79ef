//! `mcpspec eval run` end to end: real processes on 127.0.0.1 — the example MCP server
//! (stdio), the project's local model server (`examples/model-server`, OpenAI and
//! Anthropic shapes) — and the eval set under `tests/eval/`.
#![allow(
    unsafe_code,
    reason = "a signal sent to the child under test (libc::kill)"
)]
// Unix only: interrupts are sent as SIGINT (libc::kill).
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::model_server::ModelServer;
use common::{assert_valid_junit, read_json, repo_root, run, run_in, stdio_target};
use serde_json::Value;

const SET: &str = "tests/eval/example.eval.yaml";

/// `eval run` of `set` against the example server with `changes`, through `model`.
fn eval(
    dir: &Path,
    set: &str,
    changes: &[&str],
    model: &ModelServer,
    extra: &[&str],
) -> (common::Run, PathBuf) {
    let json = dir.join(format!("results-{}.json", changes.join("-")));
    let mut flags = Vec::new();
    for c in changes {
        flags.extend(["--change", c]);
    }
    let target = stdio_target(&flags);
    let r = common::model_server::eval_run(set, &target, model, &json, extra);
    (r, json)
}

fn task<'a>(results: &'a Value, id: &str) -> &'a Value {
    results["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("task {id} in {results:#}"))
}

fn successes(t: &Value) -> usize {
    t["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["success"] == true)
        .count()
}

fn called(t: &Value) -> Vec<String> {
    t["trials"][0]["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn base_run_passes_and_records_everything() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&[]);
    let junit = dir.path().join("eval.xml");
    let (r, json) = eval(
        dir.path(),
        SET,
        &[],
        &model,
        &["--junit", junit.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let v = read_json(&json);
    assert_eq!(v["format"], "mcpspec-eval-results/1");
    assert_eq!(v["partial"], false);
    assert_eq!(v["set"]["name"], "example-server");
    assert_eq!(v["model"]["api"], "openai");
    assert_eq!(v["model"]["temperature"], 0.0);
    assert_eq!(v["model"]["seed"], 7);
    assert_eq!(v["server"]["name"], "mcpspec-example-server");
    assert_eq!(v["server"]["era"], "modern");
    assert_eq!(v["server"]["toolsHash"].as_str().unwrap().len(), 64);
    let weather = task(&v, "weather-boston");
    assert_eq!(successes(weather), 2, "{weather:#}");
    let trial = &weather["trials"][0];
    assert_eq!(trial["toolCalls"][0]["name"], "get_weather");
    assert_eq!(trial["toolCalls"][0]["arguments"]["city"], "Boston");
    assert_eq!(trial["turns"], 2);
    assert!(trial["inputTokens"].as_u64().unwrap() > 0);
    assert!(trial["outputTokens"].as_u64().unwrap() > 0);
    assert!(trial["finalAnswer"].as_str().unwrap().contains("Boston"));
    let add = task(&v, "add-numbers");
    assert_eq!(successes(add), 2, "{add:#}");
    let greeting = task(&v, "greeting-no-tool");
    assert_eq!(greeting["noToolCall"], true);
    assert!(called(greeting).is_empty());
    assert_eq!(successes(greeting), 2);
    // JUnit: a testcase per task, the rates as properties; valid against the XSD.
    assert_valid_junit(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 4, "{xml}");
    assert!(xml.contains(r#"name="successRate" value="1.000""#), "{xml}");
    assert!(
        r.stdout.contains("4 task(s), 8/8 trial(s) succeeded"),
        "{r:?}"
    );
}

#[test]
fn anthropic_profile_runs_the_same_set() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&[]);
    let (r, json) = eval(
        dir.path(),
        SET,
        &[],
        &model,
        &["--model", "local-anthropic"],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let v = read_json(&json);
    assert_eq!(v["model"]["api"], "anthropic");
    assert_eq!(successes(task(&v, "weather-boston")), 2);
    assert_eq!(
        task(&v, "echo-text")["trials"][0]["toolCalls"][0]["arguments"]["text"],
        "hello world"
    );
}

/// The reference pipeline's heart: a description edit makes the model pick another tool,
/// an added tool is called where no tool is needed, an unchanged server runs clean.
#[test]
fn description_change_and_added_tool_change_the_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&[]);
    let (base, base_json) = eval(dir.path(), SET, &[], &model, &[]);
    assert_eq!(base.code, 0, "{base:?}");
    let base = read_json(&base_json);

    let (same, same_json) = eval(dir.path(), SET, &["add-optional-param"], &model, &[]);
    assert_eq!(same.code, 0, "a change no task depends on: {same:?}");
    let same = read_json(&same_json);
    assert_ne!(same["server"]["toolsHash"], base["server"]["toolsHash"]);

    let (drift, drift_json) = eval(dir.path(), SET, &["echo-claims-weather"], &model, &[]);
    assert_eq!(drift.code, 1, "{drift:?}");
    let drift = read_json(&drift_json);
    let weather = task(&drift, "weather-boston");
    assert_eq!(successes(weather), 0);
    assert_eq!(called(weather), ["echo"], "the policy now picks echo");
    assert_eq!(
        weather["trials"][0]["expectations"][0]["message"],
        "called: echo"
    );
    assert_eq!(successes(task(&drift, "add-numbers")), 2, "unaffected");

    let (added, added_json) = eval(dir.path(), SET, &["add-greeting-tool"], &model, &[]);
    assert_eq!(added.code, 1, "{added:?}");
    let added = read_json(&added_json);
    let greeting = task(&added, "greeting-no-tool");
    assert_eq!(called(greeting), ["send_greeting"]);
    assert_eq!(successes(greeting), 0);
    assert!(
        added.to_string().contains("noToolCall"),
        "the failed expectation is named"
    );
    assert_eq!(successes(task(&added, "weather-boston")), 2);

    // The paired comparison closes the loop: an unrelated change compares clean (with a
    // warning that the tool list differs), the description edit and the wrongly picked new
    // tool are regressions of their tasks.
    let compare = |candidate: &Path| {
        run(&[
            "eval",
            "compare",
            base_json.to_str().unwrap(),
            candidate.to_str().unwrap(),
        ])
    };
    let clean = compare(&same_json);
    assert_eq!(clean.code, 0, "{clean:?}");
    let drifted = compare(&drift_json);
    assert_eq!(drifted.code, 1, "{drifted:?}");
    assert!(
        drifted.all_output().contains("weather-boston"),
        "{drifted:?}"
    );
    let grown = compare(&added_json);
    assert_eq!(grown.code, 1, "{grown:?}");
    assert!(grown.all_output().contains("greeting-no-tool"), "{grown:?}");
}

fn snapshot(dir: &Path, name: &str, changes: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut flags = Vec::new();
    for c in changes {
        flags.extend(["--change", c]);
    }
    let target = stdio_target(&flags);
    let r = run(&[
        "snapshot",
        "--stdio",
        &target,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    out
}

fn diff_file(dir: &Path, base: &Path, changes: &[&str]) -> PathBuf {
    let cand = snapshot(dir, &changes.join("-"), changes);
    let r = run(&[
        "diff",
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let path = dir.join(format!("diff-{}.json", changes.join("-")));
    std::fs::write(&path, &r.stdout).unwrap();
    path
}

fn ids(v: &Value) -> Vec<String> {
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn affected_by_selects_the_tasks_a_diff_puts_at_risk() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&[]);
    let base = snapshot(dir.path(), "base", &[]);
    // echo's description changed, and now pulls the weather prompts. The default (wide)
    // scope keeps every tool-calling and noToolCall task, so the stolen `weather-boston`
    // runs and fails, as a full run would show.
    let diff = diff_file(dir.path(), &base, &["echo-claims-weather"]);
    let (r, json) = eval(
        dir.path(),
        SET,
        &["echo-claims-weather"],
        &model,
        &["--affected-by", diff.to_str().unwrap()],
    );
    let v = read_json(&json);
    assert_eq!(
        ids(&v),
        [
            "weather-boston",
            "add-numbers",
            "echo-text",
            "greeting-no-tool"
        ],
        "{r:?}"
    );
    assert_eq!(v["set"]["affectedBy"], diff.to_str().unwrap());
    assert!(r.stderr.contains("4 of 4 task(s) selected"), "{r:?}");
    assert!(
        r.stderr
            .contains("every tool-calling and noToolCall task is at risk"),
        "the console says why: {r:?}"
    );
    assert_eq!(r.code, 1, "the stolen task fails: {r:?}");
    assert_eq!(successes(task(&v, "weather-boston")), 0);
    // `--affected-scope direct`: only the task that names the changed tool.
    let (r, json) = eval(
        dir.path(),
        SET,
        &["echo-claims-weather"],
        &model,
        &[
            "--affected-by",
            diff.to_str().unwrap(),
            "--affected-scope",
            "direct",
        ],
    );
    assert_eq!(ids(&read_json(&json)), ["echo-text"], "{r:?}");
    assert!(r.stderr.contains("1 of 4 task(s) selected"), "{r:?}");
    // A tool was added: (direct) every noToolCall task.
    let diff = diff_file(dir.path(), &base, &["add-greeting-tool"]);
    let (r, json) = eval(
        dir.path(),
        SET,
        &["add-greeting-tool"],
        &model,
        &[
            "--affected-by",
            diff.to_str().unwrap(),
            "--affected-scope",
            "direct",
        ],
    );
    assert_eq!(ids(&read_json(&json)), ["greeting-no-tool"], "{r:?}");
    assert_eq!(r.code, 1, "the selected task regressed: {r:?}");
    // A new optional parameter of get_weather: no description, title or instructions
    // changed, so only the task that uses get_weather, in either scope.
    let diff = diff_file(dir.path(), &base, &["add-optional-param"]);
    let (r, json) = eval(
        dir.path(),
        SET,
        &["add-optional-param"],
        &model,
        &["--affected-by", diff.to_str().unwrap()],
    );
    assert_eq!(ids(&read_json(&json)), ["weather-boston"], "{r:?}");
    assert!(!r.stderr.contains("every tool-calling"), "{r:?}");
    // Not a diff: invalid input.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"nope\": 1}").unwrap();
    let (r, _) = eval(
        dir.path(),
        SET,
        &[],
        &model,
        &["--affected-by", bad.to_str().unwrap()],
    );
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("no `changes` list"), "{r:?}");
}

fn write_set(dir: &Path, yaml: &str) -> String {
    let path = dir.join("faults.eval.yaml");
    std::fs::write(&path, yaml).unwrap();
    path.display().to_string()
}

const FAULT_SET: &str = r#"
evalset: faults
models:
  local: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy, maxTurns: 3 }
  keyed: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy, key: "env:MCPSPEC_EVALRUN_TEST_KEY" }
  azure: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy, key: "env:MCPSPEC_EVALRUN_TEST_KEY", keyHeader: api-key }
tasks:
  - id: weather
    prompt: What is the current weather in Boston?
    expect: [ { calls: get_weather } ]
  - id: add
    prompt: Add the numbers 2 and 3 and give me the sum.
    expect: [ { calls: add } ]
"#;

#[test]
fn a_bad_model_reply_fails_that_trial_and_the_run_continues() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), FAULT_SET);
    for (fault, reason) in [
        (
            "malformed-args:weather",
            "malformed tool-call arguments for `get_weather`",
        ),
        ("unknown-tool:weather", "unknown tool `no_such_tool`"),
        ("loop:weather", "no final answer after 3 model turns"),
    ] {
        let model = ModelServer::start(&["--fault", fault]);
        let (r, json) = eval(dir.path(), &set, &[], &model, &[]);
        assert_eq!(r.code, 1, "{fault}: {r:?}");
        let v = read_json(&json);
        let weather = &task(&v, "weather")["trials"][0];
        assert_eq!(weather["success"], false, "{fault}");
        assert!(
            weather["error"].as_str().unwrap().contains(reason),
            "{fault}: {weather:#}"
        );
        assert_eq!(successes(task(&v, "add")), 1, "{fault}: the run went on");
        if fault != "loop:weather" {
            // Malformed arguments and an unknown tool alike: one failed call.
            assert_eq!(weather["toolErrors"], 1, "{fault}: {weather:#}");
        }
        assert!(
            r.stdout.contains(reason),
            "{fault}: console names the reason: {r:?}"
        );
    }
}

#[test]
fn rate_limits_back_off_and_honour_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), FAULT_SET);
    let model = ModelServer::start(&["--fault", "rate-limit"]);
    let started = Instant::now();
    let (r, json) = eval(dir.path(), &set, &[], &model, &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = read_json(&json);
    assert_eq!(successes(task(&v, "weather")), 1);
    assert_eq!(
        task(&v, "weather")["trials"][0]["retries"],
        2,
        "the retries are recorded: {v:#}"
    );
    // Two 429s, each with Retry-After: 1.
    assert!(
        started.elapsed() >= Duration::from_millis(1900),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_server_error_fails_the_trial_after_retries() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), FAULT_SET);
    let model = ModelServer::start(&["--fault", "server-error:weather"]);
    let (r, json) = eval(dir.path(), &set, &[], &model, &[]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = read_json(&json);
    let error = task(&v, "weather")["trials"][0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(error.contains("HTTP 500 after 5 attempts"), "{error}");
    assert_eq!(successes(task(&v, "add")), 1);
}

#[test]
fn missing_or_refused_key_exits_3_and_the_key_never_shows() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), FAULT_SET);
    let model = ModelServer::start(&["--api-key", "sk-evalrun-secret-1234567890"]);
    let (r, _) = eval(dir.path(), &set, &[], &model, &["--model", "keyed"]);
    assert_eq!(r.code, 3, "{r:?}");
    assert!(r.stderr.contains("MCPSPEC_EVALRUN_TEST_KEY"), "{r:?}");
    // A wrong key: the API's 401 is exit 3 too.
    let target = stdio_target(&[]);
    let wrong = run_in(
        &repo_root(),
        &[
            "eval",
            "run",
            &set,
            "--stdio",
            &target,
            "--base-url",
            &model.url,
            "--model",
            "keyed",
        ],
        &[("MCPSPEC_EVALRUN_TEST_KEY", "sk-wrong-key-0987654321")],
    );
    assert_eq!(wrong.code, 3, "{wrong:?}");
    assert!(!wrong.all_output().contains("sk-wrong-key-0987654321"));
    assert!(
        wrong
            .stderr
            .contains("refused the key from the environment variable MCPSPEC_EVALRUN_TEST_KEY"),
        "the 401 names where the key came from: {wrong:?}"
    );
    // No key configured at all: not "refused the key", but that one is needed; the
    // results of what ran are still written, marked aborted.
    let aborted_junit = dir.path().join("aborted.xml");
    let (none, aborted_json) = eval(
        dir.path(),
        &set,
        &[],
        &model,
        &["--junit", aborted_junit.to_str().unwrap()],
    );
    assert_eq!(none.code, 3, "{none:?}");
    assert!(
        none.stderr.contains("configures none") && !none.stderr.contains("refused the key"),
        "{none:?}"
    );
    let v = read_json(&aborted_json);
    assert_eq!(v["partial"], true, "{v:#}");
    assert!(v["aborted"].as_str().unwrap().contains("HTTP 401"), "{v:#}");
    let junit_text = std::fs::read_to_string(&aborted_junit).unwrap();
    assert!(junit_text.contains("type=\"aborted\""), "{junit_text}");
    assert_valid_junit(&aborted_junit);
    // The right key: the run passes, and the key is in no output.
    let json = dir.path().join("keyed.json");
    let junit = dir.path().join("keyed.xml");
    let ok = run_in(
        &repo_root(),
        &[
            "eval",
            "run",
            &set,
            "--stdio",
            &target,
            "--base-url",
            &model.url,
            "--model",
            "keyed",
            "--json",
            json.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
        &[("MCPSPEC_EVALRUN_TEST_KEY", "sk-evalrun-secret-1234567890")],
    );
    assert_eq!(ok.code, 0, "{ok:?}");
    for text in [
        ok.all_output(),
        std::fs::read_to_string(&json).unwrap(),
        std::fs::read_to_string(&junit).unwrap(),
    ] {
        assert!(!text.contains("sk-evalrun-secret"), "{text}");
    }
    assert_eq!(read_json(&json)["model"]["profile"], "keyed");
    // Azure-style `api-key` header.
    let azure = run_in(
        &repo_root(),
        &[
            "eval",
            "run",
            &set,
            "--stdio",
            &target,
            "--base-url",
            &model.url,
            "--model",
            "azure",
        ],
        &[("MCPSPEC_EVALRUN_TEST_KEY", "sk-evalrun-secret-1234567890")],
    );
    assert_eq!(azure.code, 0, "{azure:?}");
    assert!(!azure.all_output().contains("sk-evalrun-secret"));
}

#[test]
fn unreachable_model_api_exits_4() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), FAULT_SET);
    let target = stdio_target(&[]);
    // Port 9 (discard) on 127.0.0.1: nothing listens.
    let r = run(&[
        "eval",
        "run",
        &set,
        "--stdio",
        &target,
        "--model",
        "local",
        "--base-url",
        "http://127.0.0.1:9/v1",
    ]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(r.stderr.contains("cannot reach the model API"), "{r:?}");
    // An MCP server that cannot start: exit 4 as well.
    let r = run(&[
        "eval",
        "run",
        &set,
        "--stdio",
        "/nonexistent/mcp-server",
        "--model",
        "local",
    ]);
    assert_eq!(r.code, 4, "{r:?}");
}

#[test]
fn ctrl_c_writes_partial_results() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("slow.eval.yaml");
    std::fs::write(
        &set,
        r#"
evalset: slow
models:
  local: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy }
tasks:
  - id: weather
    prompt: What is the current weather in Boston?
    expect: [ { calls: get_weather } ]
  - id: sleepy
    prompt: Sleep for 20000 milliseconds, then return.
    expect: [ { calls: slow } ]
"#,
    )
    .unwrap();
    let model = ModelServer::start(&[]);
    let json = dir.path().join("partial.json");
    let child = Command::new(common::mcpspec())
        .args([
            "eval",
            "run",
            set.to_str().unwrap(),
            "--stdio",
            &stdio_target(&[]),
            "--model",
            "local",
            "--base-url",
            &model.url,
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let v = read_json(&json);
    assert_eq!(v["partial"], true);
    assert_eq!(successes(task(&v, "weather")), 1);
    assert_eq!(task(&v, "sleepy")["trials"].as_array().unwrap().len(), 0);
}

#[test]
fn eval_sets_are_validated_with_positions_and_have_a_schema() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.eval.yaml");
    std::fs::write(
        &bad,
        "evalset: bad\nmodels:\n  m: { api: openai, baseUrl: \"http://x/v1\", model: m, key: sk-pasted-key-123 }\ntasks:\n  - id: a\n    prompt: hi\n    expect:\n      - { noToolCall: true, maxToolCalls: 1 }\n      - calls: echo\n        args: [ { path: \"$[\", equals: 1 } ]\n",
    )
    .unwrap();
    let r = run(&["validate", bad.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{r:?}");
    let file = bad.display().to_string();
    for want in [
        format!("{file}:3:"),
        "must be `env:VARIABLE`".to_string(),
        "mixes noToolCall, maxToolCalls".to_string(),
        "invalid JSONPath `$[`".to_string(),
        ":10:".to_string(),
    ] {
        assert!(r.stderr.contains(&want), "missing {want:?}: {r:?}");
    }
    assert!(!r.all_output().contains("sk-pasted-key-123"), "{r:?}");
    // `eval run` refuses it the same way, before connecting.
    let r = run(&[
        "eval",
        "run",
        bad.to_str().unwrap(),
        "--stdio",
        "x",
        "--model",
        "m",
    ]);
    assert_eq!(r.code, 2, "{r:?}");
    // The good set validates, alone and in its folder; `run` leaves it alone.
    let ok = run(&["validate", SET]);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert!(ok.stdout.contains("(eval set)"), "{ok:?}");
    assert_eq!(run(&["validate", "tests/eval"]).code, 0);
    // The committed schema is the printed one, and the set validates against it.
    let printed = run(&["schema", "evalset"]);
    assert_eq!(printed.code, 0);
    let committed =
        std::fs::read_to_string(repo_root().join("schema/evalset.schema.json")).unwrap();
    assert_eq!(
        printed.stdout.trim_end(),
        committed.trim_end(),
        "schema/evalset.schema.json is stale: run `mcpspec schema evalset > schema/evalset.schema.json`"
    );
    let schema: Value = serde_json::from_str(&committed).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let doc: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(repo_root().join(SET)).unwrap()).unwrap();
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        !validator
            .is_valid(&serde_json::json!({"evalset": "x", "tasks": [{"id": "a", "bogus": 1}]}))
    );
}

#[test]
fn unknown_profile_is_invalid_input() {
    let r = run(&["eval", "run", SET, "--stdio", "x", "--model", "nope"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("it has: local, local-anthropic"), "{r:?}");
}

#[test]
fn jobs_run_trials_concurrently_and_tool_errors_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("jobs.eval.yaml");
    std::fs::write(
        &set,
        r#"
evalset: jobs
trials: 3
models:
  local: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy }
tasks:
  - id: weather
    prompt: What is the current weather in Boston?
    expect: [ { calls: get_weather } ]
  - id: divide-by-zero
    prompt: Divide 1 by 0 even though dividing by zero is an error.
    expect:
      - calls: divide
        args: [ { path: "$.b", equals: 0 } ]
"#,
    )
    .unwrap();
    let model = ModelServer::start(&[]);
    let (r, json) = eval(
        dir.path(),
        set.to_str().unwrap(),
        &[],
        &model,
        &["--jobs", "3"],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let v = read_json(&json);
    assert_eq!(ids(&v), ["weather", "divide-by-zero"], "set order kept");
    let divide = task(&v, "divide-by-zero");
    let indexes: Vec<u64> = divide["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, [0, 1, 2]);
    for t in divide["trials"].as_array().unwrap() {
        assert_eq!(t["toolErrors"], 1, "{t:#}");
        assert_eq!(t["toolCalls"][0]["isError"], true);
    }
}

#[test]
fn a_capability_set_reports_failures_but_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(
        dir.path(),
        &FAULT_SET.replace("evalset: faults", "evalset: faults\nkind: capability"),
    );
    let model = ModelServer::start(&["--fault", "unknown-tool:weather"]);
    let junit = dir.path().join("cap.xml");
    let (r, json) = eval(
        dir.path(),
        &set,
        &[],
        &model,
        &["--junit", junit.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "a capability set is tracked, not gated: {r:?}");
    let v = read_json(&json);
    assert_eq!(v["set"]["kind"], "capability");
    assert_eq!(successes(task(&v, "weather")), 0);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<failure"), "{xml}");
    assert_valid_junit(&junit);
}

#[test]
fn a_hung_model_api_fails_each_trial_within_the_model_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), FAULT_SET);
    let model = ModelServer::start(&["--fault", "hang:weather"]);
    let started = Instant::now();
    let (r, json) = eval(dir.path(), &set, &[], &model, &["--model-timeout", "1s"]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = read_json(&json);
    let error = task(&v, "weather")["trials"][0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(error.contains("did not answer within 1s"), "{error}");
    assert_eq!(successes(task(&v, "add")), 1, "the run went on");
    // Far below the old fixed 300 s; generous for a loaded machine.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    // The profile's `timeout` does the same; a bad one is invalid input with its position.
    let profile_set = write_set(
        dir.path(),
        &FAULT_SET.replace("maxTurns: 3 }", "maxTurns: 3, timeout: 1s }"),
    );
    let (r, json) = eval(dir.path(), &profile_set, &[], &model, &[]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        read_json(&json)
            .to_string()
            .contains("did not answer within 1s"),
        "{r:?}"
    );
    let bad = write_set(
        dir.path(),
        &FAULT_SET.replace("maxTurns: 3 }", "maxTurns: 3, timeout: soon }"),
    );
    let r = run(&["validate", &bad]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.all_output().contains("faults.eval.yaml:4:"), "{r:?}");
    assert!(
        r.all_output().contains("`timeout` of model `local`"),
        "{r:?}"
    );
}

#[test]
fn base_url_query_stays_a_query_and_errors_hide_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), FAULT_SET);
    let model = ModelServer::start(&[]);
    // Azure-style: `?api-version=` after the deployment path. Appending the API path after
    // the query would ask for `/v1` (a 404 here).
    let azure = format!("{}/v1?api-version=2024-10-21", model.url);
    let r = run(&[
        "eval",
        "run",
        &set,
        "--stdio",
        &stdio_target(&[]),
        "--model",
        "local",
        "--base-url",
        &azure,
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    // Nothing listens: the console names the host, never userinfo or query.
    let r = run(&[
        "eval",
        "run",
        &set,
        "--stdio",
        &stdio_target(&[]),
        "--model",
        "local",
        "--base-url",
        "http://alice:pw-in-userinfo@127.0.0.1:9/v1?key=sk-in-the-query",
    ]);
    assert_eq!(r.code, 4, "{r:?}");
    assert!(
        r.stderr.contains("http://127.0.0.1:9/v1/chat/completions"),
        "{r:?}"
    );
    for secret in ["pw-in-userinfo", "sk-in-the-query", "alice"] {
        assert!(!r.all_output().contains(secret), "{secret}: {r:?}");
    }
}

#[test]
fn an_unknown_model_name_is_one_setup_error() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(dir.path(), FAULT_SET);
    let model = ModelServer::start(&["--serve-model", "policy"]);
    let (r, json) = eval(dir.path(), &set, &[], &model, &["--model-name", "polcy"]);
    assert_eq!(r.code, 4, "{r:?}");
    assert_eq!(
        r.stderr.matches("HTTP 404").count(),
        1,
        "one message: {r:?}"
    );
    assert!(
        r.stderr.contains("The model `polcy` does not exist"),
        "{r:?}"
    );
    assert!(r.stderr.contains("profile `local`"), "{r:?}");
    assert_eq!(read_json(&json)["partial"], true);
}

#[test]
fn a_task_expecting_an_unlisted_tool_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let set = write_set(
        dir.path(),
        &format!(
            "{FAULT_SET}  - id: typo\n    prompt: What is the current weather in Oslo?\n    expect: [ {{ calls: get_wether }} ]\n"
        ),
    );
    let model = ModelServer::start(&[]);
    let (r, _) = eval(dir.path(), &set, &[], &model, &[]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("task `typo` expects tool `get_wether`, which the server does not list"),
        "{r:?}"
    );
}

/// The book's eval set (the first `yaml` block of docs/src/eval.md) passes against the
/// example server through the local model server, multi-turn `follow-up` included.
#[test]
fn the_books_eval_set_passes_with_the_local_model() {
    let dir = tempfile::tempdir().unwrap();
    let book = std::fs::read_to_string(repo_root().join("docs/src/eval.md")).unwrap();
    let yaml = book
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a yaml block in eval.md");
    let path = dir.path().join("book.eval.yaml");
    std::fs::write(&path, yaml).unwrap();
    let model = ModelServer::start(&[]);
    let (r, json) = eval(dir.path(), path.to_str().unwrap(), &[], &model, &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = read_json(&json);
    assert_eq!(successes(task(&v, "follow-up")), 5, "{v:#}");
    assert_eq!(called(task(&v, "follow-up")), ["get_weather"]);
}

#[test]
fn prices_give_an_estimated_cost_and_max_cost_stops_the_run_before_it_spends_more() {
    let dir = tempfile::tempdir().unwrap();
    let priced = FAULT_SET.replace(
        "maxTurns: 3 }",
        "maxTurns: 3, price: { input: 3, output: 15 } }",
    );
    let set = write_set(dir.path(), &priced);
    let model = ModelServer::start(&[]);
    let (r, json) = eval(dir.path(), &set, &[], &model, &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = read_json(&json);
    let (input, output) = (
        v["usage"]["inputTokens"].as_f64().unwrap(),
        v["usage"]["outputTokens"].as_f64().unwrap(),
    );
    assert!(input > 0.0 && output > 0.0, "{v:#}");
    let cost = v["usage"]["costUsd"].as_f64().unwrap();
    assert!(
        (cost - (input * 3.0 + output * 15.0) / 1e6).abs() < 1e-12,
        "{v:#}"
    );
    assert!(task(&v, "weather")["usage"]["costUsd"].as_f64().unwrap() > 0.0);
    assert_eq!(v["model"]["price"]["output"], 15.0);
    assert!(r.stdout.contains("est. cost $"), "{r:?}");
    // A cap below one request's worst case: nothing is spent, what ran is written, exit 5
    // (a stop of its own, not a failed trial).
    let (r, json) = eval(dir.path(), &set, &[], &model, &["--max-cost", "0.000001"]);
    assert_eq!(r.code, 5, "{r:?}");
    assert!(
        r.stderr
            .contains("stopped before spending more than --max-cost"),
        "{r:?}"
    );
    let v = read_json(&json);
    assert_eq!(v["partial"], true);
    assert_eq!(v["usage"]["inputTokens"], 0, "no request was sent: {v:#}");
    // A cap that one request fits under and the whole set does not: it stops in between.
    let one = cost / 4.0;
    let (r, json) = eval(
        dir.path(),
        &set,
        &[],
        &model,
        &["--max-cost", &format!("{one}")],
    );
    assert_eq!(r.code, 5, "{r:?}");
    let spent = read_json(&json)["usage"]["costUsd"].as_f64().unwrap();
    assert!(spent <= one, "spent {spent} over the cap {one}");
    // No prices: the cap cannot be kept, a usage error.
    let plain = write_set(dir.path(), FAULT_SET);
    let (r, _) = eval(dir.path(), &plain, &[], &model, &["--max-cost", "1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("add `price:"), "{r:?}");
}
