//! `eval run` against a hostile model API (the bundled model server's faults): replies too
//! large, too many tool calls at once, huge arguments, retries of failed trials, an
//! HTTP-date `Retry-After`.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};

use common::model_server::ModelServer;
use common::{read_json, stdio_target};
use serde_json::Value;

const SET: &str = r#"
evalset: limits
models:
  local: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy, maxTurns: 3 }
  tight: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy, maxCallsPerTurn: 2 }
  anthropic: { api: anthropic, baseUrl: "http://127.0.0.1:9", model: policy }
tasks:
  - id: weather
    prompt: What is the current weather in Boston?
    expect: [ { calls: get_weather } ]
  - id: echo
    prompt: Return the text 'hello world' unchanged.
    expect:
      - calls: echo
        args: [ { path: $.text, type: string } ]
"#;

fn eval(dir: &Path, model: &ModelServer, extra: &[&str]) -> (common::Run, PathBuf) {
    let set = dir.join("limits.eval.yaml");
    std::fs::write(&set, SET).unwrap();
    let json = dir.join("results.json");
    let target = stdio_target(&[]);
    let r = common::model_server::eval_run(set.to_str().unwrap(), &target, model, &json, extra);
    (r, json)
}

fn trial<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .map(|t| &t["trials"][0])
        .unwrap_or_else(|| panic!("task {id} in {v:#}"))
}

#[test]
fn a_failed_trial_records_the_retries_it_spent() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&["--fault", "server-error:weather"]);
    let (r, json) = eval(dir.path(), &model, &[]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = read_json(&json);
    let weather = trial(&v, "weather");
    assert!(
        weather["error"]
            .as_str()
            .unwrap()
            .contains("HTTP 500 after 5 attempts"),
        "{weather:#}"
    );
    assert_eq!(weather["retries"], 4, "{weather:#}");
    assert_eq!(trial(&v, "echo")["retries"], 0);
}

#[test]
fn an_http_date_retry_after_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    // The first request gets 429 with `Retry-After: <an HTTP date 3 s ahead>`.
    let model = ModelServer::start(&["--fault", "http-date-retry"]);
    let started = std::time::Instant::now();
    let (r, json) = eval(dir.path(), &model, &["--jobs", "1"]);
    assert_eq!(r.code, 0, "{r:?}");
    let v = read_json(&json);
    assert_eq!(trial(&v, "weather")["retries"], 1, "{v:#}");
    // The date has one-second resolution: at least two seconds were waited (the 0.5 s
    // backoff alone would be far less). A lower bound only; no upper one.
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_reply_with_too_many_tool_calls_fails_its_trial_with_none_executed() {
    let dir = tempfile::tempdir().unwrap();
    // Each reply that calls a tool asks for it 20 times at once.
    let model = ModelServer::start(&["--fault", "many-calls:weather"]);
    let (r, json) = eval(dir.path(), &model, &[]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = read_json(&json);
    let weather = trial(&v, "weather");
    assert_eq!(
        weather["error"],
        "the model asked for 20 tool calls in one reply, more than maxCallsPerTurn (16): none was executed",
        "{weather:#}"
    );
    assert_eq!(weather["toolCalls"].as_array().unwrap().len(), 0);
    assert_eq!(trial(&v, "echo")["success"], true, "the run went on");
    // A profile's own `maxCallsPerTurn`.
    let (r, json) = eval(dir.path(), &model, &["--model", "tight"]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = read_json(&json);
    assert!(
        trial(&v, "weather")["error"]
            .as_str()
            .unwrap()
            .contains("more than maxCallsPerTurn (2)"),
        "{v:#}"
    );
}

#[test]
fn an_oversized_reply_fails_its_trial_and_is_not_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&["--fault", "huge-reply:weather"]);
    for profile in ["local", "anthropic"] {
        let (r, json) = eval(dir.path(), &model, &["--model", profile]);
        assert_eq!(r.code, 1, "{profile}: {r:?}");
        let v = read_json(&json);
        let weather = trial(&v, "weather");
        assert!(
            weather["error"]
                .as_str()
                .unwrap()
                .starts_with("the model API's reply is larger than 4 MiB"),
            "{profile}: {weather:#}"
        );
        assert_eq!(
            trial(&v, "echo")["success"],
            true,
            "{profile}: the run went on"
        );
        assert!(
            std::fs::metadata(&json).unwrap().len() < 64 * 1024,
            "{profile}: no padding in the results"
        );
    }
}

#[test]
fn huge_arguments_are_judged_whole_and_stored_with_a_mark() {
    let dir = tempfile::tempdir().unwrap();
    // The echo call's `text` is 1 MiB.
    let model = ModelServer::start(&["--fault", "huge-args:hello"]);
    let (r, json) = eval(dir.path(), &model, &[]);
    assert_eq!(r.code, 0, "the expectation saw the whole string: {r:?}");
    let size = std::fs::metadata(&json).unwrap().len();
    assert!(size < 64 * 1024, "the results stay small: {size} bytes");
    let v = read_json(&json);
    let call = &trial(&v, "echo")["toolCalls"][0];
    let mark = call["arguments"]["$truncated"].as_str().expect("a mark");
    assert!(
        mark.starts_with("arguments of 10485")
            && mark.contains("bytes, more than the 65536 stored"),
        "{mark}"
    );
}
