//! Sampling answered by a real model profile (`sampling: [{profile: NAME}]`, profiles from
//! `mcpspec run --models FILE`), offline: the project's local model server on 127.0.0.1
//! plays the model, over both model APIs, in both eras, with and without tools in the
//! server's request; a model that cannot answer errors the step, naming the profile. Its
//! answers are recorded (`--record-models`, secrets and key masked) and replayed with the
//! model server stopped and no key (`--replay-models`); its tokens and cost are reported, and
//! `--max-cost` refuses to ask it past the cap.

mod common;

use common::model_server::ModelServer;
use common::{read_json, repo_root, run_in, stdio_target};

const SCENARIO: &str = r#"scenario: sampling-by-a-model
client:
  capabilities:
    sampling: {tools: true}
  sampling:
    - profile: PROFILE
steps:
  - name: a summary by the model
    request:
      method: tools/call
      params: {name: summarize, arguments: {text: "{{ story }}"}}
    expect:
      - isError: false
      - path: "$.content[0].text"
        equals: "summary by policy: I can answer that directly: Summarise: {{ story }}"
  - name: the model calls the server's sampling tool, then answers with its result
    request:
      method: tools/call
      params: {name: sample_with_tools, arguments: {city: Oslo}}
    expect:
      - path: "$.content[0].text"
        equals: "answer by policy: Here is what I found: Sunny, 21°C in Oslo (after 1 tool round(s))"
      - asked: sampling/createMessage
        count: 2
"#;

/// Scenario and models files in a temporary folder, the scenario answering with `profile`.
fn files(model: &ModelServer, profile: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let models = format!(
        "models:\n  local:\n    api: openai\n    baseUrl: {url}/v1\n    model: policy\n  local-anthropic:\n    api: anthropic\n    baseUrl: {url}\n    model: policy\n  keyed:\n    api: openai\n    baseUrl: {url}/v1\n    model: policy\n    key: env:MCPSPEC_TEST_SAMPLING_KEY_UNSET\n  paid:\n    api: openai\n    baseUrl: {url}/v1\n    model: policy\n    key: env:MCPSPEC_TEST_SAMPLING_KEY\n    price: {{input: 3, output: 15}}\n",
        url = model.url
    );
    std::fs::write(dir.path().join("models.yaml"), models).unwrap();
    std::fs::write(
        dir.path().join("s.yaml"),
        SCENARIO.replace("PROFILE", profile),
    )
    .unwrap();
    dir
}

fn run(
    dir: &tempfile::TempDir,
    extra: &[&str],
    with_models: bool,
) -> (common::Run, serde_json::Value) {
    let (run, report) = invoke(
        dir,
        "env:MCPSPEC_TEST_SAMPLING_STORY",
        false,
        extra,
        with_models,
    );
    assert!(!report.is_null(), "no report: {run:?}");
    (run, report)
}

#[test]
fn a_model_profile_answers_in_both_eras_over_both_apis() {
    let model = ModelServer::start(&[]);
    for profile in ["local", "local-anthropic"] {
        let dir = files(&model, profile);
        let (run, report) = run(&dir, &[], true);
        assert_eq!(run.code, 0, "{profile}: {run:?}");
        assert_eq!(report["suites"].as_array().map(Vec::len), Some(2));
        // The model echoed the secret it was sent: masked like everything else.
        let text = std::fs::read_to_string(dir.path().join("result.json")).unwrap();
        assert!(
            !text.contains("the-secret-story-42"),
            "{profile}: a secret leaked"
        );
        assert!(!run.all_output().contains("the-secret-story-42"));
        assert!(
            text.contains("answered by the model profile"),
            "{profile}: the transcript says who answered"
        );
    }
}

#[test]
fn a_model_that_cannot_answer_errors_the_step_naming_the_profile() {
    let model = ModelServer::start(&["--fault", "server-error"]);
    // A missing key, an HTTP error after retries (bounded by the step's timeout), a
    // profile the file does not declare, no --models at all.
    let cases: [(&str, &[&str], &str); 4] = [
        (
            "keyed",
            &[],
            "the model profile `keyed` takes its API key from the environment variable MCPSPEC_TEST_SAMPLING_KEY_UNSET",
        ),
        ("local", &["--timeout", "3s"], "the model profile `local`"),
        (
            "nope",
            &[],
            "names the model profile `nope`, which `--models` does not declare",
        ),
        ("local", &["--models"], "the run has no model profiles"),
    ];
    for (profile, extra, want) in cases {
        let dir = files(&model, profile);
        let with_models = extra != ["--models"];
        let extra: &[&str] = if with_models { extra } else { &[] };
        let started = std::time::Instant::now();
        let (run, report) = run(&dir, extra, with_models);
        assert_eq!(run.code, 1, "{profile}: {run:?}");
        assert!(started.elapsed().as_secs() < 40, "{profile}: took too long");
        let step = &report["suites"][0]["steps"][0];
        assert_eq!(step["outcome"]["status"], "error", "{profile}: {step}");
        let message = step["outcome"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(want), "{profile}: {message}");
    }
}

/// A key the `paid` profile reads from the environment (when set).
const KEY: &str = "sk-test-sampling-key-0123456789abcdef";

/// `mcpspec run` of `dir`'s scenario with `story` and `extra` (the `paid` profile's key
/// in the environment when `keyed`): its output and the JSON report.
fn run_story(
    dir: &tempfile::TempDir,
    story: &str,
    keyed: bool,
    extra: &[&str],
) -> (common::Run, serde_json::Value) {
    invoke(dir, story, keyed, extra, true)
}

/// `mcpspec run` of `dir`'s scenario in both eras, `story` its `--set story=`, `--timeout
/// 10s` unless `extra` gives one, `--models` when `with_models`: its output and the JSON
/// report (null when none was written).
fn invoke(
    dir: &tempfile::TempDir,
    story: &str,
    keyed: bool,
    extra: &[&str],
    with_models: bool,
) -> (common::Run, serde_json::Value) {
    let json = dir.path().join("result.json");
    let _ = std::fs::remove_file(&json);
    let scenario = dir.path().join("s.yaml");
    let models = dir.path().join("models.yaml");
    let target = stdio_target(&["--interactive"]);
    let set = format!("story={story}");
    let mut args = vec![
        "run",
        scenario.to_str().unwrap(),
        "--stdio",
        &target,
        "--era",
        "legacy",
        "--era",
        "2026-07-28",
        "--set",
        &set,
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(extra);
    if !extra.contains(&"--timeout") {
        args.extend(["--timeout", "10s"]);
    }
    if with_models {
        args.extend(["--models", models.to_str().unwrap()]);
    }
    let mut env = vec![("MCPSPEC_TEST_SAMPLING_STORY", "the-secret-story-42")];
    if keyed {
        env.push(("MCPSPEC_TEST_SAMPLING_KEY", KEY));
    }
    let run = run_in(&repo_root(), &args, &env);
    let report = if json.exists() {
        read_json(&json)
    } else {
        serde_json::Value::Null
    };
    (run, report)
}

/// Each step's status, suite by suite.
fn statuses(report: &serde_json::Value) -> Vec<String> {
    report["suites"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["steps"].as_array().cloned().unwrap_or_default())
        .map(|step| step["outcome"]["status"].to_string())
        .collect()
}

#[test]
fn recorded_model_answers_replay_offline_with_no_key_and_the_same_results() {
    let model = ModelServer::start(&[]);
    let dir = files(&model, "paid");
    let tape = dir.path().join("sampling.json");
    let tape_arg = tape.to_str().unwrap().to_string();

    // Recorded with a secret story: the recording masks it, and holds no key.
    let secret_tape = dir.path().join("secret.json");
    let (run, _) = run_story(
        &dir,
        "env:MCPSPEC_TEST_SAMPLING_STORY",
        true,
        &["--record-models", secret_tape.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let text = std::fs::read_to_string(&secret_tape).expect("a recording");
    assert!(text.contains("mcpspec-sampling-recording/1"), "{text}");
    assert!(
        !text.contains("the-secret-story-42"),
        "a secret leaked: {text}"
    );
    assert!(!text.contains(KEY), "the key leaked: {text}");

    let (recorded, report) =
        run_story(&dir, "a-plain-story", true, &["--record-models", &tape_arg]);
    assert_eq!(recorded.code, 0, "{recorded:?}");
    assert!(
        recorded.stderr.contains("recorded") && recorded.stderr.contains("sampling.json"),
        "{recorded:?}"
    );
    // Tokens and their cost at the profile's prices, in the report and the summary.
    let models = &report["models"][0];
    assert_eq!(models["profile"], "paid", "{report}");
    assert!(models["requests"].as_u64().unwrap_or(0) >= 3, "{models}");
    assert!(models["inputTokens"].as_u64().unwrap_or(0) > 0, "{models}");
    let cost = models["costUsd"].as_f64().expect("a cost");
    assert!(cost > 0.0, "{models}");
    assert!(
        recorded.all_output().contains("Sampling model `paid`"),
        "{recorded:?}"
    );

    // The model server stopped, no key: the same results from the recording.
    drop(model);
    let (replayed, again) = run_story(
        &dir,
        "a-plain-story",
        false,
        &["--replay-models", &tape_arg],
    );
    assert_eq!(replayed.code, 0, "{replayed:?}");
    assert_eq!(statuses(&again), statuses(&report));
    assert_eq!(
        again["models"], report["models"],
        "the recorded tokens count"
    );

    // A request the recording lacks: the step errors, naming what is missing.
    let (missing, report) = run_story(
        &dir,
        "another-story",
        false,
        &["--replay-models", &tape_arg],
    );
    assert_eq!(missing.code, 1, "{missing:?}");
    let step = &report["suites"][0]["steps"][0];
    assert_eq!(step["outcome"]["status"], "error", "{step}");
    let message = step["outcome"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("no recorded answer of the model profile `paid`"),
        "{message}"
    );
}

#[test]
fn max_cost_refuses_to_ask_the_model_past_the_cap() {
    let model = ModelServer::start(&[]);
    let dir = files(&model, "paid");
    let (run, report) = run_story(&dir, "a-plain-story", true, &["--max-cost", "0"]);
    assert_eq!(run.code, 1, "{run:?}");
    for suite in report["suites"].as_array().expect("suites") {
        let step = &suite["steps"][0];
        assert_eq!(step["outcome"]["status"], "error", "{step}");
        let message = step["outcome"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("stopped before spending more than --max-cost"),
            "{message}"
        );
    }
    // With a cap the model's spend fits under, it answers.
    let (run, _) = run_story(&dir, "a-plain-story", true, &["--max-cost", "5"]);
    assert_eq!(run.code, 0, "{run:?}");
    // A cap needs the prices of the profile asked: its steps error, saying so.
    std::fs::write(
        dir.path().join("s.yaml"),
        SCENARIO.replace("PROFILE", "local"),
    )
    .unwrap();
    let (run, report) = run_story(&dir, "a-plain-story", false, &["--max-cost", "1"]);
    assert_eq!(run.code, 1, "{run:?}");
    let message = report["suites"][0]["steps"][0]["outcome"]["message"].to_string();
    assert!(
        message.contains("--max-cost needs the model's prices"),
        "{message}"
    );
}
