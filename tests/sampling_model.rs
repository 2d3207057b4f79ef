//! Sampling answered by a real model profile (`sampling: [{profile: NAME}]`, profiles from
//! `mcpspec run --models FILE`), offline: the project's local model server on 127.0.0.1
//! plays the model, over both model APIs, in both eras, with and without tools in the
//! server's request; a model that cannot answer errors the step, naming the profile.

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
        "models:\n  local:\n    api: openai\n    baseUrl: {url}/v1\n    model: policy\n  local-anthropic:\n    api: anthropic\n    baseUrl: {url}\n    model: policy\n  keyed:\n    api: openai\n    baseUrl: {url}/v1\n    model: policy\n    key: env:MCPSPEC_TEST_SAMPLING_KEY_UNSET\n",
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
    let json = dir.path().join("result.json");
    let scenario = dir.path().join("s.yaml");
    let models = dir.path().join("models.yaml");
    let target = stdio_target(&["--interactive"]);
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
        "story=env:MCPSPEC_TEST_SAMPLING_STORY",
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
    let run = run_in(
        &repo_root(),
        &args,
        &[("MCPSPEC_TEST_SAMPLING_STORY", "the-secret-story-42")],
    );
    assert!(json.exists(), "no report: {run:?}");
    let report = read_json(&json);
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
