//! `examples/ci/eval-pipeline.sh`, the CI recipe of the eval chapter, run as shown there:
//! contract diff → tasks at risk → eval run on base and candidate → paired comparison,
//! with the workspace's binaries on PATH and the local model server on a free port.
// Unix only: the pipeline runs through `sh`.
#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::Command;

use common::{assert_valid_junit, repo_root};

/// The script with `env` set, its reports in `out`: (exit code, stdout + stderr).
fn pipeline(out: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let bins = common::example_server()
        .parent()
        .expect("target dir")
        .to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bins).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let output = Command::new("sh")
        .arg("examples/ci/eval-pipeline.sh")
        .current_dir(repo_root())
        .env("PATH", path)
        .env("OUT", out)
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("sh runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

#[test]
fn a_tool_the_model_misuses_fails_the_pipeline_at_compare() {
    let out = tempfile::tempdir().unwrap();
    let (code, text) = pipeline(out.path(), &[]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("noToolCall task now calls send_greeting"),
        "{text}"
    );
    assert!(text.contains("REGRESSION: 1 task(s) flagged"), "{text}");
    // A tool was added, so any tool-calling or noToolCall task may lose or gain prompts
    // (the default `--affected-scope wide`): the whole set ran, on both sides.
    assert_eq!(text.matches("3 of 3 task(s) selected").count(), 2, "{text}");
    assert!(
        text.contains("every tool-calling and noToolCall task is at risk"),
        "{text}"
    );
    for report in [
        "contract-diff.xml",
        "eval-base.xml",
        "eval-candidate.xml",
        "eval-compare.xml",
    ] {
        assert_valid_junit(&out.path().join(report));
    }
}

#[test]
fn no_change_a_model_reads_skips_the_eval() {
    let out = tempfile::tempdir().unwrap();
    let (code, text) = pipeline(out.path(), &[("CAND_CMD", "mcpspec-example-server")]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("no change affects models: eval skipped"),
        "{text}"
    );
    assert!(!out.path().join("eval-base.json").exists());
}

#[test]
fn a_breaking_change_stops_the_pipeline_at_the_contract_diff() {
    let out = tempfile::tempdir().unwrap();
    let (code, text) = pipeline(
        out.path(),
        &[("CAND_CMD", "mcpspec-example-server --change remove-tool")],
    );
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("contract diff failed (exit 1)"), "{text}");
    assert!(!out.path().join("eval-base.json").exists());
}

/// CI without a key: the committed recording replays against the candidate — no model
/// server started, no key, both APIs — and passes when the candidate serves what was
/// recorded.
#[test]
fn replay_runs_the_set_with_no_key_and_no_model_server() {
    let out = tempfile::tempdir().unwrap();
    let (code, text) = pipeline(
        out.path(),
        &[
            ("REPLAY", "examples/ci/recording"),
            ("MODEL", "local local-anthropic"),
            ("CAND_CMD", "mcpspec-example-server"),
        ],
    );
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        text.matches("model answers replayed from examples/ci/recording")
            .count(),
        2,
        "{text}"
    );
    assert!(!out.path().join("model-server.log").exists(), "{text}");
    assert_valid_junit(&out.path().join("eval-candidate.xml"));
}

/// A candidate whose tools read differently: the recording cannot answer for it (exit 2),
/// and the script says how to re-record.
#[test]
fn replay_of_a_changed_contract_asks_to_re_record() {
    let out = tempfile::tempdir().unwrap();
    let (code, text) = pipeline(out.path(), &[("REPLAY", "examples/ci/recording")]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("added `send_greeting`"), "{text}");
    assert!(
        text.contains("re-record it with the model: RECORD=examples/ci/recording"),
        "{text}"
    );
}

/// Same tools, another tool result: the replay fails those trials with no model (exit 1).
#[test]
fn replay_catches_a_tool_that_now_answers_otherwise() {
    let out = tempfile::tempdir().unwrap();
    let (code, text) = pipeline(
        out.path(),
        &[
            ("REPLAY", "examples/ci/recording"),
            (
                "CAND_CMD",
                "mcpspec-example-server --change add-output-property",
            ),
        ],
    );
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("the server's tool results differ from the recording"),
        "{text}"
    );
}

/// Several models: each side runs both, compare pairs base and candidate per model.
#[test]
fn several_models_are_compared_per_model() {
    let out = tempfile::tempdir().unwrap();
    let (code, text) = pipeline(out.path(), &[("MODEL", "local local-anthropic")]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(
        text.matches("REGRESSION: 1 task(s) flagged").count(),
        2,
        "{text}"
    );
    for m in ["local", "local-anthropic"] {
        assert_valid_junit(&out.path().join(format!("eval-compare-{m}.xml")));
    }
}

/// The committed recording is what the pipeline records today: a change to the example
/// server or the model server that changes an exchange fails here — re-record it as
/// docs/src/eval.md says (RECORD=examples/ci/recording … examples/ci/eval-pipeline.sh).
#[test]
fn the_committed_recording_is_current() {
    let out = tempfile::tempdir().unwrap();
    let rec = out.path().join("recording");
    let (code, text) = pipeline(
        out.path(),
        &[
            ("RECORD", rec.to_str().unwrap()),
            ("MODEL", "local local-anthropic"),
            ("CAND_CMD", "mcpspec-example-server"),
        ],
    );
    assert_eq!(code, 0, "{text}");
    let committed = repo_root().join("examples/ci/recording");
    // Everything but when it was recorded, by which version, and the local model server's
    // (free, so changing) port.
    let normal = |path: &Path| {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        if let Some(profiles) = v["profiles"].as_object_mut() {
            for p in profiles.values_mut() {
                p["recorded"] = serde_json::Value::Null;
                p["mcpspec"] = serde_json::Value::Null;
                p["baseUrl"] = serde_json::Value::Null;
            }
        }
        v
    };
    for file in [
        "recording.json",
        "local/weather-in-boston.json",
        "local/weather-in-celsius.json",
        "local/small-talk.json",
        "local-anthropic/weather-in-boston.json",
        "local-anthropic/weather-in-celsius.json",
        "local-anthropic/small-talk.json",
    ] {
        assert_eq!(
            normal(&rec.join(file)),
            normal(&committed.join(file)),
            "examples/ci/recording/{file} is stale: re-record it (docs/src/eval.md, \"The CI pipeline\")"
        );
    }
}
