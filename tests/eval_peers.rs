//! The peers' features, from the CLI against the bundled model server: word-order and
//! date-time critics, expectations captured from a run (`eval expect`), precision and
//! recall of tool selection.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};

use common::model_server::ModelServer;
use common::{read_json, stdio_target};
use serde_json::{Value, json};

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

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn task<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("task {id} in {v:#}"))
}

const CRITICS: &str = r#"
evalset: words-and-dates
models:
  local: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy }
tasks:
  - id: words-in-any-order
    prompt: Return the text 'weather Boston' unchanged.
    expect:
      - calls: echo
        critics:
          - { path: "$.text", similarWords: "Boston weather" }
  - id: not-similar-in-order
    prompt: Return the text 'weather Boston' unchanged.
    expect:
      - calls: echo
        critics:
          - { path: "$.text", similar: "Boston weather" }
  - id: same-instant
    prompt: Return the text '2026-03-01T10:30:00+01:00' unchanged.
    expect:
      - calls: echo
        critics:
          - { path: "$.text", datetime: "2026-03-01T09:00:00Z", within: 1h }
  - id: too-far
    prompt: Return the text '2026-03-01T12:00:00Z' unchanged.
    expect:
      - calls: echo
        critics:
          - { path: "$.text", datetime: "2026-03-01", within: 1h }
"#;

#[test]
fn word_order_and_datetime_critics() {
    let dir = tempfile::tempdir().unwrap();
    let set = write(dir.path(), "c.eval.yaml", CRITICS);
    let model = ModelServer::start(&[]);
    let (r, json) = eval(dir.path(), &set, &[], &model, &[]);
    assert_eq!(r.code, 1, "{r:?}");
    let v = read_json(&json);
    let critic = |id: &str| task(&v, id)["trials"][0]["expectations"][0]["critics"][0].clone();
    let words = critic("words-in-any-order");
    assert_eq!(words["matched"], true, "{words:#}");
    assert_eq!(words["detail"], "word similarity 1.00 ≥ 0.80");
    assert_eq!(critic("not-similar-in-order")["matched"], false);
    let same = critic("same-instant");
    assert_eq!(
        (same["matched"].clone(), same["detail"].clone()),
        (json!(true), json!("off by 30m"))
    );
    let far = critic("too-far");
    assert_eq!(
        (far["matched"].clone(), far["detail"].clone()),
        (json!(false), json!("off by 12h"))
    );
    // A sloppy model (strings one character short): the date-time no longer parses.
    let model = ModelServer::start(&["--fault", "sloppy-args"]);
    let (_, json) = eval(dir.path(), &set, &[], &model, &[]);
    let v = read_json(&json);
    let same = &task(&v, "same-instant")["trials"][0]["expectations"][0]["critics"][0];
    assert_eq!(same["detail"], "not a date or date-time", "{same:#}");
    // Bad input: an unparsable `datetime` and `within`, a misplaced `within`.
    let bad = CRITICS
        .replace(
            "datetime: \"2026-03-01\", within: 1h",
            "datetime: \"March 1\", within: soon",
        )
        .replace(
            "similarWords: \"Boston weather\" }",
            "similarWords: \"Boston weather\", within: 1h }",
        );
    let bad = write(dir.path(), "bad.eval.yaml", &bad);
    let (r, _) = eval(dir.path(), &bad, &[], &model, &[]);
    assert_eq!(r.code, 2, "{r:?}");
    for want in [
        "`datetime: March 1` is not a date or date-time",
        "`within` of a datetime critic",
        "`within` applies only to a `datetime` critic",
    ] {
        assert!(r.stderr.contains(want), "{want}: {r:?}");
    }
    assert!(r.stderr.contains("bad.eval.yaml:"), "file:line:col: {r:?}");
}

#[test]
fn eval_expect_writes_the_calls_made_as_expectations() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&[]);
    let (r, json) = eval(dir.path(), "tests/eval/example.eval.yaml", &[], &model, &[]);
    assert_eq!(r.code, 0, "{r:?}");
    let out = dir.path().join("captured.yaml");
    let r = common::run(&[
        "eval",
        "expect",
        json.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    for want in [
        "  - id: \"weather-boston\"\n    # from trial 1\n    expect:\n      - calls: \"get_weather\"\n        args:\n          - { path: \"$.city\", equals: \"Boston\" }\n",
        "          - { path: \"$.a\", equals: 2.0 }\n          - { path: \"$.b\", equals: 3.0 }\n",
        "  - id: \"greeting-no-tool\"\n    # from trial 1\n    expect:\n      - noToolCall: true\n",
    ] {
        assert!(text.contains(want), "{want}\n--- in ---\n{text}");
    }
    // With the prompts put back, the captured expectations are a set that passes.
    let prompts = [
        ("weather-boston", "What is the current weather in Boston?"),
        (
            "add-numbers",
            "Add the numbers 2 and 3 and give me the sum.",
        ),
        ("echo-text", "Return the text 'hello world' unchanged."),
        (
            "greeting-no-tool",
            "Write a friendly greeting for the team.",
        ),
    ];
    let mut set = String::from(
        "evalset: captured\nmodels:\n  local: { api: openai, baseUrl: \"http://127.0.0.1:9/v1\", model: policy }\n",
    );
    let mut body = text.clone();
    for (id, prompt) in prompts {
        body = body.replace(
            &format!("  - id: \"{id}\"\n"),
            &format!("  - id: \"{id}\"\n    prompt: \"{prompt}\"\n"),
        );
    }
    set.push_str(&body);
    let set = write(dir.path(), "captured.eval.yaml", &set);
    let (r, _) = eval(dir.path(), &set, &[], &model, &[]);
    assert_eq!(r.code, 0, "{r:?}");
    // To stdout; a file that is no results file: exit 2.
    let r = common::run(&["eval", "expect", json.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .starts_with("# Expectations captured by `mcpspec eval expect`"),
        "{r:?}"
    );
    let r = common::run(&["eval", "expect", &set]);
    assert_eq!(r.code, 2, "{r:?}");
}

#[test]
fn tool_selection_precision_and_recall_per_tool() {
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(&[]);
    // echo's description now claims the weather: it takes the weather prompts.
    let (r, json) = eval(
        dir.path(),
        "tests/eval/example.eval.yaml",
        &["echo-claims-weather"],
        &model,
        &[],
    );
    assert_eq!(r.code, 1, "{r:?}");
    let v = read_json(&json);
    let by_tool = |name: &str| {
        v["toolSelection"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["tool"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {v:#}"))
    };
    assert_eq!(
        by_tool("add"),
        json!({"tool": "add", "truePositives": 2, "falsePositives": 0, "falseNegatives": 0, "precision": 1.0, "recall": 1.0})
    );
    assert_eq!(
        by_tool("get_weather"),
        json!({"tool": "get_weather", "truePositives": 0, "falsePositives": 0, "falseNegatives": 2, "recall": 0.0})
    );
    let echo = by_tool("echo");
    assert_eq!(
        (echo["falsePositives"].clone(), echo["precision"].clone()),
        (json!(2), json!(0.0)),
        "{echo:#}"
    );
    assert!(r.stdout.contains("tool selection (per trial):"), "{r:?}");
    assert!(
        r.stdout
            .contains("  add          precision 1.00 (2/2)  recall 1.00 (2/2)"),
        "{r:?}"
    );
    assert!(
        r.stdout
            .contains("  get_weather  precision -  recall 0.00 (0/2)"),
        "{r:?}"
    );
}

const WARN: &str = r#"
evalset: warn-band
pass: majority
trials: 3
judge: grader
models:
  local: { api: openai, baseUrl: "http://127.0.0.1:9/v1", model: policy }
  grader: { api: anthropic, baseUrl: "http://127.0.0.1:9", model: judge }
tasks:
  - id: weather-city
    prompt: What is the current weather in Boston?
    expect:
      - calls: get_weather
        critics:
          - { path: "$.city", similar: Boston, threshold: 0.8, weight: 2 }
          - { path: "$.city", exact: Boston }
        threshold: 0.6
        warnThreshold: 0.9
  - id: weather-answer
    prompt: What is the current weather in Boston?
    pass: all
    expect:
      - answer:
          judge: The answer names "Boston" and the "barometric pressure".
          threshold: 0.5
          warnThreshold: 0.9
"#;

#[test]
fn warn_band_majority_rule_and_spread() {
    let dir = tempfile::tempdir().unwrap();
    let set = write(dir.path(), "warn.eval.yaml", WARN);
    // Clean arguments: the critics score 1, above the warn band; the judge gives 0.5 (one of
    // two phrases), passing within the band.
    let model = ModelServer::start(&[]);
    let judge = ["--judge-base-url", model.url.as_str()];
    let (r, json) = eval(dir.path(), &set, &[], &model, &judge);
    assert_eq!(r.code, 0, "a warning does not fail the run: {r:?}");
    assert!(
        r.stdout
            .contains("  PASS weather-city  3/3 trials (majority)  calls 1.0")
            && r.stdout.contains("args 1.00 ± 0.00"),
        "{r:?}"
    );
    assert!(
        r.stdout
            .contains("  WARN weather-answer  3/3 trials  calls"),
        "{r:?}"
    );
    assert!(r.stdout.contains("judge 0.50 ± 0.00"), "{r:?}");
    assert!(
        r.stdout.contains("judge score 0.50 < warnThreshold 0.90"),
        "{r:?}"
    );
    let v = read_json(&json);
    assert_eq!(task(&v, "weather-city")["pass"], "majority");
    assert!(
        task(&v, "weather-answer").get("pass").is_none(),
        "`all` is not written"
    );
    let e = &task(&v, "weather-answer")["trials"][0]["expectations"][0];
    assert_eq!(
        (e["passed"].clone(), e["warning"].clone()),
        (json!(true), json!("judge score 0.50 < warnThreshold 0.90")),
        "{e:#}"
    );
    // Sloppy arguments: `Bosto` scores 0.67, passing within the band (the answer about
    // `Bosto` fails its judge: exit 1).
    let model = ModelServer::start(&["--fault", "sloppy-args"]);
    let judge = ["--judge-base-url", model.url.as_str()];
    let (r, _) = eval(dir.path(), &set, &[], &model, &judge);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains("  FAIL weather-answer  0/3 trials"),
        "{r:?}"
    );
    assert!(
        r.stdout
            .contains("  WARN weather-city  3/3 trials (majority)"),
        "{r:?}"
    );
    assert!(
        r.stdout
            .contains("calls get_weather: argument score 0.67 < warnThreshold 0.90"),
        "{r:?}"
    );
    // A warnThreshold below the pass threshold, or without critics: invalid input.
    let bad = WARN.replace("warnThreshold: 0.9\n  - id", "warnThreshold: 0.5\n  - id");
    let bad = write(dir.path(), "bad-warn.eval.yaml", &bad);
    let (r, _) = eval(dir.path(), &bad, &[], &model, &judge);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("`warnThreshold: 0.5` is below the pass `threshold` (0.6)"),
        "{r:?}"
    );
}
